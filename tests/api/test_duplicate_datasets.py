"""A dataset named twice in one question — the same id twice, or by name and by id — is searched
once, over ``/v1/retrieve`` and over the chat APIs (both ask ``KnowledgeBase.retrieve``)."""

from __future__ import annotations

from flask import Flask

from tests.api.conftest import Api, context_of

LEAVE = "员工每年享有十五天带薪年假。年假需要提前两周向主管提交申请。"


def test_retrieve_counts_a_dataset_named_twice_once(api: Api) -> None:
    dataset_id = api.create_dataset("handbook")
    api.indexed_text(dataset_id, "leave.md", LEAVE)
    for names in ([dataset_id, dataset_id], ["handbook", dataset_id], [dataset_id, "handbook", "handbook"]):
        response = api.post("/v1/retrieve", json={"query": "年假有几天", "datasets": names})
        assert response.status_code == 200, response.json
        assert response.json["datasets"] == [dataset_id], names
        assert len(response.json["records"]) == 1


def test_chat_datasets_named_twice_are_asked_once(app: Flask, api: Api) -> None:
    dataset_id = api.create_dataset("handbook")
    api.indexed_text(dataset_id, "leave.md", LEAVE)
    kb = context_of(app).kb
    asked: list[list[str] | None] = []
    retrieve = kb.retrieve

    def spy(query: str, **kwargs: object) -> object:
        result = retrieve(query, **kwargs)  # type: ignore[arg-type]
        asked.append(list(result.datasets))
        return result

    kb.retrieve = spy  # type: ignore[assignment,method-assign]
    response = api.post(
        "/v1/chat-messages",
        json={"query": "年假有几天", "response_mode": "blocking", "datasets": ["handbook", dataset_id]},
    )
    assert response.status_code == 200, response.json
    assert asked and all(datasets == [dataset_id] for datasets in asked), asked
    resources = response.json["metadata"]["retriever_resources"]
    assert [resource["position"] for resource in resources] == [1]
