"""Index processors turn chunks into the segments that get indexed (ARCHITECTURE §5).

``transform`` is pure (chunks in, segments out); the dataset's index writes the segments to every
store, so a processor never touches a store or a session itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from zhiku.core.documents import Chunk, Segment


class IndexProcessor(Protocol):
    """``transform`` decides what is indexed (``content``) and what is returned beside it
    (``answer``); keywords are extracted by the dataset's index from the same tokens it gives
    BM25, so a segment is tokenized once."""

    doc_form: str

    def transform(self, chunks: Sequence[Chunk], document_id: str) -> list[Segment]: ...
