"""The OpenAPI 3.1 document, made from the route declarations and their pydantic models."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from zhiku.api.routing import Operation, Routes
from zhiku.api.schemas import REFERENCED_MODELS, SCHEMA_REF, ErrorBody, describe_core_checks

PREFIX = "/v1"


class _Schemas:
    """Collects model schemas under ``components/schemas`` and hands out references to them."""

    def __init__(self) -> None:
        self.schemas: dict[str, Any] = {}

    def schema(self, model: type[BaseModel]) -> dict[str, Any]:
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        for name, sub in schema.pop("$defs", {}).items():
            self.schemas.setdefault(name, sub)
        return schema

    def ref(self, model: type[BaseModel]) -> dict[str, str]:
        self.schemas[model.__name__] = self.schema(model)
        return {"$ref": f"#/components/schemas/{model.__name__}"}


def openapi_document(groups: Sequence[Routes], *, version: str) -> dict[str, Any]:
    schemas = _Schemas()
    for model in REFERENCED_MODELS:
        schemas.ref(model)
    paths: dict[str, dict[str, Any]] = {}
    for group in groups:
        for operation in group.operations:
            paths.setdefault(PREFIX + operation.path, {})[operation.method.lower()] = _operation(
                operation, schemas
            )
    describe_core_checks(schemas.schemas)
    return _resolve_refs(
        {
            "openapi": "3.1.0",
            "info": {
                "title": "zhiku knowledge base API",
                "version": version,
                "description": "Dify-compatible dataset API: datasets, documents, segments, retrieval. "
                "Send `Authorization: Bearer <key>` (keys: `zhiku apikey create`).",
            },
            "servers": [{"url": "/"}],
            "paths": paths,
            "components": {
                "schemas": schemas.schemas,
                "securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer"}},
                "responses": {
                    "Error": {
                        "description": "an error: stable code, message, HTTP status (and field details)",
                        "content": {
                            "application/json": {
                                "schema": {"$ref": f"#/components/schemas/{ErrorBody.__name__}"}
                            }
                        },
                    }
                },
            },
        }
    )


def _resolve_refs(value: Any) -> Any:
    """Turn the ``{SCHEMA_REF: name}`` markers of hand-written schemas into ``$ref``s."""
    if isinstance(value, dict):
        if set(value) == {SCHEMA_REF}:
            return {"$ref": f"#/components/schemas/{value[SCHEMA_REF]}"}
        return {key: _resolve_refs(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_resolve_refs(item) for item in value]
    return value


def _success(operation: Operation, schemas: _Schemas) -> dict[str, Any]:
    described: dict[str, Any] = {"description": "success"}
    if operation.response is not None:
        described["content"] = {"application/json": {"schema": schemas.ref(operation.response)}}
    return described


def _operation(operation: Operation, schemas: _Schemas) -> dict[str, Any]:
    slug = re.sub(r"\W+", "_", operation.path).strip("_")
    parameters: list[dict[str, Any]] = [
        {
            "name": name,
            "in": "path",
            "required": True,
            "schema": dict(operation.path_schemas.get(name, {"type": "string"})),
        }
        for name in re.findall(r"\{(\w+)\}", operation.path)
    ]
    if operation.query is not None:
        schema = schemas.schema(operation.query)
        required = set(schema.get("required", []))
        parameters.extend(
            {"name": name, "in": "query", "required": name in required, "schema": prop}
            for name, prop in schema.get("properties", {}).items()
        )
    described: dict[str, Any] = {
        "tags": [operation.tag],
        "summary": operation.summary,
        "operationId": f"{operation.method.lower()}_{slug}",
        "parameters": parameters,
        "responses": {
            str(operation.status): _success(operation, schemas),
            "4XX": {"$ref": "#/components/responses/Error"},
            "5XX": {"$ref": "#/components/responses/Error"},
        },
        "security": [] if operation.public else [{"bearerAuth": []}],
    }
    if operation.description:
        described["description"] = operation.description
    if operation.body is not None:
        described["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": schemas.ref(operation.body)}},
        }
    if operation.file:
        form: dict[str, Any] = {
            "type": "object",
            "properties": {"file": {"type": "string", "format": "binary"}},
            "required": ["file"],
        }
        if operation.form is not None:
            form["properties"]["data"] = {
                "type": "string",
                "contentMediaType": "application/json",
                "contentSchema": schemas.ref(operation.form),
                "description": f"JSON text of a {operation.form.__name__}",
            }
        described["requestBody"] = {"required": True, "content": {"multipart/form-data": {"schema": form}}}
    return described
