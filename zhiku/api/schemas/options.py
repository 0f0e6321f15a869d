"""The options datasets and documents share: a retrieval model and a process rule in Dify's shape
or zhiku's own, checked whole, and the indexing technique Dify clients send."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, ValidationError, ValidationInfo, WithJsonSchema, model_validator

from zhiku.api.dify import LANGUAGES, doc_forms, pipeline_spec
from zhiku.api.dify_retrieval import parse_retrieval
from zhiku.api.plugins import require_choice
from zhiku.api.schemas.base import SCHEMA_REF, ApiModel, enum_of
from zhiku.api.schemas.choices import Choices
from zhiku.api.schemas.dify_models import DifyRetrievalModel
from zhiku.core.retrieval_config import RetrievalConfig
from zhiku.fusion.registry import RERANKING_MODEL, fusion_modes, fusions
from zhiku.knowledge_base.indexing.pipeline import PipelineSpec


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
    if config.reranking.mode != RERANKING_MODEL and not fusions.has(config.reranking.mode):
        known = ", ".join(fusion_modes())
        raise ValueError(f"reranking.mode: unknown fusion {config.reranking.mode[:80]!r}; installed: {known}")
    choices = Choices.of(info)
    if config.reranking.model is not None and config.reranking.model != choices.rerank_default:
        require_choice(config.reranking.model, choices.rerank_models, "rerank model", "rerank_models")
    return value


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


class ProcessingOptions(ApiModel):
    """How documents are processed; checked here, applied over the dataset's own rule later."""

    process_rule: ProcessRule = None
    doc_form: str | None = Field(
        None, description="text_model (zhiku: paragraph) or qa_model", json_schema_extra=enum_of(doc_forms)
    )
    doc_language: str | None = Field(
        None,
        description="Q&A language: Chinese/中文/zh or English/en (any case)",
        json_schema_extra=enum_of(lambda: list(LANGUAGES)),
    )

    @model_validator(mode="after")
    def _valid_rule(self, info: ValidationInfo) -> ProcessingOptions:
        spec = pipeline_spec(self.process_rule, self.doc_form, self.doc_language, PipelineSpec())
        if spec is not None and spec.length != PipelineSpec().length:
            tokenizers = Choices.of(info).tokenizers
            require_choice(spec.length, tokenizers, "tokenizer", "tokenizers", "process_rule.length")
        return self
