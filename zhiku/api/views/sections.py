"""``/datasets/{id}/sections``: a dataset's sections (heading paths) with their segment counts and
descriptions; ``retrieval_model.section`` restricts a retrieval to one (and those under it)."""

from __future__ import annotations

from flask import Response, jsonify
from pydantic import BaseModel, ConfigDict, Field

from zhiku.api.context import visible_dataset
from zhiku.api.responses import Out
from zhiku.api.routing import Routes
from zhiku.core.sections import MAX_SECTION_CHARS
from zhiku.knowledge_base.sections import MAX_DESCRIPTION_CHARS, SectionInfo

routes = Routes("sections")

SECTIONS = "/datasets/{dataset_id}/sections"
#: Most descriptions one PATCH sets.
MAX_DESCRIPTIONS_PER_CALL = 100


class SectionDescription(BaseModel):
    """A section's description; null or blank removes it."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=MAX_SECTION_CHARS)
    description: str | None = Field(None, max_length=MAX_DESCRIPTION_CHARS)


class SectionDescriptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sections: list[SectionDescription] = Field(min_length=1, max_length=MAX_DESCRIPTIONS_PER_CALL)


class SectionOut(Out):
    name: str
    segment_count: int
    description: str | None


class SectionList(Out):
    data: list[SectionOut]
    total: int


def _out(sections: list[SectionInfo]) -> Response:
    data = [
        {"name": s.name, "segment_count": s.segment_count, "description": s.description} for s in sections
    ]
    return jsonify({"data": data, "total": len(data)})


@routes.route(
    "GET",
    SECTIONS,
    summary="List a dataset's sections (heading paths) with segment counts and descriptions",
    response=SectionList,
)
def list_sections(dataset_id: str) -> Response:
    return _out(visible_dataset(dataset_id).sections())


@routes.route(
    "PATCH",
    SECTIONS,
    summary="Set or remove the descriptions of sections (what an intent routes by)",
    body=SectionDescriptions,
    response=SectionList,
)
def describe_sections(dataset_id: str, body: SectionDescriptions) -> Response:
    dataset = visible_dataset(dataset_id)
    return _out(dataset.describe_sections({item.name: item.description for item in body.sections}))
