"""Response models: the OpenAPI document describes every success body with them.

The views build their JSON in :mod:`zhiku.api.dify`; these models only describe it. They forbid
unknown fields, so a field added to a response without being described here (or described and
no longer sent) fails the schema checks of the API fuzzing test.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from zhiku.api.schemas import DifyRetrievalModel
from zhiku.core.retrieval_config import RetrievalConfig
from zhiku.knowledge_base.indexing.pipeline import PipelineSpec


class Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Page(Out):
    """Dify's page."""

    has_more: bool
    limit: int
    total: int
    page: int


class ExternalKnowledgeInfo(Out):
    external_knowledge_id: None
    external_knowledge_api_id: None
    external_knowledge_api_name: None
    external_knowledge_api_endpoint: None


class ExternalRetrievalModel(Out):
    top_k: int
    score_threshold: float
    score_threshold_enabled: None


class DatasetOut(Out):
    """A dataset in Dify's shape, plus zhiku's ``retrieval_config``, ``process_rule`` and
    ``segment_count``. Times are Unix seconds."""

    id: str
    name: str
    description: str
    provider: str
    permission: str
    data_source_type: str
    indexing_technique: str
    app_count: int
    document_count: int
    word_count: int
    created_by: str
    created_at: int
    updated_by: str
    updated_at: int
    embedding_model: str
    embedding_model_provider: str
    embedding_available: bool
    retrieval_model_dict: DifyRetrievalModel
    tags: list[str]
    doc_form: str
    external_knowledge_info: ExternalKnowledgeInfo
    external_retrieval_model: ExternalRetrievalModel
    retrieval_config: RetrievalConfig
    process_rule: PipelineSpec
    segment_count: int


class DatasetPage(Page):
    data: list[DatasetOut]


class DocumentOut(Out):
    id: str
    position: int
    data_source_type: str
    data_source_info: dict[str, str] | None
    dataset_process_rule_id: None
    name: str
    created_from: Literal["api", "local"]
    created_by: str
    created_at: int
    tokens: int
    indexing_status: str
    error: str | None
    enabled: bool
    disabled_at: None
    disabled_by: None
    archived: bool
    display_status: str
    word_count: int
    hit_count: int
    doc_form: str
    segment_count: int
    #: zhiku: sha256 of the document's content, to tell a duplicate before uploading it.
    content_hash: str | None


class DocumentPage(Page):
    data: list[DocumentOut]


class QueuedDocument(Out):
    """The document as queued (``waiting``), and the batch to poll; ``batch`` is null when only
    the name changed and nothing is indexed again. An upload of content the dataset already holds,
    skipped, answers with the document holding it and the batch it was last queued in."""

    document: DocumentOut
    batch: str | None
    #: zhiku: set when the dataset already held this content — ``skipped`` (``document`` is the
    #: one holding it) or ``replaced`` (that document is indexed again from this upload).
    duplicate: Literal["skipped", "replaced"] | None = None


class IndexingStatusOut(Out):
    """Dify's progress record; times are Unix seconds with fractions."""

    id: str
    indexing_status: str
    processing_started_at: float | None
    parsing_completed_at: float | None
    cleaning_completed_at: float | None
    splitting_completed_at: float | None
    completed_at: float | None
    paused_at: float | None
    error: str | None
    stopped_at: float | None
    completed_segments: int
    total_segments: int


class IndexingStatusList(Out):
    data: list[IndexingStatusOut]


class SegmentOut(Out):
    id: str
    position: int
    document_id: str
    content: str
    answer: str | None
    word_count: int
    tokens: int
    keywords: list[str]
    index_node_id: str
    index_node_hash: str
    hit_count: int
    enabled: bool
    disabled_at: None
    disabled_by: None
    status: str
    created_by: str
    created_at: int
    indexing_at: int
    completed_at: int
    error: None
    stopped_at: None
    metadata: dict[str, Any]


class SegmentPage(Page):
    data: list[SegmentOut]
    doc_form: str


class SegmentList(Out):
    data: list[SegmentOut]
    doc_form: str


class SegmentOne(Out):
    data: SegmentOut
    doc_form: str


class HitDocument(Out):
    id: str
    data_source_type: str
    name: str


class HitSegment(SegmentOut):
    document: HitDocument


class ChildChunkOut(Out):
    """Dify's child chunk of a parent segment (parent-child datasets)."""

    id: str
    segment_id: str
    position: int
    content: str
    word_count: int
    tokens: int
    index_node_id: str
    index_node_hash: str
    status: str
    created_by: str
    created_at: int
    indexing_at: int
    completed_at: int
    error: None
    stopped_at: None


class ChildChunkPage(Page):
    data: list[ChildChunkOut]


class ChildChunkOne(Out):
    data: ChildChunkOut


class HitChildChunk(Out):
    """A child chunk that matched the query, with its own fused score."""

    id: str
    content: str
    position: int
    score: float


class HitDataset(Out):
    id: str
    name: str


class Record(Out):
    """A hit as Dify's hit-testing record (``score``: its relevance, the estimated probability that
    it is relevant, 0 to 1), plus zhiku's score and rank per search method."""

    segment: HitSegment
    child_chunks: list[HitChildChunk]
    #: the segment's summary (summary index): shown beside it, also when it matched the query
    summary: str | None
    score: float
    tsne_position: None
    scores: dict[str, float]
    ranks: dict[str, int]
    #: the score the search ranked the hit by (``score`` is its relevance, 0 to 1)
    fusion_score: float | None
    #: what the relevance was estimated from: ``cosine``, ``lexical`` (BM25 over the attainable)
    evidence: dict[str, float]
    dataset: HitDataset


class Query(Out):
    content: str


class Records(Out):
    query: Query
    records: list[Record]


class RoutedRecords(Records):
    """``datasets``: the ids searched; ``router``: the router of single routing; ``note``: why a
    router fell back, or that there was nothing to search."""

    datasets: list[str]
    routing: Literal["single", "multiple"]
    router: str | None
    note: str | None


class Result(Out):
    result: Literal["success"]


class RetryResult(Result):
    batch: str


class PreviewSegmentOut(Out):
    """A segment as indexing would store it: its text (for Q&A: the question), token count,
    answer (Q&A), and the child chunks a parent-child index would search."""

    content: str
    tokens: int
    answer: str | None
    child_chunks: list[str]


class ChunkPreview(Out):
    """The first segments a file would make under the dataset's process rule, and how many the
    splitter cut in all; nothing is stored."""

    total_segments: int
    preview: list[PreviewSegmentOut]
