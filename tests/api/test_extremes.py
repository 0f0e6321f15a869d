"""Walk ``/v1/openapi.json`` and send every body field (and query parameter) its extreme values:
every answer is a 4xx or 2xx with a JSON body, never a 5xx."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.api.conftest import Api, context_of, make_app

pytestmark = pytest.mark.reliability


def _deep(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = {"a": value}
    return value


#: What a careless or hostile client sends to any field.
EXTREMES: list[Any] = [
    None,
    True,
    -(10**30),
    10**30,
    1e308,
    -1.5,
    "",
    "x" * 200_000,
    "\ud800",
    "a\x00b",
    "../../etc/passwd",
    "cross-encoder:/tmp",
    [],
    ["x"] * 20_000,
    {},
    _deep(40),
]


@pytest.fixture
def walk_app(tmp_path: Path) -> Iterator[Flask]:
    application = make_app(tmp_path / "home", workers=False)
    yield application
    context_of(application).close()


def _resolve(schema: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    """The object schema behind ``$ref``s and ``anyOf`` (the first alternative with properties)."""
    if "$ref" in schema:
        return _resolve(components[schema["$ref"].rsplit("/", 1)[-1]], components)
    for alternative in schema.get("anyOf", []):
        resolved = _resolve(alternative, components)
        if resolved.get("properties"):
            return resolved
    return schema


def _baseline(schema: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    """A body with each required field set to a plausible value."""
    body: dict[str, Any] = {}
    for name in schema.get("required", []):
        prop = _resolve(schema["properties"][name], components)
        kind = prop.get("type")
        if kind == "array":
            item = _resolve(prop.get("items", {}), components)
            body[name] = [_baseline(item, components) if item.get("properties") else "x"]
        elif kind == "object" or prop.get("properties"):
            body[name] = _baseline(prop, components)
        elif kind == "integer":
            body[name] = 1
        elif "enum" in prop:
            body[name] = prop["enum"][0]
        else:
            body[name] = "tea"
    return body


def _check(response: Any, what: str) -> None:
    assert response.status_code < 500, (what, response.status_code, response.get_data(as_text=True)[:300])
    if response.status_code >= 400:
        body = response.json
        assert isinstance(body, dict) and {"code", "message", "status"} <= set(body), (what, body)
    response.close()  # a streamed answer ends here


def test_every_body_field_and_query_parameter_survives_its_extremes(walk_app: Flask) -> None:
    _, secret = context_of(walk_app).keys.create(name="walker")
    api = Api(walk_app.test_client(), secret)
    dataset = api.create_dataset("tea")
    document = api.add_text(dataset, "a.txt", "tea")[0]
    ids = {"dataset_id": dataset, "document_id": document, "segment_id": "seg", "batch": "b",
           "action": "enable", "conversation_id": "c", "metadata_id": "m", "child_chunk_id": "cc",
           "model_id": "zhiku"}
    spec = api.get("/v1/openapi.json").json
    components = spec["components"]["schemas"]
    sent = 0
    for path, operations in spec["paths"].items():
        url = path.format(**ids)
        for method, operation in operations.items():
            if method.upper() == "DELETE" and path.rsplit("/", 1)[-1] == "{dataset_id}":
                continue  # deleting the dataset would end the walk early
            call = getattr(api, method.lower(), None)
            if call is None:
                continue
            for parameter in operation.get("parameters", []):
                if parameter["in"] != "query":
                    continue
                for value in ("x" * 10_000, "\x00", "-1", "9" * 40):
                    response = call(url, query_string={parameter["name"]: value})
                    _check(response, f"{method} {path} ?{parameter['name']}")
                    sent += 1
            content = (operation.get("requestBody") or {}).get("content", {})
            if "application/json" not in content:
                continue
            schema = _resolve(content["application/json"]["schema"], components)
            baseline = _baseline(schema, components)
            for field in schema.get("properties", {}):
                for value in EXTREMES:
                    body = json.dumps({**baseline, field: value})
                    response = call(url, data=body, content_type="application/json")
                    _check(response, f"{method} {path} {field}={str(value)[:30]!r}")
                    sent += 1
    assert sent > 1000
