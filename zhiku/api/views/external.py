"""``POST /retrieval``: zhiku as a Dify external knowledge base (Dify's External Knowledge API).

In Dify, register the API endpoint ``http(s)://<zhiku host>/v1`` with a zhiku API key, and use a
dataset id as the external knowledge id: Dify then sends ``POST /v1/retrieval`` with
``knowledge_id``, ``query``, ``retrieval_setting {top_k, score_threshold}`` and, optionally,
``metadata_condition``, and reads ``{"records": [{content, score, title, metadata}]}``.

The dataset is searched with its own retrieval config; ``top_k`` and ``score_threshold``
override it (a threshold of 0, Dify's "disabled", leaves the dataset's own relevance threshold).
Errors carry Dify's ``error_code``/``error_msg`` (1001 malformed Authorization header, 1002 key
refused, both 403; 2001 unknown knowledge, 404) beside zhiku's ``code``/``message``/``status``.
"""

from __future__ import annotations

from typing import Any

from flask import Response, g, jsonify, request
from pydantic import BaseModel, ConfigDict, Field, field_validator

from zhiku.api.auth import Principal
from zhiku.api.context import context, visible_dataset_with_settings
from zhiku.api.responses import Out
from zhiku.api.routing import Routes
from zhiku.api.schemas import MAX_QUESTION_CHARS
from zhiku.core.errors import NotFound
from zhiku.core.metadata import Condition, MetadataFilter

routes = Routes("external knowledge")

_ERROR_CODES = {1001: "unauthorized", 1002: "unauthorized", 2001: "not_found"}


class RetrievalSetting(BaseModel):
    model_config = ConfigDict(extra="ignore")

    top_k: int = Field(ge=1, le=1000)
    score_threshold: float = Field(ge=0.0, le=1.0)


class ExternalCondition(Condition):
    """Dify's condition; older clients send ``name`` as a list of field names (each tested)."""

    name: str | list[str] = Field(min_length=1, max_length=255)  # type: ignore[assignment]


class MetadataCondition(BaseModel):
    model_config = ConfigDict(extra="forbid")

    logical_operator: str = "and"
    conditions: list[ExternalCondition] = Field(default_factory=list, max_length=50)

    @field_validator("logical_operator")
    @classmethod
    def _and_or(cls, value: str) -> str:
        if value not in ("and", "or"):
            raise ValueError("'and' or 'or'")
        return value

    def as_filter(self) -> MetadataFilter:
        conditions = []
        for condition in self.conditions:
            names = condition.name if isinstance(condition.name, list) else [condition.name]
            for name in names:
                conditions.append(
                    Condition(
                        name=name,
                        comparison_operator=condition.comparison_operator,
                        value=condition.value,
                    )
                )
        return MetadataFilter.model_validate(
            {"logical_operator": self.logical_operator, "conditions": conditions}
        )


class ExternalRetrievalBody(BaseModel):
    model_config = ConfigDict(extra="ignore")

    knowledge_id: str = Field(min_length=1, max_length=255)
    query: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS, description="Dify's question")
    retrieval_setting: RetrievalSetting
    metadata_condition: MetadataCondition | None = None


class ExternalRecord(Out):
    content: str
    score: float
    title: str
    metadata: dict[str, Any]


class ExternalRecords(Out):
    records: list[ExternalRecord]


class DifyError(Exception):
    def __init__(self, status: int, error_code: int, message: str) -> None:
        super().__init__(message)
        self.status, self.error_code, self.message = status, error_code, message

    def response(self) -> Response:
        body = {
            "error_code": self.error_code,
            "error_msg": self.message,
            "code": _ERROR_CODES[self.error_code],
            "message": self.message,
            "status": self.status,
        }
        answer = jsonify(body)
        answer.status_code = self.status
        return answer


def _caller() -> Principal:
    ctx = context()
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise DifyError(403, 1001, "Invalid Authorization header format. Expected 'Bearer <api-key>' format.")
    if not ctx.auth:
        return Principal(None, None)
    if ctx.local_token is not None and token.strip() == ctx.local_token:
        return Principal("local", None)
    key = ctx.keys.verify(token.strip())
    if key is None:
        raise DifyError(403, 1002, "Authorization failed")
    return Principal(key.id, frozenset(key.datasets) if key.datasets is not None else None)


@routes.route(
    "POST",
    "/retrieval",
    summary="Dify's External Knowledge API: search one dataset (knowledge_id) for Dify",
    body=ExternalRetrievalBody,
    response=ExternalRecords,
    public=True,
)
def external_retrieval(body: ExternalRetrievalBody) -> Response:
    try:
        g.zhiku_principal = _caller()
        try:
            dataset, settings = visible_dataset_with_settings(body.knowledge_id)
        except NotFound:
            raise DifyError(404, 2001, "The knowledge does not exist") from None
    except DifyError as error:
        return error.response()
    setting = body.retrieval_setting
    override: dict[str, Any] = {"top_k": setting.top_k}
    if setting.score_threshold > 0:  # Dify sends 0.0 for "no threshold of its own": the dataset's applies
        override["score_threshold"] = setting.score_threshold
    if body.metadata_condition is not None and body.metadata_condition.conditions:
        override["metadata_filter"] = body.metadata_condition.as_filter()
    hits = dataset.search_with(body.query, settings.retrieval.merged(override))
    context().hits.add(hit.segment_id for hit in hits)
    values = dataset.metadata.values_of([hit.document_id for hit in hits])
    records = [
        {
            "content": hit.content if not hit.answer else f"{hit.content}\n{hit.answer}",
            "score": hit.score,
            "title": hit.document_name,
            "metadata": {
                **values.get(hit.document_id, {}),
                "document_id": hit.document_id,
                "segment_id": hit.segment_id,
                "dataset_id": hit.dataset_id,
                "position": hit.position,
                "scores": dict(hit.scores),
            },
        }
        for hit in hits
    ]
    return jsonify({"records": records})
