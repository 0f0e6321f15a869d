"""Answers over HTTP with a (scripted) chat model: Dify's chat-messages and OpenAI's chat
completions, streamed and blocking."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from flask import Flask
from werkzeug.serving import make_server
from werkzeug.test import TestResponse

from tests.api.conftest import Api, context_of, make_app
from tests.fixtures.openai_server import ChatHandler, Reply, ScriptedChatServer

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


@contextmanager
def chat_app(tmp_path: Path, handler: ChatHandler, **settings: Any) -> Iterator[ChatApi]:
    """An app whose chat model is a scripted server answering with ``handler``."""
    with ScriptedChatServer(handler) as server:
        app = make_app(tmp_path / "home", llm_base_url=server.base_url, llm_model="scripted", **settings)
        try:
            _, key = context_of(app).keys.create(name="chat")
            api = Api(app.test_client(), key)
            dataset_id = api.create_dataset("handbook")
            api.indexed_text(dataset_id, "leave.md", LEAVE)
            yield ChatApi(api, server, dataset_id)
        finally:
            context_of(app).close()


@pytest.fixture
def chat(tmp_path: Path) -> Iterator[ChatApi]:
    with chat_app(tmp_path, lambda body: Reply.streamed(*SPLIT_INVALID)) as app:
        yield app


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


def test_every_event_of_a_new_conversation_carries_its_id(chat: ChatApi) -> None:
    ask = {"query": "年假有几天？", "response_mode": "streaming", "answer": LLM, "user": "amy"}
    events = sse(chat.api.post("/v1/chat-messages", json=ask))
    assert len(events) >= 3
    conversation_id = events[-1]["conversation_id"]
    assert conversation_id
    assert [event["conversation_id"] for event in events] == [conversation_id] * len(events)
    listed = chat.api.get("/v1/conversations", query_string={"user": "amy"}).json["data"]
    assert [conversation["id"] for conversation in listed] == [conversation_id]
    stored = chat.api.get("/v1/messages", query_string={"conversation_id": conversation_id, "user": "amy"})
    assert [message["query"] for message in stored.json["data"]] == ["年假有几天？"]

    follow_up = sse(chat.api.post("/v1/chat-messages", json={**ask, "conversation_id": conversation_id}))
    assert {event["conversation_id"] for event in follow_up} == {conversation_id}
    assert len(chat.api.get("/v1/conversations", query_string={"user": "amy"}).json["data"]) == 1


def test_an_answer_that_fails_mid_stream_leaves_no_empty_conversation(tmp_path: Path) -> None:
    with chat_app(tmp_path, lambda body: Reply.status(503), llm_max_retries=0) as chat:
        ask = {"query": "年假有几天？", "response_mode": "streaming", "answer": LLM}
        events = sse(chat.api.post("/v1/chat-messages", json=ask))
        assert events[-1]["event"] == "error"
        assert events[-1]["conversation_id"]
        assert chat.api.get("/v1/conversations").json["data"] == []
        assert chat.server.requests  # the model was asked


def test_a_client_leaving_mid_stream_leaves_no_empty_conversation(chat: ChatApi) -> None:
    ask = {"query": "年假有几天？", "response_mode": "streaming", "answer": LLM}
    response = chat.api.post("/v1/chat-messages", json=ask, buffered=False)
    first = next(iter(response.response))
    assert json.loads(first.decode().removeprefix("data: "))["conversation_id"]
    assert len(chat.api.get("/v1/conversations").json["data"]) == 1  # made before the first event
    response.close()  # the client hangs up before the answer is finished
    assert chat.api.get("/v1/conversations").json["data"] == []


# -- OpenAI: models ----------------------------------------------------------------------------


def model_ids(api: Api) -> list[str]:
    response = api.get("/v1/models")
    assert response.status_code == 200, response.json
    assert response.json["object"] == "list"
    for model in response.json["data"]:
        assert model["object"] == "model" and model["owned_by"] == "zhiku"
        assert isinstance(model["created"], int)
    return [model["id"] for model in response.json["data"]]


def test_models_are_zhiku_and_each_dataset_the_key_may_use(app: Flask, api: Api) -> None:
    tea = api.create_dataset("tea")
    api.create_dataset("coffee")
    assert model_ids(api) == ["zhiku", "coffee", "tea"]

    _, scoped_secret = context_of(app).keys.create(name="tea only", datasets=[tea])
    scoped = Api(app.test_client(), scoped_secret)
    assert model_ids(scoped) == ["zhiku", "tea"]
    assert scoped.get("/v1/models/tea").json == api.get("/v1/models/tea").json
    assert scoped.get("/v1/models/coffee").status_code == 404  # as if it did not exist
    assert api.get("/v1/models/coffee").json["id"] == "coffee"
    assert api.get("/v1/models/zhiku").json["id"] == "zhiku"
    assert api.get("/v1/models/nothing").status_code == 404
    assert Api(app.test_client(), None).get("/v1/models").status_code == 401


def test_a_dataset_named_like_the_all_datasets_model_is_listed_by_its_id(api: Api) -> None:
    dataset_id = api.create_dataset("zhiku")
    assert model_ids(api) == ["zhiku", dataset_id]
    assert api.get(f"/v1/models/{dataset_id}").json["id"] == dataset_id


def test_models_over_http(app: Flask, api: Api) -> None:
    """A chat front-end's first call, over a real socket."""
    api.create_dataset("tea")
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_port}/v1"
        headers = {"Authorization": f"Bearer {api.key}"}
        listing = httpx.get(f"{base}/models", headers=headers, timeout=30)
        assert listing.status_code == 200
        assert listing.headers["content-type"].startswith("application/json")
        assert [model["id"] for model in listing.json()["data"]] == ["zhiku", "tea"]
        one = httpx.get(f"{base}/models/tea", headers=headers, timeout=30).json()
        assert set(one) == {"id", "object", "created", "owned_by"}
    finally:
        server.shutdown()
        thread.join(timeout=5)


