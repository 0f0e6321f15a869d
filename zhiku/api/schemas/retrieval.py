"""Retrieval bodies: one dataset's, and across datasets with routing and a merge by name."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from zhiku.api.schemas.base import ApiModel, deduplicated, enum_of
from zhiku.api.schemas.limits import MAX_DATASETS_PER_QUERY, MAX_QUERY_CHARS, Name
from zhiku.api.schemas.options import RetrievalModel
from zhiku.retrieval.merges import merges
from zhiku.retrieval.routers import router_names


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


class RetrieveBody(ApiModel):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    retrieval_model: RetrievalModel = None
    external_retrieval_model: dict[str, Any] | None = Field(None, description="unused (as in Dify)")


class CrossRetrieveBody(ApiModel):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    datasets: Annotated[list[Name] | None, AfterValidator(deduplicated)] = Field(
        None,
        max_length=MAX_DATASETS_PER_QUERY,
        description="dataset ids or names (duplicates count once); default: every dataset allowed",
    )
    routing: Literal["single", "multiple"] = "multiple"
    router: Annotated[str, AfterValidator(_check_router)] = Field(
        "embedding",
        description="single routing: embedding, function_call, react or an installed router",
        json_schema_extra=enum_of(router_names),
    )
    top_k: int | None = Field(None, ge=1, le=100)
    score_threshold: float | None = Field(None, ge=0.0, le=1.0, allow_inf_nan=False)
    merge: Annotated[str, AfterValidator(_check_merge)] = Field(
        "relevance",
        description="multiple routing: relevance, weighted, reranking_model, rrf or an installed merge",
        json_schema_extra=enum_of(merges.available),
    )
