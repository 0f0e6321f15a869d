"""Retrieval: one dataset (retrieve and its hit-testing alias, with overrides) and across datasets."""

from __future__ import annotations

from tests.api.conftest import Api


def test_retrieve_with_override_and_alias(api: Api) -> None:
    dataset = api.create_dataset(retrieval_model={"search_method": "hybrid_search", "top_k": 1})
    document = api.indexed_text(
        dataset, "teas", "Longjing is a green tea from Hangzhou.\n\n铁观音产自福建安溪。"
    )
    body = api.post(f"/v1/datasets/{dataset}/retrieve", json={"query": "铁观音产自哪里"}).json
    assert body["query"] == {"content": "铁观音产自哪里"} and len(body["records"]) == 1
    record = body["records"][0]
    assert record["segment"]["document"] == {
        "id": document,
        "data_source_type": "upload_file",
        "name": "teas",
    }
    assert set(record["scores"]) == {"semantic", "full_text"} and record["dataset"]["id"] == dataset
    keyword_only = api.post(
        f"/v1/datasets/{dataset}/hit-testing",
        json={"query": "铁观音", "retrieval_model": {"search_method": "keyword_search", "top_k": 3}},
    ).json
    assert keyword_only["records"] and set(keyword_only["records"][0]["scores"]) == {"keyword"}
    none = api.post(
        f"/v1/datasets/{dataset}/retrieve",
        json={
            "query": "铁观音",
            "retrieval_model": {"score_threshold_enabled": True, "score_threshold": 1.0},
        },
    ).json
    assert none["records"] == []  # no relevance reaches 1
    outside = api.post(
        f"/v1/datasets/{dataset}/retrieve",
        json={
            "query": "铁观音",
            "retrieval_model": {"score_threshold_enabled": True, "score_threshold": 2.0},
        },
    )
    assert outside.status_code == 400 and "score_threshold" in outside.json["message"]


def test_retrieve_across_datasets(api: Api) -> None:
    tea = api.create_dataset("tea", description="tea varieties and brewing")
    shipping = api.create_dataset("shipping", description="orders, delivery and returns")
    api.indexed_text(tea, "tea", "Longjing is a green tea from Hangzhou, brewed at 80 degrees.")
    api.indexed_text(shipping, "ship", "Orders placed before 4 pm ship the same day; returns within 30 days.")
    both = api.post("/v1/retrieve", json={"query": "when do orders ship", "top_k": 2}).json
    assert set(both["datasets"]) == {tea, shipping} and both["routing"] == "multiple"
    assert both["records"][0]["dataset"] == {"id": shipping, "name": "shipping"}
    single = api.post(
        "/v1/retrieve",
        json={"query": "green tea brewing temperature", "routing": "single", "datasets": ["tea", shipping]},
    ).json
    assert single["routing"] == "single" and single["router"] == "embedding" and len(single["datasets"]) == 1
    assert all(record["dataset"]["id"] == single["datasets"][0] for record in single["records"])
