"""Dify's ``retrieval_model`` and ``process_rule`` shapes, typed so a Dify body is checked field
by field before it is translated to zhiku's own."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from zhiku.api.plugins import plugin_names
from zhiku.api.schemas.base import ApiModel, enum_of
from zhiku.api.schemas.limits import MAX_NAME_CHARS
from zhiku.cleaners.registry import cleaners
from zhiku.core.metadata import MetadataFilter
from zhiku.core.retrieval_config import Channel, SearchIn, SearchMethod, SectionPath


def _unset_default(schema: dict[str, Any]) -> None:
    """For fields that may be left out but not sent as null: absent means "keep the current"."""
    schema.pop("default", None)


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
    # zhiku's own fields that Dify's shape has no word for, meaning what they mean in zhiku's
    hybrid_methods: list[Channel] | None = Field(None, max_length=3)
    recall_k: int | None = Field(None, ge=1, le=10000)
    reorder: bool | None = None
    search_in: SearchIn | None = None
    section: SectionPath | None = None


class DifyPreProcessingRule(BaseModel):
    id: str = Field(json_schema_extra=enum_of(lambda: plugin_names(cleaners)))
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
