"""The sparse family of the store contract (Qdrant sparse vectors, rank_bm25)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from zhiku.datasource.points.base import SegmentStore


@dataclass
class TextRecord:
    """One segment's tokens (already tokenized by the dataset's tokenizer) and its heading path."""

    id: str
    tokens: list[str]
    document_id: str
    enabled: bool = True
    #: a segment's summary (summary index): searched only when summaries are asked for
    summary: bool = False
    section: str | None = None
    #: its document's metadata values by payload key (see :mod:`zhiku.core.payload_filter`)
    metadata: Mapping[str, str | float] = field(default_factory=dict)


class FullTextStore(SegmentStore[TextRecord, Sequence[str]], Protocol):
    """BM25 over one dataset's segments.

    ``search(query_tokens, limit)`` takes the query's tokens (repeats count) and returns
    ``(segment_id, bm25)`` best first, only records sharing at least one token; the rest of the
    contract is :class:`~zhiku.datasource.points.base.SegmentStore`'s.
    """

    def attainable(self, query_tokens: Sequence[str]) -> float:
        """The most BM25 any record could score for ``query_tokens``: each at its IDF with a
        saturated term frequency (a token no record holds at the IDF of the rarest known one).
        A hit's score divided by it is the lexical evidence of :mod:`zhiku.retrieval.relevance`,
        in ``[0, 1]``."""
        ...
