"""``/v1/datasets/{id}/sections`` (list, describe) and ``retrieval_model.section`` on retrieve."""

from __future__ import annotations

import io
from typing import Any

import pytest

from tests.api.conftest import Api

GUIDE = (
    "# Guide\n\nGreen tea guide overview.\n\n## Brewing\n\nBrew green tea at eighty degrees.\n\n"
    "## Storage\n\nStore green tea sealed and cool.\n"
)


@pytest.fixture
def guide(api: Api) -> str:
    dataset = api.create_dataset("guide")
    upload = (io.BytesIO(GUIDE.encode()), "guide.md")
    response = api.post(f"/v1/datasets/{dataset}/document/create-by-file", data={"file": upload})
    assert response.status_code == 200, response.json
    (status,) = api.wait(dataset, response.json["batch"])
    assert status["indexing_status"] == "completed", status
    return dataset


def _retrieve(api: Api, dataset: str, **model: Any) -> Any:
    body = {"query": "green tea", "retrieval_model": {"search_method": "hybrid_search", "top_k": 5, **model}}
    return api.post(f"/v1/datasets/{dataset}/retrieve", json=body)


def test_sections_are_listed_and_described(api: Api, guide: str) -> None:
    listed = api.get(f"/v1/datasets/{guide}/sections")
    assert listed.status_code == 200, listed.json
    assert listed.json == {
        "data": [
            {"name": "Guide", "segment_count": 1, "description": None},
            {"name": "Guide > Brewing", "segment_count": 1, "description": None},
            {"name": "Guide > Storage", "segment_count": 1, "description": None},
        ],
        "total": 3,
    }
    body = {"sections": [{"name": "Guide>Storage", "description": "Keeping tea fresh"}]}
    described = api.patch(f"/v1/datasets/{guide}/sections", json=body)
    assert described.status_code == 200, described.json
    assert described.json["data"] == [
        {"name": "Guide > Storage", "segment_count": 1, "description": "Keeping tea fresh"}
    ]
    listed = api.get(f"/v1/datasets/{guide}/sections").json["data"]
    assert [s["description"] for s in listed] == [None, None, "Keeping tea fresh"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"sections": [{"name": " > ", "description": "x"}]}, "name"),
        ({"sections": [{"name": "Guide", "description": "x" * 3000}]}, "description"),
        ({"sections": []}, "sections"),
        ({"sections": [{"name": "Guide", "colour": "red"}]}, "colour"),
    ],
)
def test_bad_descriptions_are_400_naming_the_field(
    api: Api, guide: str, body: dict[str, Any], field: str
) -> None:
    response = api.patch(f"/v1/datasets/{guide}/sections", json=body)
    assert response.status_code == 400, response.json
    assert {"code", "message", "status"} <= set(response.json)
    assert field in response.json["message"]


def test_retrieve_restricted_to_a_section(api: Api, guide: str) -> None:
    response = _retrieve(api, guide, section="Guide > Storage")
    assert response.status_code == 200, response.json
    assert [r["segment"]["content"] for r in response.json["records"]] == [
        "## Storage\n\nStore green tea sealed and cool."
    ]
    assert len(_retrieve(api, guide, section="Guide").json["records"]) == 3
    assert len(_retrieve(api, guide).json["records"]) == 3


def test_a_dify_shaped_retrieval_model_keeps_its_section(api: Api, guide: str) -> None:
    """Dify's fields (``reranking_enable``, ``weights``, ...) make the body Dify's shape; zhiku's
    own fields in it still apply (the section was silently dropped)."""
    dify = {"reranking_enable": False, "score_threshold_enabled": False, "reorder": True}
    response = _retrieve(api, guide, section="Guide > Storage", **dify)
    assert response.status_code == 200, response.json
    assert [r["segment"]["content"] for r in response.json["records"]] == [
        "## Storage\n\nStore green tea sealed and cool."
    ]


def test_a_bad_section_is_400_naming_it(api: Api, guide: str) -> None:
    response = _retrieve(api, guide, section="   ")
    assert response.status_code == 400, response.json
    assert "section" in response.json["message"]


def test_unknown_dataset_is_404(api: Api) -> None:
    assert api.get("/v1/datasets/nope/sections").status_code == 404
