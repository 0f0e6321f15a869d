"""``/datasets/{id}/metadata``: a dataset's metadata fields and its documents' values, in Dify's
shapes (fields by id; values set by ``POST /datasets/{id}/documents/metadata``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from flask import Response, jsonify
from pydantic import BaseModel, ConfigDict, Field

from zhiku.api.context import visible_dataset
from zhiku.api.responses import Out, Result
from zhiku.api.routing import Routes
from zhiku.core.errors import InvalidInput
from zhiku.core.metadata import BUILTIN_FIELDS, MAX_VALUE_CHARS, FieldType
from zhiku.knowledge_base.metadata import MAX_FIELDS

routes = Routes("metadata")

METADATA = "/datasets/{dataset_id}/metadata"
MAX_DOCUMENTS_PER_CALL = 1000


class FieldCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: FieldType
    name: str = Field(min_length=1, max_length=255)


class FieldRename(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=255)


class MetadataValue(BaseModel):
    """One value of one field; ``id`` names the field (``name`` is informative, as in Dify)."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(max_length=64)
    name: str | None = Field(None, max_length=255)
    value: Annotated[str, Field(max_length=MAX_VALUE_CHARS)] | int | float | None = None


class DocumentMetadata(BaseModel):
    model_config = ConfigDict(extra="forbid")

    document_id: str = Field(max_length=64)
    metadata_list: list[MetadataValue] = Field(max_length=MAX_FIELDS)


class DocumentsMetadata(BaseModel):
    """The documents' values: each document's list replaces its values (missing fields cleared)."""

    model_config = ConfigDict(extra="forbid")

    operation_data: list[DocumentMetadata] = Field(min_length=1, max_length=MAX_DOCUMENTS_PER_CALL)


class FieldOut(Out):
    id: str
    type: FieldType
    name: str


class FieldCount(FieldOut):
    count: int


class FieldList(Out):
    doc_metadata: list[FieldCount]
    built_in_field_enabled: bool


class BuiltinField(Out):
    name: str
    type: FieldType


class BuiltinList(Out):
    fields: list[BuiltinField]


@routes.route("GET", METADATA, summary="List a dataset's metadata fields", response=FieldList)
def list_fields(dataset_id: str) -> Response:
    metadata = visible_dataset(dataset_id).metadata
    counts = metadata.use_counts()
    fields = [{**f.model_dump(), "count": counts.get(f.id, 0)} for f in metadata.fields()]
    return jsonify({"doc_metadata": fields, "built_in_field_enabled": metadata.builtin_enabled})


@routes.route("POST", METADATA, summary="Add a metadata field", body=FieldCreate, response=FieldOut)
def create_field(dataset_id: str, body: FieldCreate) -> Response:
    field = visible_dataset(dataset_id).metadata.add_field(body.name, body.type)
    return jsonify(field.model_dump())


@routes.route(
    "PATCH",
    METADATA + "/{metadata_id}",
    summary="Rename a metadata field",
    body=FieldRename,
    response=FieldOut,
)
def rename_field(dataset_id: str, metadata_id: str, body: FieldRename) -> Response:
    field = visible_dataset(dataset_id).metadata.rename_field(metadata_id, body.name)
    return jsonify(field.model_dump())


@routes.route(
    "DELETE",
    METADATA + "/{metadata_id}",
    summary="Delete a metadata field and every document's value for it",
    response=Result,
)
def delete_field(dataset_id: str, metadata_id: str) -> Response:
    visible_dataset(dataset_id).metadata.delete_field(metadata_id)
    return jsonify({"result": "success"})


@routes.route("GET", METADATA + "/built-in", summary="The built-in metadata fields", response=BuiltinList)
def builtin_fields(dataset_id: str) -> Response:
    visible_dataset(dataset_id)
    return jsonify({"fields": [{"name": n, "type": t} for n, t in BUILTIN_FIELDS.items()]})


@routes.route(
    "POST",
    METADATA + "/built-in/{action}",
    summary="Enable or disable the built-in metadata fields in filters",
    response=Result,
    path_schemas={"action": {"type": "string", "enum": ["enable", "disable"]}},
)
def toggle_builtin(dataset_id: str, action: Literal["enable", "disable"]) -> Response:
    dataset = visible_dataset(dataset_id)
    if action not in ("enable", "disable"):
        raise InvalidInput("action: 'enable' or 'disable'")
    dataset.metadata.set_builtin(action == "enable")
    return jsonify({"result": "success"})


@routes.route(
    "POST",
    "/datasets/{dataset_id}/documents/metadata",
    summary="Set documents' metadata values (each document's list replaces its values)",
    body=DocumentsMetadata,
    response=Result,
)
def set_document_metadata(dataset_id: str, body: DocumentsMetadata) -> Response:
    values_of: dict[str, dict[str, Any]] = {}
    for operation in body.operation_data:
        values_of[operation.document_id] = {item.id: item.value for item in operation.metadata_list}
    visible_dataset(dataset_id).metadata.set_many(values_of)
    return jsonify({"result": "success"})
