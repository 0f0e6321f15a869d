"""Dify's metadata endpoints, metadata_filtering_conditions on retrieve, hit counts, and the
External Knowledge API (``POST /v1/retrieval``) answering a request written as Dify sends it."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from tests.api.conftest import Api, context_of

TEXTS = {
    "spring.md": "Spring green tea is picked in March; 明前茶 is the first flush of green tea.",
    "autumn.md": "Autumn oolong tea is roasted; its green tea cousin is picked later in the year.",
    "winter.md": "Winter green tea is rare; stored green tea keeps for a year when sealed.",
}


@pytest.fixture
def shelf(api: Api) -> dict[str, Any]:
    dataset = api.create_dataset("shelf")
    docs = {name: api.indexed_text(dataset, name, text) for name, text in TEXTS.items()}
    season = api.post(f"/v1/datasets/{dataset}/metadata", json={"type": "string", "name": "season"})
    assert season.status_code == 200, season.json
    grade = api.post(f"/v1/datasets/{dataset}/metadata", json={"type": "number", "name": "grade"})
    fields = {"season": season.json["id"], "grade": grade.json["id"]}
    values = {"spring.md": ("spring", 1), "autumn.md": ("autumn", 2), "winter.md": ("winter", 3)}
    operations = [
        {
            "document_id": docs[name],
            "metadata_list": [
                {"id": fields["season"], "name": "season", "value": season_value},
                {"id": fields["grade"], "name": "grade", "value": grade_value},
            ],
        }
        for name, (season_value, grade_value) in values.items()
    ]
    response = api.post(f"/v1/datasets/{dataset}/documents/metadata", json={"operation_data": operations})
    assert response.status_code == 200, response.json
    return {"dataset": dataset, "docs": docs, "fields": fields}


def _is(name: str, value: Any, operator: str = "is") -> dict[str, Any]:
    return {"name": name, "comparison_operator": operator, "value": value}


def _retrieve(api: Api, dataset: str, conditions: list[dict[str, Any]], **model: Any) -> Any:
    body = {
        "query": "green tea",
        "retrieval_model": {
            "search_method": "hybrid_search",
            "reranking_enable": False,
            "top_k": 3,
            "metadata_filtering_conditions": {"logical_operator": "and", "conditions": conditions},
            **model,
        },
    }
    return api.post(f"/v1/datasets/{dataset}/retrieve", json=body)


def test_fields_are_listed_with_their_counts(api: Api, shelf: dict[str, Any]) -> None:
    listed = api.get(f"/v1/datasets/{shelf['dataset']}/metadata").json
    assert {(f["name"], f["type"], f["count"]) for f in listed["doc_metadata"]} == {
        ("season", "string", 3),
        ("grade", "number", 3),
    }
    assert listed["built_in_field_enabled"] is False
    builtin = api.get(f"/v1/datasets/{shelf['dataset']}/metadata/built-in").json["fields"]
    assert {"name": "document_name", "type": "string"} in builtin


def test_retrieve_with_metadata_filtering_conditions(api: Api, shelf: dict[str, Any]) -> None:
    response = _retrieve(api, shelf["dataset"], [_is("season", "winter")])
    assert response.status_code == 200, response.json
    assert [r["segment"]["document"]["name"] for r in response.json["records"]] == ["winter.md"]
    response = _retrieve(api, shelf["dataset"], [{"name": "grade", "comparison_operator": "<", "value": 3}])
    assert {r["segment"]["document"]["name"] for r in response.json["records"]} == {"spring.md", "autumn.md"}


def test_builtin_fields_need_enabling(api: Api, shelf: dict[str, Any]) -> None:
    dataset = shelf["dataset"]
    by_name = [{"name": "document_name", "comparison_operator": "start with", "value": "aut"}]
    refused = _retrieve(api, dataset, by_name)
    assert refused.status_code == 400 and "document_name" in refused.json["message"]
    assert api.post(f"/v1/datasets/{dataset}/metadata/built-in/enable").status_code == 200
    records = _retrieve(api, dataset, by_name).json["records"]
    assert [r["segment"]["document"]["name"] for r in records] == ["autumn.md"]


@pytest.mark.parametrize(
    ("condition", "field"),
    [
        ({"name": "colour", "comparison_operator": "is", "value": "x"}, "name"),
        ({"name": "grade", "comparison_operator": "contains", "value": "1"}, "comparison_operator"),
        ({"name": "grade", "comparison_operator": ">", "value": "high"}, "value"),
        ({"name": "season", "comparison_operator": "is"}, "value"),
    ],
)
def test_bad_conditions_are_400_naming_the_field(
    api: Api, shelf: dict[str, Any], condition: dict[str, Any], field: str
) -> None:
    response = _retrieve(api, shelf["dataset"], [condition])
    assert response.status_code == 400, response.json
    assert f"conditions[0].{field}" in response.json["message"]


def test_unknown_operator_is_rejected_by_the_schema(api: Api, shelf: dict[str, Any]) -> None:
    response = _retrieve(api, shelf["dataset"], [{"name": "grade", "comparison_operator": "~", "value": 1}])
    assert response.status_code == 400 and response.json["code"] == "invalid_param"


def test_rename_and_delete_fields(api: Api, shelf: dict[str, Any]) -> None:
    dataset, season = shelf["dataset"], shelf["fields"]["season"]
    renamed = api.patch(f"/v1/datasets/{dataset}/metadata/{season}", json={"name": "when"})
    assert renamed.json == {"id": season, "type": "string", "name": "when"}
    clash = api.post(f"/v1/datasets/{dataset}/metadata", json={"type": "string", "name": "grade"})
    assert clash.status_code == 409
    assert _retrieve(api, dataset, [_is("when", "spring")]).status_code == 200
    assert api.delete(f"/v1/datasets/{dataset}/metadata/{season}").status_code == 200
    names = [f["name"] for f in api.get(f"/v1/datasets/{dataset}/metadata").json["doc_metadata"]]
    assert names == ["grade"]
    assert api.delete(f"/v1/datasets/{dataset}/metadata/{season}").status_code == 404


def test_bad_values_change_no_document(api: Api, shelf: dict[str, Any]) -> None:
    dataset, grade = shelf["dataset"], shelf["fields"]["grade"]
    docs = shelf["docs"]
    operations = [
        {"document_id": docs["spring.md"], "metadata_list": [{"id": grade, "value": 9}]},
        {"document_id": docs["autumn.md"], "metadata_list": [{"id": grade, "value": "not a number"}]},
    ]
    response = api.post(f"/v1/datasets/{dataset}/documents/metadata", json={"operation_data": operations})
    assert response.status_code == 400 and "grade" in response.json["message"]
    records = _retrieve(api, dataset, [_is("grade", 9, "=")]).json["records"]
    assert records == []


def test_hit_count_goes_up_with_each_retrieval(api: Api, shelf: dict[str, Any]) -> None:
    dataset, doc = shelf["dataset"], shelf["docs"]["winter.md"]
    winter = [{"name": "season", "comparison_operator": "is", "value": "winter"}]
    for _ in range(3):
        assert _retrieve(api, dataset, winter).status_code == 200
    segments = api.get(f"/v1/datasets/{dataset}/documents/{doc}/segments").json["data"]
    assert [s["hit_count"] for s in segments] == [3]


def test_scoped_key_cannot_touch_another_datasets_metadata(
    app: Flask, api: Api, shelf: dict[str, Any]
) -> None:
    other = api.create_dataset("other")
    _, secret = context_of(app).keys.create(name="scoped", datasets=[other])
    scoped = Api(app.test_client(), secret)
    dataset = shelf["dataset"]
    assert scoped.get(f"/v1/datasets/{dataset}/metadata").status_code == 404
    created = scoped.post(f"/v1/datasets/{dataset}/metadata", json={"type": "string", "name": "x"})
    assert created.status_code == 404


# -- the External Knowledge API ---------------------------------------------------------------


def test_external_knowledge_request_as_dify_documents_it(api: Api, shelf: dict[str, Any]) -> None:
    response = api.client.post(
        "/v1/retrieval",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {api.key}"},
        json={
            "knowledge_id": shelf["dataset"],
            "query": "first flush green tea",
            "retrieval_setting": {"top_k": 2, "score_threshold": 0.0},
        },
    )
    assert response.status_code == 200, response.json
    records = response.json["records"]
    assert 1 <= len(records) <= 2
    assert records[0]["title"] == "spring.md"
    assert "明前茶" in records[0]["content"]
    assert 0.0 <= records[0]["score"] <= 1.0
    assert records[0]["metadata"]["season"] == "spring"
    assert isinstance(records[0]["metadata"], dict)


def test_external_knowledge_metadata_condition_and_threshold(api: Api, shelf: dict[str, Any]) -> None:
    body = {
        "knowledge_id": shelf["dataset"],
        "query": "green tea",
        "retrieval_setting": {"top_k": 5, "score_threshold": 0.0},
        "metadata_condition": {
            "logical_operator": "or",
            "conditions": [
                {"name": ["season"], "comparison_operator": "is", "value": "autumn"},
                {"name": "grade", "comparison_operator": "≥", "value": "3"},
            ],
        },
    }
    records = api.post("/v1/retrieval", json=body).json["records"]
    assert {r["title"] for r in records} == {"autumn.md", "winter.md"}
    body["retrieval_setting"] = {"top_k": 5, "score_threshold": 0.5}
    kept = api.post("/v1/retrieval", json=body).json["records"]
    assert kept and all(r["score"] >= 0.5 for r in kept)


def test_external_knowledge_off_topic_question_gets_no_record(api: Api, shelf: dict[str, Any]) -> None:
    """Dify asks with its threshold (0.9, or 0.0 = the dataset's own): an off-topic question gets
    an empty list, never a record scored 1.0 because it was the best of bad hits."""
    for threshold in (0.9, 0.0):
        body = {
            "knowledge_id": shelf["dataset"],
            "query": "What is the CEO's salary?",
            "retrieval_setting": {"top_k": 3, "score_threshold": threshold},
        }
        response = api.post("/v1/retrieval", json=body)
        assert response.status_code == 200 and response.json["records"] == [], threshold


def test_external_knowledge_errors_in_difys_codes(app: Flask, api: Api, shelf: dict[str, Any]) -> None:
    setting = {"top_k": 1, "score_threshold": 0.5}
    body = {"knowledge_id": shelf["dataset"], "query": "tea", "retrieval_setting": setting}
    client = app.test_client()
    missing = client.post("/v1/retrieval", json=body)
    assert missing.status_code == 403 and missing.json["error_code"] == 1001
    wrong = client.post("/v1/retrieval", json=body, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 403 and wrong.json["error_code"] == 1002
    unknown = api.post("/v1/retrieval", json={**body, "knowledge_id": "no-such-dataset"})
    assert unknown.status_code == 404 and unknown.json["error_code"] == 2001
    other = api.create_dataset("other")
    _, secret = context_of(app).keys.create(name="scoped", datasets=[other])
    hidden = client.post("/v1/retrieval", json=body, headers={"Authorization": f"Bearer {secret}"})
    assert hidden.status_code == 404 and hidden.json["error_code"] == 2001
    bad = api.post("/v1/retrieval", json={**body, "retrieval_setting": {"top_k": 0, "score_threshold": 0.5}})
    assert bad.status_code == 400 and "retrieval_setting.top_k" in bad.json["message"]


@pytest.mark.parametrize(
    "condition",
    [
        {"name": "grade", "comparison_operator": ">", "value": True},
        {"name": "grade", "comparison_operator": "=", "value": False},
        {"name": "season", "comparison_operator": "is", "value": True},
        {"name": "grade", "comparison_operator": "in", "value": ["1", True]},
    ],
)
def test_a_boolean_is_not_a_value(api: Api, shelf: dict[str, Any], condition: dict[str, Any]) -> None:
    """``true`` was read as the number 1 (and the string "1")."""
    response = _retrieve(api, shelf["dataset"], [condition])
    assert response.status_code == 400 and response.json["code"] == "invalid_param", response.json
    assert "conditions.0.value" in response.json["message"], response.json["message"]
