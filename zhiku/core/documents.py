"""The values that flow through ingestion and retrieval.

Plain dataclasses with no behaviour beyond small derived properties, so every stage can be
tested with values built by hand.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

#: Namespace for stable segment ids: the same document, position and content give the same id.
SEGMENT_NAMESPACE = uuid.UUID("6f0c9a52-6c1e-4f1e-9a57-2b6d7f1c0a11")


def content_hash(text: str) -> str:
    """sha256 hex digest of ``text`` (UTF-8); the identity of a segment's content."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def segment_id(document_id: str, position: int, content: str) -> str:
    """Stable segment id: uuid5 over document, position and content hash."""
    return str(uuid.uuid5(SEGMENT_NAMESPACE, f"{document_id}:{position}:{content_hash(content)}"))


def child_chunk_id(parent_id: str, position: int, content: str) -> str:
    """Stable child chunk id: uuid5 over its parent segment, position and content hash."""
    return str(uuid.uuid5(SEGMENT_NAMESPACE, f"child:{parent_id}:{position}:{content_hash(content)}"))


def summary_id(segment_id_: str, content: str) -> str:
    """Stable summary id: uuid5 over its segment and content hash (never a child's id)."""
    return str(uuid.uuid5(SEGMENT_NAMESPACE, f"summary:{segment_id_}:{content_hash(content)}"))


@dataclass
class Document:
    """Text extracted from a source, with metadata such as ``source``, ``page``, ``title``."""

    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Chunk:
    """A piece of a document produced by a splitter. ``tokens`` counts the splitter's tokens."""

    content: str
    position: int
    tokens: int
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class ChildChunk:
    """A small piece of a parent segment (parent-child index): indexed in every store in its
    parent's place, so a query matches it precisely while the search returns the parent."""

    id: str
    position: int
    content: str
    tokens: int
    hash: str
    keywords: list[str] = field(default_factory=list)
    enabled: bool = True


@dataclass
class Segment:
    """The unit that is retrieved, and indexed unless it has ``children``.

    ``content`` is what is indexed (for Q&A: the question); ``answer`` is returned beside it.
    A parent segment (parent-child index) is indexed through its ``children`` instead. A
    ``summary`` (summary index) is indexed beside the segment's own points and maps back to it.
    """

    id: str
    document_id: str
    position: int
    content: str
    tokens: int
    hash: str
    keywords: list[str] = field(default_factory=list)
    answer: str | None = None
    enabled: bool = True
    metadata: dict[str, Any] = field(default_factory=dict)
    children: list[ChildChunk] = field(default_factory=list)
    #: whether ``keywords`` were given (by a user: weighted above the extracted ones, kept by a
    #: keyword rebuild) or extracted; None: given when there are any (segments made in code)
    keywords_given: bool | None = None
    summary: ChildChunk | None = None


@dataclass(frozen=True)
class ChildHit:
    """A child chunk that matched the query, with its own fused score (same scale as the hit's)."""

    id: str
    content: str
    position: int
    score: float


@dataclass
class Hit:
    """One retrieval result.

    ``score`` is the hit's relevance: the estimated probability, in ``[0, 1]``, that it is
    relevant to the query, the same for every search method and dataset (a rerank model's score
    when one ordered the hits); hits come in the order their search ranked them. ``scores`` and
    ``ranks`` hold each search method's own
    raw score and 1-based rank (``semantic``, ``full_text``, ``keyword``) where it found the segment.
    A parent-child hit is scored by its best child in each channel; ``child_chunks`` holds the
    children that matched, best first. ``summary`` is the segment's summary (summary index),
    whether the hit was found through it or through the segment.
    """

    segment_id: str
    score: float
    scores: dict[str, float] = field(default_factory=dict)
    ranks: dict[str, int] = field(default_factory=dict)
    content: str = ""
    answer: str | None = None
    document_id: str = ""
    document_name: str = ""
    dataset_id: str = ""
    position: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)
    child_chunks: list[ChildHit] = field(default_factory=list)
    summary: str | None = None
    #: The fusion's score, which ordered the hits (``score`` is the relevance); None when the
    #: hit was not fused (see :mod:`zhiku.retrieval.relevance`).
    fusion_score: float | None = None
    #: What the relevance was estimated from: ``cosine``, ``lexical`` (BM25 over the attainable).
    evidence: dict[str, float] = field(default_factory=dict)
    #: The rest of the segment's record, read by the search with the hit (so a caller showing the
    #: whole record reads nothing again): its dataset's name, token count, content hash,
    #: keywords, how often retrieval returned it (as stored) and when its row was written.
    dataset_name: str = ""
    tokens: int = 0
    hash: str = ""
    keywords: list[str] = field(default_factory=list)
    hit_count: int = 0
    created_at: datetime | None = None