def test_an_off_topic_question_is_answered_not_found_without_asking_the_model(chat: ChatApi) -> None:
    """Nothing in the knowledge base reaches the relevance threshold: the answer says so, in the
    question's language, with no citation, and the chat model is never asked to answer from
    nothing — on OpenAI's chat completions and on Dify's chat-messages, blocking and streamed."""
    asked = len(chat.server.requests)
    openai = chat.api.post(
        "/v1/chat/completions",
        json={"model": "zhiku", "messages": [{"role": "user", "content": "火星有几个卫星？"}], "answer": LLM},
    )
    assert openai.status_code == 200, openai.json
    assert openai.json["choices"][0]["message"]["content"] == "知识库中没有找到与这个问题相关的内容。"
    assert not openai.json.get("references")
    dify = chat.api.post(
        "/v1/chat-messages",
        json={"query": "What is the CEO's salary?", "response_mode": "blocking", "answer": LLM, "user": "u"},
    )
    assert dify.status_code == 200, dify.json
    assert dify.json["answer"] == "The knowledge base has nothing on this question."
    assert dify.json["metadata"]["retriever_resources"] == []
    streamed = sse(
        chat.api.post(
            "/v1/chat-messages",
            json={"query": "How many moons does Mars have?", "response_mode": "streaming", "answer": LLM},
        )
    )
    text = "".join(event["answer"] for event in streamed if event["event"] == "message")
    assert text == "The knowledge base has nothing on this question."
    # the model read each question (the understanding call, a tool call) but wrote no answer
    assert [request["tools"][0]["function"]["name"] for request in chat.server.requests[asked:]] == [
        "understand"
    ] * 3
    on_topic = chat.api.post(
        "/v1/chat-messages", json={"query": "年假有几天？", "response_mode": "blocking", "answer": LLM}
    )
    assert on_topic.json["answer"] == "员工每年有十五天带薪年假[1]。"
    assert len(chat.server.requests) == asked + 5  # three read, then one read and one answer


