"""Paragraph index: one chunk becomes one segment."""

from __future__ import annotations

from collections.abc import Sequence

from zhiku.core.documents import Chunk, Segment, content_hash, segment_id
from zhiku.index_processors.base import IndexOutcome


class ParagraphIndexProcessor:
    """Chunk = segment, with a stable id, sha256 hash, position and token count."""

    doc_form = "paragraph"

    def transform(self, chunks: Sequence[Chunk], document_id: str) -> IndexOutcome:
        segments = []
        for position, chunk in enumerate(chunks):
            segments.append(
                Segment(
                    id=segment_id(document_id, position, chunk.content),
                    document_id=document_id,
                    position=position,
                    content=chunk.content,
                    tokens=chunk.tokens,
                    hash=content_hash(chunk.content),
                    metadata=dict(chunk.metadata),
                )
            )
        return IndexOutcome(segments)
