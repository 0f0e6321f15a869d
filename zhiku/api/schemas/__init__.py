"""Request models: they validate every body and query, and the OpenAPI document is made from them.

Bodies follow Dify's dataset service API. Unknown top-level fields are ignored, as Dify does,
so a Dify client sending fields zhiku has no use for still works; every known field is checked,
and the error names the field. ``retrieval_model`` and ``process_rule`` accept Dify's shape or
zhiku's own (``RetrievalConfig`` / ``PipelineSpec`` fields).

One module per subject: :mod:`.limits` (bounds of every request), :mod:`.choices` (what the
operator configured), :mod:`.base`, :mod:`.options` (retrieval model and process rule),
:mod:`.datasets`, :mod:`.documents`, :mod:`.segments`, :mod:`.retrieval`, :mod:`.dify_models`
(Dify's shapes) and :mod:`.components` (what the OpenAPI document lists beside them).
"""

from __future__ import annotations

from zhiku.api.schemas.base import SCHEMA_REF, ApiModel, Pagination
from zhiku.api.schemas.choices import Choices
from zhiku.api.schemas.components import REFERENCED_MODELS, ErrorBody, describe_core_checks
from zhiku.api.schemas.datasets import DatasetCreate, DatasetListQuery, DatasetUpdate
from zhiku.api.schemas.dify_models import (
    DifyKeywordSetting,
    DifyPreProcessingRule,
    DifyProcessRule,
    DifyRerankingModel,
    DifyRetrievalModel,
    DifyRules,
    DifySegmentation,
    DifyVectorSetting,
    DifyWeights,
)
from zhiku.api.schemas.documents import (
    ON_DUPLICATE_DESCRIPTION,
    DocumentIds,
    DocumentListQuery,
    FileDocumentData,
    FileDocumentUpdateData,
    TextDocumentCreate,
    TextDocumentUpdate,
)
from zhiku.api.schemas.limits import (
    MAX_DATASETS_PER_QUERY,
    MAX_DESCRIPTION_CHARS,
    MAX_JSON_DEPTH,
    MAX_JSON_ITEMS,
    MAX_KEYWORDS,
    MAX_LIST_ITEMS,
    MAX_MESSAGE_CHARS,
    MAX_NAME_CHARS,
    MAX_QUERY_CHARS,
    MAX_QUESTION_CHARS,
    MAX_SEGMENT_CHARS,
    MAX_TEXT_CHARS,
    Name,
    unsafe_input,
)
from zhiku.api.schemas.options import IndexingTechnique, ProcessingOptions, ProcessRule, RetrievalModel
from zhiku.api.schemas.retrieval import CrossRetrieveBody, RetrieveBody
from zhiku.api.schemas.segments import (
    ChildChunkBody,
    ChildChunkListQuery,
    SegmentChange,
    SegmentItem,
    SegmentListQuery,
    SegmentsCreate,
    SegmentUpdate,
)

__all__ = [
    "MAX_DATASETS_PER_QUERY",
    "MAX_DESCRIPTION_CHARS",
    "MAX_JSON_DEPTH",
    "MAX_JSON_ITEMS",
    "MAX_KEYWORDS",
    "MAX_LIST_ITEMS",
    "MAX_MESSAGE_CHARS",
    "MAX_NAME_CHARS",
    "MAX_QUERY_CHARS",
    "MAX_QUESTION_CHARS",
    "MAX_SEGMENT_CHARS",
    "MAX_TEXT_CHARS",
    "ON_DUPLICATE_DESCRIPTION",
    "REFERENCED_MODELS",
    "SCHEMA_REF",
    "ApiModel",
    "ChildChunkBody",
    "ChildChunkListQuery",
    "Choices",
    "CrossRetrieveBody",
    "DatasetCreate",
    "DatasetListQuery",
    "DatasetUpdate",
    "DifyKeywordSetting",
    "DifyPreProcessingRule",
    "DifyProcessRule",
    "DifyRerankingModel",
    "DifyRetrievalModel",
    "DifyRules",
    "DifySegmentation",
    "DifyVectorSetting",
    "DifyWeights",
    "DocumentIds",
    "DocumentListQuery",
    "ErrorBody",
    "FileDocumentData",
    "FileDocumentUpdateData",
    "IndexingTechnique",
    "Name",
    "Pagination",
    "ProcessRule",
    "ProcessingOptions",
    "RetrievalModel",
    "RetrieveBody",
    "SegmentChange",
    "SegmentItem",
    "SegmentListQuery",
    "SegmentUpdate",
    "SegmentsCreate",
    "TextDocumentCreate",
    "TextDocumentUpdate",
    "describe_core_checks",
    "unsafe_input",
]
