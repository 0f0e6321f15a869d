"""Segments: list with filters, add, get, update (only that segment re-indexed), delete."""

from __future__ import annotations

from typing import Any

from flask import Flask

from tests.api.conftest import Api, context_of

TEXT = "Longjing is a green tea from Hangzhou.\n\nBlack tea is fully oxidised.\n\n普洱茶需要通风存放。"


def _search(api: Api, dataset: str, query: str, method: str) -> list[str]:
    body = api.post(
        f"/v1/datasets/{dataset}/retrieve",
        json={"query": query, "retrieval_model": {"search_method": method, "top_k": 5}},
    ).json
    return [record["segment"]["id"] for record in body["records"]]


def _setup(api: Api) -> tuple[str, str, list[dict]]:  # type: ignore[type-arg]
    dataset = api.create_dataset(
        process_rule={"splitter": "fixed_separator", "separator": "\n\n", "max_tokens": 50}
    )
    document = api.indexed_text(dataset, "teas", TEXT)
    segments = api.get(f"/v1/datasets/{dataset}/documents/{document}/segments").json
    assert segments["total"] == 3 and segments["doc_form"] == "text_model"
    return dataset, document, segments["data"]


def test_list_filters_and_get(api: Api) -> None:
    dataset, document, segments = _setup(api)
    base = f"/v1/datasets/{dataset}/documents/{document}/segments"
    assert [s["position"] for s in segments] == [1, 2, 3]
    assert [s["content"] for s in api.get(f"{base}?keyword=OXIDISED").json["data"]] == [
        "Black tea is fully oxidised."
    ]
    page = api.get(f"{base}?limit=2&page=2").json
    assert (page["total"], page["has_more"], len(page["data"])) == (3, False, 1)
    assert api.get(f"{base}?status=completed").json["total"] == 3
    assert api.get(f"{base}?status=indexing").json["total"] == 0
    api.post(f"{base}/{segments[0]['id']}", json={"segment": {"enabled": False}})
    assert api.get(f"{base}?enabled=false").json["total"] == 1
    assert api.get(f"{base}?enabled=true").json["total"] == 2
    one = api.get(f"{base}/{segments[1]['id']}").json
    assert one["data"]["content"] == "Black tea is fully oxidised." and one["doc_form"] == "text_model"


def test_update_reindexes_only_that_segment(app: Flask, api: Api) -> None:
    dataset, document, segments = _setup(api)
    base = f"/v1/datasets/{dataset}/documents/{document}/segments"
    index = context_of(app).kb.dataset_index(dataset)
    target, other = segments[1]["id"], segments[0]["id"]

    changed = api.patch(
        f"{base}/{target}", json={"segment": {"content": "Oolong tea is half oxidised, from Anxi."}}
    )
    data = changed.json["data"]
    assert data["id"] == target and data["content"].startswith("Oolong") and "oolong" in data["keywords"]
    assert data["index_node_hash"] != segments[1]["index_node_hash"]
    assert _search(api, dataset, "oolong Anxi", "full_text_search")[0] == target
    assert _search(api, dataset, "oolong Anxi", "keyword_search")[0] == target
    assert _search(api, dataset, "oolong Anxi", "semantic_search")[0] == target
    assert target not in _search(api, dataset, "black fully", "full_text_search")
    assert index.vector.ids() == index.fulltext.ids() == {s["id"] for s in segments}
    untouched = api.get(base).json["data"]

    def unchanged(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # the searches above count hits: hit_count is the one field they change
        return [{**s, "hit_count": None} for s in items if s["id"] != target]

    assert unchanged(untouched) == unchanged(segments)

    keywords = api.post(
        f"{base}/{other}", json={"segment": {"keywords": ["西湖龙井"], "answer": "an answer"}}
    ).json
    assert keywords["data"]["keywords"] == ["西湖龙井"] and keywords["data"]["answer"] == "an answer"
    assert _search(api, dataset, "西湖龙井", "keyword_search")[0] == other

    api.post(f"{base}/{other}", json={"segment": {"enabled": False}})
    assert other not in _search(api, dataset, "Longjing Hangzhou", "full_text_search")
    assert other not in _search(api, dataset, "Longjing Hangzhou", "semantic_search")


def test_add_and_delete(api: Api) -> None:
    dataset, document, segments = _setup(api)
    base = f"/v1/datasets/{dataset}/documents/{document}/segments"
    added = api.post(
        base,
        json={"segments": [{"content": "Jasmine tea is scented with flowers.", "keywords": ["jasmine"]}]},
    )
    new = added.json["data"][0]
    assert new["position"] == 4 and added.json["doc_form"] == "text_model"
    assert _search(api, dataset, "jasmine flowers", "full_text_search")[0] == new["id"]
    document_info = api.get(f"/v1/datasets/{dataset}/documents/{document}").json
    assert document_info["segment_count"] == 4
    assert api.delete(f"{base}/{new['id']}").json == {"result": "success"}
    assert new["id"] not in _search(api, dataset, "jasmine flowers", "full_text_search")
    assert api.get(f"{base}/{new['id']}").status_code == 404
    assert api.get(f"/v1/datasets/{dataset}/documents/{document}").json["segment_count"] == 3
    empty = api.post(base, json={"segments": []})
    assert empty.status_code == 400 and empty.json["details"][0]["loc"] == "segments"


def test_an_edit_with_a_lone_surrogate_is_refused_and_changes_nothing(api: Api) -> None:
    """The reproduction of a failed edit: new content with a keyword holding a lone surrogate
    once answered 500 while the new text was already searchable. Now it is a 400 naming the
    field, and neither the database nor any store has the new text."""
    dataset, document, segments = _setup(api)
    base = f"/v1/datasets/{dataset}/documents/{document}/segments"
    target = segments[1]["id"]
    body = '{"segment": {"content": "Zebra kettles whistle at dawn.", "keywords": ["\\ud800"]}}'
    refused = api.patch(f"{base}/{target}", data=body, content_type="application/json")
    assert refused.status_code == 400, refused.json
    assert "keywords" in str(refused.json)
    assert api.get(f"{base}/{target}").json["data"]["content"] == segments[1]["content"]
    for method in ("full_text_search", "keyword_search"):
        assert target not in _search(api, dataset, "zebra kettles whistle dawn", method), method
    top = api.post(
        f"/v1/datasets/{dataset}/retrieve",
        json={
            "query": "Zebra kettles whistle at dawn.",
            "retrieval_model": {"search_method": "semantic_search"},
        },
    ).json["records"]
    assert all(r["segment"]["content"] != "Zebra kettles whistle at dawn." for r in top)
