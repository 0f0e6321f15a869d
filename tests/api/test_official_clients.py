"""The official clients against a real socket: OpenAI's Python SDK and Dify's, as a chat front-end
or an integration would call zhiku — models listed, answers cited, streams parsed, agent steps
readable, a conversation continued."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from werkzeug.serving import make_server

from tests.api.conftest import Api, context_of, make_app
from tests.fixtures.openai_server import Reply, ScriptedChatServer

openai = pytest.importorskip("openai", reason="the OpenAI SDK is a dev dependency")
dify_client = pytest.importorskip("dify_client", reason="the Dify SDK is a dev dependency")

LEAVE = "员工每年享有十五天带薪年假。年假需要提前两周向主管提交申请。"
LLM = {"answerer": "llm", "repair_citations": False}


def model(body: dict[str, Any]) -> Reply:
    """Reads each question as itself; searches once in agent mode; answers citing [1]."""
    question = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    tools = [tool["function"]["name"] for tool in body.get("tools", [])]
    if tools == ["understand"]:
        return Reply.tool_call("understand", {"query": question.split("问题：")[-1], "retrieve": True})
    if tools == ["kb_search"] and not any(m["role"] == "tool" for m in body["messages"]):
        return Reply.tool_call("kb_search", {"query": "年假天数"}, content="查年假规定。")
    return Reply.streamed("员工每年有十五天", "带薪年假[1]。")


@dataclass
class Served:
    base_url: str
    key: str


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    with ScriptedChatServer(model) as chat:
        app = make_app(tmp_path / "home", llm_base_url=chat.base_url, llm_model="scripted")
        _, key = context_of(app).keys.create(name="clients")
        api = Api(app.test_client(), key)
        api.indexed_text(api.create_dataset("handbook"), "leave.md", LEAVE)
        server = make_server("127.0.0.1", 0, app, threaded=True)
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        try:
            yield Served(f"http://127.0.0.1:{server.server_port}/v1", key)
        finally:
            server.shutdown()
            thread.join(timeout=5)
            context_of(app).close()


def test_the_openai_sdk_lists_models_and_reads_cited_answers_and_agent_steps(served: Served) -> None:
    client = openai.OpenAI(base_url=served.base_url, api_key=served.key, max_retries=0)
    assert [m.id for m in client.models.list()] == ["zhiku", "handbook"]
    messages = [{"role": "user", "content": "年假有几天？"}]
    answer = {"answer": LLM}
    completion = client.chat.completions.create(model="handbook", messages=messages, extra_body=answer)
    assert completion.choices[0].message.content == "员工每年有十五天带薪年假[1]。"
    references = (completion.model_extra or {})["references"]
    assert [reference["document_name"] for reference in references] == ["leave.md"]
    stream = client.chat.completions.create(
        model="zhiku", messages=messages, stream=True, extra_body={"answer": {**LLM, "mode": "agent"}}
    )
    chunks = list(stream)
    steps = [(chunk.model_extra or {}).get("agent_step") for chunk in chunks]
    assert [step["query"] for step in steps if step] == ["年假天数"]
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    assert text == "员工每年有十五天带薪年假[1]。"


def test_the_dify_sdk_asks_streams_and_continues_a_conversation(served: Served) -> None:
    client = dify_client.ChatClient(served.key)
    client.base_url = served.base_url
    first = client.create_chat_message({}, "年假有几天？", "alice")
    first.raise_for_status()
    body = first.json()
    assert body["answer"] == "员工每年有十五天带薪年假[1]。"
    assert body["metadata"]["retriever_resources"][0]["document_name"] == "leave.md"
    follow_up = "那需要提前多久申请？"
    streamed = client.create_chat_message(
        {}, follow_up, "alice", response_mode="streaming", conversation_id=body["conversation_id"]
    )
    events = [
        json.loads(line[len("data: ") :])
        for line in streamed.iter_lines(decode_unicode=True)
        if line and line.startswith("data: ")
    ]
    assert {event["conversation_id"] for event in events} == {body["conversation_id"]}
    assert events[-1]["event"] == "message_end"
    conversations = client.get_conversations("alice").json()["data"]
    assert [conversation["id"] for conversation in conversations] == [body["conversation_id"]]
