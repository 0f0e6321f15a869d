"""Answers over HTTP with a (scripted) chat model: Dify's chat-messages and OpenAI's chat
completions, streamed and blocking."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import TestResponse

from tests.api.conftest import Api, context_of, make_app
from tests.fixtures.openai_server import Reply, ScriptedChatServer

LEAVE = "员工每年享有十五天带薪年假。年假需要提前两周向主管提交申请。"
#: The model's answer: a valid ``[1]``, then ``[9]`` (no such source) split across two deltas.
SPLIT_INVALID = ("员工每年有十五天带薪年假[1]", "[", "9]。")
LLM = {"answerer": "llm", "repair_citations": False}


class ChatApi:
    """An API over one indexed handbook dataset, answering with a scripted chat model."""

    def __init__(self, api: Api, server: ScriptedChatServer, dataset_id: str) -> None:
        self.api = api
        self.server = server
        self.dataset_id = dataset_id


@pytest.fixture
def chat(tmp_path: Path) -> Iterator[ChatApi]:
    with ScriptedChatServer(lambda body: Reply.streamed(*SPLIT_INVALID)) as server:
        app = make_app(tmp_path / "home", llm_base_url=server.base_url, llm_model="scripted")
        try:
            _, key = context_of(app).keys.create(name="chat")
            api = Api(app.test_client(), key)
            dataset_id = api.create_dataset("handbook")
            api.indexed_text(dataset_id, "leave.md", LEAVE)
            yield ChatApi(api, server, dataset_id)
        finally:
            context_of(app).close()


def sse(response: TestResponse) -> list[Any]:
    """The ``data:`` payloads of a server-sent event stream (``[DONE]`` as the string)."""
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "text/event-stream"
    payloads: list[Any] = []
    for block in response.get_data(as_text=True).split("\n\n"):
        if block.startswith("data: "):
            data = block[len("data: ") :]
            payloads.append(data if data == "[DONE]" else json.loads(data))
    return payloads


def test_openai_stream_never_sends_a_marker_that_names_no_source(chat: ChatApi) -> None:
    response = chat.api.post(
        "/v1/chat/completions",
        json={
            "model": "handbook",
            "stream": True,
            "messages": [{"role": "user", "content": "年假有几天？"}],
            "answer": LLM,
        },
    )
    events = sse(response)
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    deltas = [chunk["choices"][0]["delta"].get("content", "") for chunk in chunks]
    assert all("[9]" not in delta for delta in deltas)
    streamed = "".join(deltas)
    assert streamed == "员工每年有十五天带薪年假[1]。"
    last = chunks[-1]
    assert last["choices"][0]["finish_reason"] == "stop"
    assert "content_final" not in last  # what streamed is already the final text
    assert [reference["index"] for reference in last["references"]] == [1]
    assert chat.server.requests[-1]["stream"] is True


def test_dify_stream_never_sends_a_marker_that_names_no_source(chat: ChatApi) -> None:
    response = chat.api.post(
        "/v1/chat-messages",
        json={"query": "年假有几天？", "response_mode": "streaming", "answer": LLM},
    )
    events = sse(response)
    messages = [event["answer"] for event in events if event["event"] == "message"]
    assert all("[9]" not in message for message in messages)
    assert "".join(messages) == "员工每年有十五天带薪年假[1]。"
    assert [event["event"] for event in events if event["event"] != "message"] == ["message_end"]
    (end,) = [event for event in events if event["event"] == "message_end"]
    assert [resource["position"] for resource in end["metadata"]["retriever_resources"]] == [1]


def test_blocking_answers_drop_the_marker_too(chat: ChatApi) -> None:
    response = chat.api.post(
        "/v1/chat/completions",
        json={"model": "zhiku", "messages": [{"role": "user", "content": "年假有几天？"}], "answer": LLM},
    )
    assert response.status_code == 200, response.json
    assert response.json["choices"][0]["message"]["content"] == "员工每年有十五天带薪年假[1]。"
