"""What the OpenAPI document lists beside the request models: the error body, the models the
hand-written schemas reference, and the checks the core models' schemas do not show."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from zhiku.api.dify import doc_forms
from zhiku.api.plugins import plugin_names
from zhiku.api.schemas.dify_models import DifyProcessRule, DifyRetrievalModel
from zhiku.cleaners.registry import cleaners
from zhiku.core.retrieval_config import RetrievalConfig
from zhiku.knowledge_base.indexing.pipeline import PipelineSpec


class ErrorBody(BaseModel):
    """Every error response."""

    code: str
    message: str
    status: int
    details: list[dict[str, Any]] | None = None


def describe_core_checks(components: dict[str, Any]) -> None:
    """Add to the core models' schemas what the API checks beyond their types: plugins by known
    name only, and at least one channel for hybrid search."""
    rule = components["PipelineSpec"]["properties"]
    rule["cleaners"]["items"]["enum"] = plugin_names(cleaners)
    rule["doc_form"]["enum"] = doc_forms()
    components["RetrievalConfig"]["properties"]["hybrid_methods"]["minItems"] = 1


#: Models referenced by the hand-written schemas of the request models, for the OpenAPI components.
REFERENCED_MODELS: tuple[type[BaseModel], ...] = (
    RetrievalConfig,
    DifyRetrievalModel,
    PipelineSpec,
    DifyProcessRule,
    ErrorBody,
)
