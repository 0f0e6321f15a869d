"""Index processors turn chunks into the segments that get indexed.

``transform`` never touches a store or a session: the dataset's index writes the segments to
every store, so "all stores or none" is kept in one place. A processor that calls a model per
chunk reports the chunks it could not process as :class:`ChunkFailure` instead of raising, so
the rest of the document is indexed and the failed chunks can be retried alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from zhiku.core.documents import Chunk, Segment


@dataclass(frozen=True)
class ChunkFailure:
    """A chunk a processor could not turn into segments, kept whole so it can be retried."""

    position: int
    reason: str
    content: str
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "reason": self.reason,
            "content": self.content,
            "metadata": self.metadata,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ChunkFailure:
        return cls(
            int(data["position"]), str(data["reason"]), str(data["content"]), dict(data.get("metadata") or {})
        )

    def chunk(self) -> Chunk:
        return Chunk(content=self.content, position=self.position, tokens=0, metadata=dict(self.metadata))


@dataclass
class IndexOutcome:
    segments: list[Segment]
    failures: list[ChunkFailure] = field(default_factory=list)


class IndexProcessor(Protocol):
    """``transform`` decides what is indexed (``content``) and what is returned beside it
    (``answer``); keywords are extracted by the dataset's index from the same tokens it gives
    BM25, so a segment is tokenized once."""

    doc_form: str

    def transform(self, chunks: Sequence[Chunk], document_id: str) -> IndexOutcome: ...
