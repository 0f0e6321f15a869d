"""A Q&A dataset through the API: the indexing worker asks the (scripted) chat model for pairs,
and retrieval returns the generated answer."""

from __future__ import annotations

from pathlib import Path

from tests.api.conftest import Api, context_of, make_app
from tests.fixtures.openai_server import Reply, ScriptedChatServer

PAIRS = "Q1: 茶园几点开门？\nA1: 早上八点。\n\nQ2: 茶园哪天闭园？\nA2: 周一。"


def test_qa_document_indexed_by_the_worker_answers_a_paraphrase(tmp_path: Path) -> None:
    with ScriptedChatServer(lambda body: Reply.text(PAIRS)) as server:
        app = make_app(tmp_path / "home", llm_base_url=server.base_url, llm_model="scripted")
        try:
            _, key = context_of(app).keys.create(name="qa")
            api = Api(app.test_client(), key)
            dataset_id = api.create_dataset("faq", doc_form="qa_model")
            api.indexed_text(dataset_id, "hours.txt", "茶园每天早上八点开门，下午五点关门，周一闭园。")
            response = api.post(f"/v1/datasets/{dataset_id}/retrieve", json={"query": "早上几点可以进茶园"})
            assert response.status_code == 200, response.json
            top = response.json["records"][0]["segment"]
            assert top["content"] == "茶园几点开门？" and top["answer"] == "早上八点。"
        finally:
            context_of(app).close()
    assert server.requests, "the worker asked the chat model"
