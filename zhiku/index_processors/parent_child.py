"""Parent-child index: a chunk is a parent segment, cut again into small child chunks.

Children are what the stores index — a short child matches a query precisely — and the search
returns their parent, which gives a reader (or a model) enough context. The parent segment is
the one Dify's segment endpoints show; its children are listed under it.
"""

from __future__ import annotations

from collections.abc import Sequence

from zhiku.core.cancellation import checkpoint
from zhiku.core.documents import (
    ChildChunk,
    Chunk,
    Document,
    Segment,
    child_chunk_id,
    content_hash,
    segment_id,
)
from zhiku.index_processors.base import IndexOutcome
from zhiku.splitters import RecursiveSplitter, TextSplitter

#: Children's size when no splitter is given, in tokens.
DEFAULT_CHILD_MAX_TOKENS = 200


def child_chunks(splitter: TextSplitter, parent_id: str, content: str) -> list[ChildChunk]:
    """The children of one parent's content, in order (editing a parent makes them again)."""
    pieces = splitter.split([Document(content)])
    return [
        ChildChunk(
            id=child_chunk_id(parent_id, position, piece.content),
            position=position,
            content=piece.content,
            tokens=piece.tokens,
            hash=content_hash(piece.content),
        )
        for position, piece in enumerate(pieces)
    ]


class ParentChildIndexProcessor:
    """``doc_form="hierarchical_model"``: chunk = parent segment; ``child_splitter`` cuts each
    parent into the children that get indexed. A parent always has at least one child."""

    doc_form = "hierarchical_model"

    def __init__(self, child_splitter: TextSplitter | None = None) -> None:
        self.child_splitter = child_splitter or RecursiveSplitter(
            max_tokens=DEFAULT_CHILD_MAX_TOKENS, chunk_overlap=0
        )

    def transform(self, chunks: Sequence[Chunk], document_id: str) -> IndexOutcome:
        segments = []
        for position, chunk in enumerate(chunks):
            checkpoint()
            parent_id = segment_id(document_id, position, chunk.content)
            segments.append(
                Segment(
                    id=parent_id,
                    document_id=document_id,
                    position=position,
                    content=chunk.content,
                    tokens=chunk.tokens,
                    hash=content_hash(chunk.content),
                    metadata=dict(chunk.metadata),
                    children=child_chunks(self.child_splitter, parent_id, chunk.content),
                )
            )
        return IndexOutcome(segments)
