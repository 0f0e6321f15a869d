"""``POST /v1/kb-search``: the agent tool over HTTP, its budget and its argument checks."""

from __future__ import annotations

from tests.agent_tools.test_search_tool import LEAVE
from tests.api.conftest import Api


def test_the_http_endpoint_applies_the_same_budget(api: Api) -> None:
    dataset_id = api.create_dataset("handbook")
    api.indexed_text(dataset_id, "leave.md", LEAVE)
    answer = api.post("/v1/kb-search", json={"query": "年假", "max_chars": 50})
    assert answer.status_code == 200, answer.json
    assert answer.json["total_chars"] <= 50 and answer.json["snippets"][0]["truncated"] is True
    refused = api.post("/v1/kb-search", json={"query": "年假", "max_chars": 1})
    assert refused.status_code == 400 and "max_chars" in str(refused.json)
