"""The HTTP API reference: every operation of the served OpenAPI document, grouped by tag, with
its parameters, body fields and success response."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .markdown import anchor, cell, code, escape_text

METHODS = ("get", "post", "put", "patch", "delete")


def openapi() -> dict[str, Any]:
    """The document ``GET /v1/openapi.json`` serves (made the way the app makes it)."""
    import zhiku
    from zhiku.api.openapi import openapi_document
    from zhiku.api.views import ALL

    return openapi_document(ALL, version=zhiku.__version__)


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(METHOD, path, operation)`` for every operation, in the document's order."""
    for path, item in document["paths"].items():
        for method in METHODS:
            if method in item:
                yield method.upper(), path, item[method]


def render(document: dict[str, Any]) -> str:
    """Markdown: a section per tag, a subsection per operation."""
    tags: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for method, path, operation in operations(document):
        tags.setdefault(operation["tags"][0], []).append((method, path, operation))
    lines = [escape_text(document["info"].get("description", "")), ""]
    for tag, entries in tags.items():
        lines += [f"## {tag.capitalize()} {{ #{anchor(tag)} }}", "", "| Method | Path | Summary |"]
        lines.append("| --- | --- | --- |")
        lines += [
            f"| {method} | [{code(path)}](#{anchor(op['operationId'])}) | {cell(op['summary'])} |"
            for method, path, op in entries
        ]
        lines.append("")
        for method, path, operation in entries:
            lines += _operation(document, method, path, operation)
    lines += ["## Schemas { #schemas }", "", "The bodies named above, field by field.", ""]
    for name, schema in document["components"]["schemas"].items():
        lines += [f"### {code(name)} {{ #{_schema_anchor(name)} }}", ""]
        if schema.get("description"):
            lines += [escape_text(schema["description"]), ""]
        lines += _fields(document, schema) or [f"{_type(schema)}.", ""]
    return "\n".join(lines)


def _schema_anchor(name: str) -> str:
    return "schema-" + anchor(name)


def _operation(document: dict[str, Any], method: str, path: str, operation: dict[str, Any]) -> list[str]:
    lines = [f"### {code(f'{method} {path}')} {{ #{anchor(operation['operationId'])} }}", ""]
    lines += [escape_text(operation["summary"]), ""]
    if operation.get("description"):
        lines += [escape_text(operation["description"]), ""]
    lines += ["No API key needed." if operation.get("security") == [] else "Needs an API key.", ""]
    if operation.get("parameters"):
        lines += ["| Parameter | In | Type | Required | Description |", "| --- | --- | --- | --- | --- |"]
        lines += [
            f"| {code(p['name'])} | {p['in']} | {_type(p['schema'])} | {_yes(p.get('required'))} | "
            f"{_describe(p['schema'])} |"
            for p in operation["parameters"]
        ]
        lines.append("")
    body = operation.get("requestBody", {}).get("content", {})
    if "application/json" in body:
        schema = body["application/json"]["schema"]
        lines += [f"Body (JSON): {_type(schema)}", ""] + _fields(document, schema)
    if "multipart/form-data" in body:
        lines += _form(document, body["multipart/form-data"]["schema"])
    lines += _responses(operation)
    return lines


def _form(document: dict[str, Any], form: dict[str, Any]) -> list[str]:
    lines = ["Body (multipart form): `file`, the file's bytes", ""]
    data = form["properties"].get("data")
    if data is not None:
        lines += [f"and `data`, JSON text of {_type(data['contentSchema'])}:", ""]
        lines += _fields(document, data["contentSchema"])
    return lines


def _responses(operation: dict[str, Any]) -> list[str]:
    lines = []
    for status, response in operation["responses"].items():
        if "$ref" in response:
            continue
        schema = response.get("content", {}).get("application/json", {}).get("schema")
        answer = _type(schema) if schema is not None else "no body"
        lines += [f"Success: `{status}`, {answer}. Errors: `4XX` and `5XX` with an error body.", ""]
    return lines


def _fields(document: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """The top-level fields of an object schema (through its ``$ref``) as a table."""
    resolved = _resolve(document, schema)
    properties = resolved.get("properties", {})
    if not properties:
        return []
    required = set(resolved.get("required", []))
    lines = ["| Field | Type | Required | Description |", "| --- | --- | --- | --- |"]
    lines += [
        f"| {code(name)} | {_type(prop)} | {_yes(name in required)} | {_describe(prop)} |"
        for name, prop in properties.items()
    ]
    return [*lines, ""]


def _resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _type(schema: dict[str, Any]) -> str:
    """A schema's type in a few words: ``string``, ``integer | null``, ``array of Condition``."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return f"[{code(name)}](#{_schema_anchor(name)})"
    if "const" in schema:
        return code(repr(schema["const"]))
    if "enum" in schema:
        return " \\| ".join(code(str(value)) for value in schema["enum"])
    for combined in ("anyOf", "oneOf", "allOf"):
        if combined in schema:
            return " \\| ".join(_type(option) for option in schema[combined])
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        return f"array of {_type(items)}" if items else "array"
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return f"object of {_type(schema['additionalProperties'])}"
    if isinstance(kind, list):
        return " \\| ".join(kind)
    return str(kind or "any")


def _describe(schema: dict[str, Any]) -> str:
    """The schema's description and, when it has one, its default."""
    parts = [cell(schema["description"])] if schema.get("description") else []
    if "default" in schema and schema["default"] is not None:
        parts.append(f"Default: {code(_json(schema['default']))}.")
    return " ".join(parts)


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def _yes(value: object) -> str:
    return "yes" if value else "no"
