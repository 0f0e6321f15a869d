"""The fenced code blocks of a Markdown page, with the example markers CONTRIBUTING.md defines.

A block runs by its language: ``python``, ``bash`` and ``toml`` (see :data:`RUNNABLE`); any other
language shows data or output. An HTML comment on the line just before the fence,
``<!-- example: skip — the reason -->``, ``<!-- example: server -->``,
``<!-- example: chat-model -->`` or several joined by commas, changes how it runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

RUNNABLE = frozenset({"python", "bash", "toml"})
MARKERS = frozenset({"skip", "server", "chat-model"})

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_MARKER = re.compile(r"^\s*<!--\s*example:\s*(?P<body>.*?)\s*-->\s*$")
_SKIP = re.compile(r"^skip\b\s*[—–:-]*\s*(?P<reason>.*)$", re.S)


@dataclass(frozen=True)
class Block:
    """One fenced block; ``line`` is the fence's line (1-based), ``first_line`` its code's."""

    path: Path
    line: int
    language: str
    text: str
    markers: frozenset[str] = frozenset()
    skip_reason: str = ""
    problems: tuple[str, ...] = field(default=())

    @property
    def where(self) -> str:
        """``file:line`` of the fence, the file relative to the working directory when inside it."""
        shown = self.path.relative_to(Path.cwd()) if self.path.is_relative_to(Path.cwd()) else self.path
        return f"{shown}:{self.line}"

    @property
    def first_line(self) -> int:
        return self.line + 1

    @property
    def runs(self) -> bool:
        return self.language in RUNNABLE and "skip" not in self.markers


def read_blocks(path: Path, text: str | None = None) -> list[Block]:
    """Every fenced block of the page at ``path`` in order (``text``: its content, if read)."""
    lines = (path.read_text(encoding="utf-8") if text is None else text).splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        end = _closing(lines, index, opening.group("fence"))
        indent = len(opening.group("indent"))
        body = [_dedent(line, indent) for line in lines[index + 1 : end]]
        language = (opening.group("info").strip().split() or [""])[0].lower().lstrip(".{")
        marker = _MARKER.match(lines[index - 1]) if index > 0 else None
        blocks.append(_block(path, index + 1, language, "\n".join(body) + "\n", marker))
        index = end + 1
    return blocks


def _closing(lines: list[str], start: int, fence: str) -> int:
    """The line index of the fence closing the one at ``start`` (the page's end if none)."""
    for index in range(start + 1, len(lines)):
        stripped = lines[index].strip()
        if stripped.startswith(fence[0] * len(fence)) and set(stripped) == {fence[0]}:
            return index
    return len(lines)


def _dedent(line: str, indent: int) -> str:
    """A block inside a list is indented like its fence: that much indentation comes off."""
    width = len(line) - len(line.lstrip(" "))
    return line[min(width, indent) :]


def _block(path: Path, line: int, language: str, text: str, marker: re.Match[str] | None) -> Block:
    if marker is None:
        return Block(path, line, language, text)
    body = marker.group("body")
    skip = _SKIP.match(body)
    if skip is not None:  # the rest of the comment is the reason, commas and all
        reason = (skip.group("reason") or "").strip()
        problems = [] if reason else ["`skip` needs a reason: <!-- example: skip — why it cannot run -->"]
        return Block(path, line, language, text, frozenset({"skip"}), reason, tuple(problems))
    markers = {part.strip() for part in body.split(",")}
    problems = [
        f"unknown example marker {part!r} (known: {', '.join(sorted(MARKERS))})"
        for part in sorted(markers - MARKERS)
    ]
    return Block(path, line, language, text, frozenset(markers & MARKERS), problems=tuple(problems))
