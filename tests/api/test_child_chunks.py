"""Parent-child datasets over HTTP: Dify's hierarchical process rule, retrieval records with their
matching child chunks, and the child chunk endpoints."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Api

FILLER = "The estate keeps careful records of every harvest and every visitor."
TEXT = "\n\n".join(f"Chapter {i}. {FILLER} Only here grows the tea called zebra{i}." for i in range(4))
HIERARCHICAL = {
    "mode": "hierarchical",
    "rules": {
        "pre_processing_rules": [{"id": "remove_extra_spaces", "enabled": True}],
        "segmentation": {"separator": "\\n\\n", "max_tokens": 200},
        "parent_mode": "paragraph",
        "subchunk_segmentation": {"separator": "\\n", "max_tokens": 16},
    },
}


def _setup(api: Api, *, per_document: bool = False) -> tuple[str, str, list[dict[str, Any]]]:
    """A parent-child document: in a dataset made so, or (``per_document``) by its own rule."""
    rule = {"doc_form": "hierarchical_model", "process_rule": HIERARCHICAL}
    dataset = api.create_dataset(**({} if per_document else rule))
    document = api.indexed_text(dataset, "estate", TEXT, **(rule if per_document else {}))
    segments = api.get(f"/v1/datasets/{dataset}/documents/{document}/segments").json
    assert segments["total"] == 4
    assert segments["doc_form"] == ("text_model" if per_document else "hierarchical_model")
    return dataset, document, segments["data"]


def _retrieve(api: Api, dataset: str, query: str, method: str = "hybrid_search") -> list[dict[str, Any]]:
    body = api.post(
        f"/v1/datasets/{dataset}/retrieve",
        json={"query": query, "retrieval_model": {"search_method": method, "top_k": 4}},
    ).json
    return list(body["records"])


def test_hierarchical_rule_indexes_children_and_retrieval_returns_parents(api: Api) -> None:
    dataset, _, segments = _setup(api)
    for method in ("hybrid_search", "keyword_search", "full_text_search"):
        records = _retrieve(api, dataset, "zebra2", method)
        assert records[0]["segment"]["id"] == segments[2]["id"], method
        assert records[0]["segment"]["content"] == segments[2]["content"]
        best = records[0]["child_chunks"][0]
        assert "zebra2" in best["content"] and best["position"] >= 1 and best["score"] > 0
    records = _retrieve(api, dataset, "careful records of every harvest")
    assert len({r["segment"]["id"] for r in records}) == len(records) == 4
    scores = [c["score"] for r in records for c in r["child_chunks"][:1]]
    assert scores and all(s >= 0 for s in scores)


@pytest.mark.parametrize("per_document", [False, True], ids=["dataset_rule", "document_rule"])
def test_child_chunk_endpoints(api: Api, per_document: bool) -> None:
    dataset, document, segments = _setup(api, per_document=per_document)
    parent = segments[1]["id"]
    base = f"/v1/datasets/{dataset}/documents/{document}/segments/{parent}/child_chunks"
    listed = api.get(base).json
    assert listed["total"] == len(listed["data"]) >= 2
    assert [c["position"] for c in listed["data"]] == list(range(1, listed["total"] + 1))
    assert all(c["segment_id"] == parent for c in listed["data"])

    created = api.post(base, json={"content": "A wombat guards the drying room."})
    assert created.status_code == 200, created.json
    child = created.json["data"]
    assert child["position"] == listed["total"] + 1
    assert _retrieve(api, dataset, "wombat", "keyword_search")[0]["child_chunks"][0]["id"] == child["id"]

    changed = api.patch(f"{base}/{child['id']}", json={"content": "A quokka guards the drying room."})
    assert changed.status_code == 200 and changed.json["data"]["id"] == child["id"]
    assert not _retrieve(api, dataset, "wombat", "full_text_search")
    assert api.get(f"{base}?keyword=quokka").json["total"] == 1

    assert api.delete(f"{base}/{child['id']}").json == {"result": "success"}
    assert not _retrieve(api, dataset, "quokka", "keyword_search")
    assert api.get(f"{base}/{child['id']}").status_code == 405  # no single-chunk GET (as in Dify)
    missing = api.patch(f"{base}/{child['id']}", json={"content": "x"})
    assert missing.status_code == 404 and missing.json["code"] == "not_found"


def test_editing_a_parent_over_http_regenerates_its_children(api: Api) -> None:
    dataset, document, segments = _setup(api)
    parent = segments[0]["id"]
    base = f"/v1/datasets/{dataset}/documents/{document}/segments/{parent}"
    before = {c["id"] for c in api.get(f"{base}/child_chunks").json["data"]}
    api.post(base, json={"segment": {"content": "Chapter zero now grows capybara oolong.\nNothing else."}})
    after = api.get(f"{base}/child_chunks").json["data"]
    assert {c["content"] for c in after} == {"Chapter zero now grows capybara oolong.", "Nothing else."}
    assert not before & {c["id"] for c in after}
    assert _retrieve(api, dataset, "capybara", "full_text_search")[0]["segment"]["id"] == parent


def test_bad_child_chunk_requests_name_the_problem(api: Api) -> None:
    dataset, document, segments = _setup(api)
    base = f"/v1/datasets/{dataset}/documents/{document}/segments/{segments[0]['id']}/child_chunks"
    empty = api.post(base, json={"content": ""})
    assert empty.status_code == 400 and "content" in empty.json["message"]
    too_long = api.post(base, json={"content": "x" * 100_001})
    assert too_long.status_code == 400 and "content" in too_long.json["message"]
    only = api.get(base).json["data"]
    for child in only[1:]:
        assert api.delete(f"{base}/{child['id']}").status_code == 200
    last = api.delete(f"{base}/{only[0]['id']}")
    assert last.status_code == 400 and "at least one child chunk" in last.json["message"]

    flat = api.create_dataset("flat")
    flat_doc = api.indexed_text(flat, "plain", "Plain text.")
    flat_segment = api.get(f"/v1/datasets/{flat}/documents/{flat_doc}/segments").json["data"][0]["id"]
    listed = api.get(f"/v1/datasets/{flat}/documents/{flat_doc}/segments/{flat_segment}/child_chunks")
    assert listed.status_code == 200 and listed.json["total"] == 0
    flat_base = f"/v1/datasets/{flat}/documents/{flat_doc}/segments/{flat_segment}/child_chunks"
    refused = api.post(flat_base, json={"content": "x"})
    assert refused.status_code == 400 and "hierarchical_model" in refused.json["message"]
    assert refused.json["code"] == "invalid_input"
    rule = {**HIERARCHICAL, "rules": {"parent_mode": "chapter"}}
    bad_mode = api.post(
        f"/v1/datasets/{flat}/document/create-by-text", json={"name": "x", "text": "y", "process_rule": rule}
    )
    assert bad_mode.status_code == 400 and "parent_mode" in bad_mode.json["message"]
