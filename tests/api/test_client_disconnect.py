"""A streamed answer whose client goes away stops: the chat model's stream is closed, no more
tokens are asked for — also while nothing is written to the client (a reasoning model thinking
before its first word), when only the server's reading of the connection can tell. Served by
waitress as ``zhiku serve`` serves it, the model a scripted server streaming slowly."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.conftest import Api, context_of, make_app
from tests.fixtures.openai_server import Reply, ScriptedChatServer
from zhiku.api.serve import create_server

LEAVE = "员工每年享有十五天带薪年假。年假需要提前两周向主管提交申请。"
LLM = {"answerer": "llm", "repair_citations": False}
#: An answer of 3,000 deltas, one every 50 ms: two and a half minutes if nobody stops it.
LONG_ANSWER = Reply.paced("年假", count=3000, every_s=0.05)
#: Three minutes of reasoning before a word of the answer.
LONG_THOUGHT = Reply.thinking("嗯", count=3600, every_s=0.05, answer="十五天[1]。")
#: Seconds to wait for what must happen at once, on a busy machine.
GENEROUS = 60.0


def _run_until_closed(server: Any) -> None:
    """Waitress's loop, which ends by failing on its closed sockets when another thread closes
    the server (it has no other way to be stopped from outside)."""
    with suppress(OSError):
        server.run()


@contextmanager
def served(tmp_path: Path, chat_url: str) -> Iterator[tuple[str, str]]:
    """The API under waitress on a free port, over one indexed dataset: (base URL, key)."""
    app = make_app(tmp_path / "home", llm_base_url=chat_url, llm_model="scripted")
    server = create_server(app, context_of(app).settings, host="127.0.0.1", port=0)
    thread = threading.Thread(target=_run_until_closed, args=(server,), daemon=True)
    thread.start()
    try:
        _, key = context_of(app).keys.create(name="leaver")
        api = Api(app.test_client(), key)
        api.indexed_text(api.create_dataset("handbook"), "leave.md", LEAVE)
        yield f"http://127.0.0.1:{server.effective_port}", key  # type: ignore[union-attr]
    finally:
        server.close()
        thread.join(timeout=GENEROUS)
        context_of(app).close()


ASKS = pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/chat-messages", {"query": "年假有几天？", "response_mode": "streaming", "answer": LLM}),
        (
            "/v1/chat/completions",
            {
                "model": "handbook",
                "stream": True,
                "messages": [{"role": "user", "content": "年假有几天？"}],
                "answer": LLM,
            },
        ),
    ],
)


def wait_for_abandoned_stream(chat: ScriptedChatServer) -> None:
    deadline = time.monotonic() + GENEROUS
    while chat.streams_abandoned == 0:
        assert time.monotonic() < deadline, "the model was still streaming to a client that left"
        time.sleep(0.1)
    streamed = [request for request in chat.requests if request.get("stream")]
    assert len(streamed) == 1  # and the answer was not asked for again


@ASKS
def test_a_client_that_leaves_mid_answer_stops_the_model_stream(
    tmp_path: Path, path: str, body: dict[str, Any]
) -> None:
    with ScriptedChatServer(lambda _: LONG_ANSWER) as chat, served(tmp_path, chat.base_url) as (url, key):
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.stream("POST", url + path, json=body, headers=headers, timeout=GENEROUS) as response:
            assert response.status_code == 200, response.read()
            for line in response.iter_lines():
                if "年假" in line:  # the first piece of the answer: leave
                    break
        wait_for_abandoned_stream(chat)


@ASKS
def test_a_client_that_leaves_while_the_model_thinks_stops_the_model_stream(
    tmp_path: Path, path: str, body: dict[str, Any]
) -> None:
    """Nothing is written while the model reasons, so no failed write can tell that the client
    left: the server notices the connection's end itself."""
    with ScriptedChatServer(lambda _: LONG_THOUGHT) as chat, served(tmp_path, chat.base_url) as (url, key):
        payload = json.dumps(body).encode()
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=GENEROUS) as client:
            head = (
                f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
            )
            client.sendall(head.encode() + payload)
            deadline = time.monotonic() + GENEROUS
            while not any(request.get("stream") for request in chat.requests):
                assert time.monotonic() < deadline, chat.requests
                time.sleep(0.05)
        wait_for_abandoned_stream(chat)


def test_a_client_that_leaves_an_agent_stops_its_searches(tmp_path: Path) -> None:
    """Agent mode with a model that would search ten times, half a second per call: the client
    reads the first search and leaves; the loop stops at its next step instead of running on."""
    calls = 0
    lock = threading.Lock()

    def model(_: dict[str, Any]) -> Reply:
        nonlocal calls
        with lock:
            calls += 1
            number = calls
        time.sleep(0.5)
        return Reply.tool_call("kb_search", {"query": f"年假 第{number}次"})

    body = {
        "query": "年假有几天？",
        "response_mode": "streaming",
        "answer": {**LLM, "mode": "agent", "max_steps": 10, "agent_seconds": 600},
    }
    with ScriptedChatServer(model) as chat, served(tmp_path, chat.base_url) as (url, key):
        headers = {"Authorization": f"Bearer {key}"}
        started = time.monotonic()
        ask = httpx.stream("POST", url + "/v1/chat-messages", json=body, headers=headers, timeout=GENEROUS)
        with ask as response:
            assert response.status_code == 200, response.read()
            for line in response.iter_lines():
                if "agent_thought" in line:  # the first search: leave
                    break
        # run on, ten searches and the answer would have taken 5.5 s; a busy machine only slows
        # them, so fewer calls here never comes from load
        time.sleep(max(0.0, started + 8.0 - time.monotonic()))
        assert len(chat.requests) <= 3, f"{len(chat.requests)} model calls after the client left"
