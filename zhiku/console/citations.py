"""An answer's ``[n]`` markers as links to the passages they cite, for a reopened conversation
to show what the chat showed while the answer streamed (``console.js`` does the same there)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

_MARKER = re.compile(r"\[(\d+)\]")


def cited_parts(text: str, sources: Sequence[Any]) -> list[tuple[str, Mapping[str, Any] | None]]:
    """``text`` cut into pieces, each with the stored source its ``[n]`` marker cites (None for
    plain text and for a marker citing nothing stored). Sources are numbered by ``number``, the
    ``[n]`` of the answer (``position`` is the passage's place in its document)."""
    by_number = {
        str(source["number"]): source
        for source in sources
        if isinstance(source, Mapping) and source.get("number") is not None and source.get("segment_id")
    }
    parts: list[tuple[str, Mapping[str, Any] | None]] = []
    last = 0
    for match in _MARKER.finditer(text):
        cited = by_number.get(match.group(1))
        if cited is None:
            continue
        if match.start() > last:
            parts.append((text[last : match.start()], None))
        parts.append((match.group(0), cited))
        last = match.end()
    if last < len(text):
        parts.append((text[last:], None))
    return parts
