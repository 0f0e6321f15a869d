"""/v1/openapi.json lists every endpoint, with request schemas from the validating models."""

from __future__ import annotations

import re

from flask import Flask

from tests.api.conftest import Api


def _refs(value: object) -> set[str]:
    if isinstance(value, dict):
        found = {value["$ref"]} if isinstance(value.get("$ref"), str) else set()
        return found.union(*(_refs(item) for item in value.values()))
    if isinstance(value, list):
        return set().union(*(_refs(item) for item in value))
    return set()


def test_every_route_is_described(app: Flask, api: Api) -> None:
    document = api.get("/v1/openapi.json").json
    assert document["openapi"].startswith("3.1")
    described = {(path, method.upper()) for path, item in document["paths"].items() for method in item}
    routed = {
        (re.sub(r"<(\w+)>", r"{\1}", rule.rule), method)
        for rule in app.url_map.iter_rules()
        if rule.rule.startswith("/v1/")
        for method in rule.methods or ()
        if method not in ("HEAD", "OPTIONS")
    }
    assert routed == described
    assert len(described) >= 30


def test_schemas_come_from_the_request_models(api: Api) -> None:
    document = api.get("/v1/openapi.json").json
    schemas = document["components"]["schemas"]
    create = document["paths"]["/v1/datasets/{dataset_id}/document/create-by-text"]["post"]
    ref = create["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    body = schemas[ref.rsplit("/", 1)[1]]
    assert body["required"] == ["name", "text"] and "process_rule" in body["properties"]
    upload = document["paths"]["/v1/datasets/{dataset_id}/document/create-by-file"]["post"]
    assert "multipart/form-data" in upload["requestBody"]["content"]
    listing = document["paths"]["/v1/datasets"]["get"]
    assert {p["name"] for p in listing["parameters"]} >= {"page", "limit", "keyword"}
    assert document["paths"]["/v1/openapi.json"]["get"]["security"] == []
    for ref in _refs(document):
        assert ref.startswith("#/components/")
        section, name = ref.split("/")[2:4]
        assert name in document["components"][section], ref