def test_a_greeting_is_answered_by_the_model_alone_and_labelled_so(tmp_path: Path) -> None:
    """With ``general_answers``, a message the model reads as needing no search is answered by the
    model alone, with no sources and a label in the text; without it, it is searched as usual."""

    def handler(body: dict[str, Any]) -> Reply:
        if body.get("tools"):
            return Reply.tool_call("understand", {"query": "hello", "retrieve": False})
        return Reply.streamed("Hello! How can I help?")

    with chat_app(tmp_path, handler) as chat:
        config = {**LLM, "general_answers": True}
        body = {"query": "hello", "response_mode": "blocking", "answer": config, "user": "u"}
        dify = chat.api.post("/v1/chat-messages", json=body)
        assert dify.status_code == 200, dify.json
        assert dify.json["answer"].startswith("Hello! How can I help?")
        assert "not from the knowledge base" in dify.json["answer"]
        assert dify.json["metadata"]["grounded"] is False
        assert dify.json["metadata"]["plan"]["action"] == "chat"
        assert dify.json["metadata"]["retriever_resources"] == []
        openai = chat.api.post(
            "/v1/chat/completions",
            json={"model": "zhiku", "messages": [{"role": "user", "content": "hello"}], "answer": LLM},
        )
        assert openai.status_code == 200, openai.json
        assert openai.json["grounded"] is True  # general answers are off: searched, found nothing
        answer = openai.json["choices"][0]["message"]["content"]
        assert answer == "The knowledge base has nothing on this question."


def _agent_handler(body: dict[str, Any]) -> Reply:
    if not any(message["role"] == "tool" for message in body["messages"]):
        return Reply.tool_call("kb_search", {"query": "年假天数"}, content="查一下年假。")
    return Reply.text("员工每年有十五天带薪年假[1]。")


def test_agent_mode_streams_each_search_on_both_chat_apis(tmp_path: Path) -> None:
    """Dify's stream carries an ``agent_thought`` per search (tool, tool_input, observation) before
    the answer; OpenAI's carries the same step as ``agent_step`` in a chunk without content."""
    agent = {**LLM, "mode": "agent"}
    with chat_app(tmp_path, _agent_handler) as chat:
        dify = sse(
            chat.api.post(
                "/v1/chat-messages",
                json={"query": "年假有几天？", "response_mode": "streaming", "answer": agent, "user": "u"},
            )
        )
        openai = sse(
            chat.api.post(
                "/v1/chat/completions",
                json={
                    "model": "zhiku",
                    "stream": True,
                    "messages": [{"role": "user", "content": "年假有几天？"}],
                    "answer": agent,
                },
            )
        )
    (thought,) = [event for event in dify if event["event"] == "agent_thought"]
    assert (thought["position"], thought["tool"], thought["observation"]) == (1, "kb_search", "[1]")
    assert json.loads(thought["tool_input"]) == {"query": "年假天数"} and thought["thought"] == "查一下年假。"
    assert thought["conversation_id"] and dify.index(thought) < [e["event"] for e in dify].index("message")
    end = dify[-1]
    assert end["event"] == "message_end" and end["metadata"]["answerer"] == "agent"
    assert end["metadata"]["retriever_resources"][0]["document_name"] == "leave.md"
    steps = [chunk["agent_step"] for chunk in openai[:-1] if "agent_step" in chunk]
    assert [step["query"] for step in steps] == ["年假天数"]
    text = "".join(chunk["choices"][0]["delta"].get("content", "") for chunk in openai[:-1])
    assert text == "员工每年有十五天带薪年假[1]。"


def test_agent_mode_without_a_chat_model_is_a_400_naming_the_fix(tmp_path: Path) -> None:
    app = make_app(tmp_path / "home")
    try:
        _, key = context_of(app).keys.create(name="chat")
        api = Api(app.test_client(), key)
        body = {"query": "年假有几天？", "response_mode": "blocking", "answer": {"mode": "agent"}}
        response = api.post("/v1/chat-messages", json=body)
    finally:
        context_of(app).close()
    assert response.status_code == 400, response.json
    assert "ZHIKU_LLM_BASE_URL" in response.json["message"]
