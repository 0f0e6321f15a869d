"""Paragraph index: one chunk becomes one segment."""

from __future__ import annotations

from collections.abc import Sequence

from zhiku.core.documents import Chunk, Segment, content_hash, segment_id
from zhiku.index_processors.base import KeywordFn


class ParagraphIndexProcessor:
    """Chunk = segment, with a stable id, sha256 hash, position, token count and keywords.

    Keyword weights travel in ``metadata["keyword_weights"]`` to the keyword store; the segment's
    ``keywords`` list is what the API shows and lets users edit.
    """

    doc_form = "paragraph"

    def transform(self, chunks: Sequence[Chunk], document_id: str, keywords: KeywordFn) -> list[Segment]:
        segments = []
        for position, chunk in enumerate(chunks):
            weighted = keywords(chunk.content)
            segments.append(
                Segment(
                    id=segment_id(document_id, position, chunk.content),
                    document_id=document_id,
                    position=position,
                    content=chunk.content,
                    tokens=chunk.tokens,
                    hash=content_hash(chunk.content),
                    keywords=[word for word, _ in weighted],
                    metadata={**chunk.metadata, "keyword_weights": weighted},
                )
            )
        return segments
