"""ModelEndpoint, the one HTTP client of the model providers, against real servers on 127.0.0.1."""

from __future__ import annotations

import logging
import socket
import threading
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest

from tests.fixtures.openai_server import Reply, ScriptedChatServer, in_order, together
from tests.fixtures.rerank_server import COHERE_PATH, serve_rerank
from zhiku.core.errors import ConfigError, ModelUnavailable
from zhiku.core.secrets import Secret
from zhiku.providers.http import MAX_WAIT_S, RETRY_STATUSES, ModelEndpoint, RetryPolicy, retry_after_seconds

API_KEY = "sk-test-http-81c4"
CHAT = {"model": "fake-chat", "messages": [{"role": "user", "content": "hi"}]}
RERANK = {"model": "fake-rerank", "query": "cat", "documents": ["a cat", "a dog"], "top_n": 2}


def chat_endpoint(
    server: ScriptedChatServer, max_retries: int = 3, retry_backoff: float = 0.01, **options: Any
) -> ModelEndpoint:
    settings: dict[str, Any] = {"timeout": 5, "retry": RetryPolicy(max_retries, retry_backoff), **options}
    return ModelEndpoint(server.base_url + "/chat/completions", "chat endpoint", **settings)


def test_the_retried_statuses_are_the_documented_ones() -> None:
    assert frozenset({429, 500, 502, 503, 504}) == RETRY_STATUSES


def test_a_503_then_success_is_retried_against_the_chat_server() -> None:
    with (
        ScriptedChatServer(in_order(Reply.status(503), then=Reply.text("ok"))) as server,
        chat_endpoint(server) as endpoint,
    ):
        answer = endpoint.post(CHAT).json()
    assert answer["choices"][0]["message"]["content"] == "ok"
    assert len(server.requests) == 2


def test_a_503_then_success_is_retried_against_the_rerank_server() -> None:
    with serve_rerank() as server:
        server.script.replies = [(503, '{"error": "busy"}')]
        url = server.url + COHERE_PATH
        with ModelEndpoint(url, "rerank endpoint", retry=RetryPolicy(3, 0.01)) as endpoint:
            results = endpoint.post(RERANK).json()["results"]
        assert [r["index"] for r in results] == [0, 1]
        assert len(server.script.requests) == 2


@pytest.mark.parametrize("status", [400, 401, 404, 408, 422, 501])
def test_other_statuses_are_not_retried(status: int) -> None:
    with (
        ScriptedChatServer(lambda body: Reply.status(status, f"no ({status})")) as server,
        chat_endpoint(server) as endpoint, pytest.raises(ModelUnavailable) as raised,
    ):
        endpoint.post(CHAT)
    assert len(server.requests) == 1
    assert str(raised.value).endswith(f"answered {status}: no ({status})")  # no "(after N tries)"


def test_retry_after_in_seconds_is_honoured() -> None:
    replies = in_order(Reply.status(429, "slow down", retry_after="1"), then=Reply.text("ok"))
    with ScriptedChatServer(replies) as server, chat_endpoint(server, retry_backoff=0.0) as endpoint:
        start = time.monotonic()
        endpoint.post(CHAT)
        elapsed = time.monotonic() - start
    assert len(server.requests) == 2
    assert 0.9 <= elapsed < MAX_WAIT_S


def test_retry_after_as_an_http_date_is_honoured() -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=2), usegmt=True)
    replies = in_order(Reply.status(503, "maintenance", retry_after=when), then=Reply.text("ok"))
    with ScriptedChatServer(replies) as server, chat_endpoint(server, retry_backoff=0.0) as endpoint:
        start = time.monotonic()
        endpoint.post(CHAT)
        elapsed = time.monotonic() - start
    assert len(server.requests) == 2
    assert 0.5 <= elapsed < MAX_WAIT_S  # whole seconds in the header: 1 to 2 s


def test_waits_are_bounded() -> None:
    policy = RetryPolicy(max_retries=10, backoff=1.0)
    assert policy.wait(0) == 1.0 and policy.wait(2) == 4.0 and policy.wait(9) == MAX_WAIT_S
    assert policy.wait(0, "3600") == MAX_WAIT_S
    assert policy.wait(0, "-5") == 0.0
    assert policy.wait(1, "soon") == 2.0  # unreadable: the backoff
    now = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    assert retry_after_seconds("Wed, 01 May 2024 12:00:03 GMT", now) == 3.0
    assert retry_after_seconds(None) is None
    with pytest.raises(ConfigError, match="max_retries >= 0"):
        RetryPolicy(max_retries=-1)


def test_retries_run_out_and_say_how_many_tries() -> None:
    with (
        ScriptedChatServer(lambda body: Reply.status(502, "bad gateway")) as server,
        chat_endpoint(server, max_retries=2) as endpoint,
        pytest.raises(ModelUnavailable, match=r"answered 502: bad gateway \(after 3 tries\)"),
    ):
        endpoint.post(CHAT)
    assert len(server.requests) == 3


def test_a_connection_error_is_retried_then_reported() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1/x"
    endpoint = ModelEndpoint(url, "rerank endpoint", retry=RetryPolicy(2, 0.0))
    with pytest.raises(ModelUnavailable, match=r"rerank endpoint .* is unreachable .*\(after 3 tries\)"):
        endpoint.post({})


def test_a_timeout_is_retried_then_reported() -> None:
    with (
        ScriptedChatServer(lambda body: Reply.delay(5, then=Reply.text("late"))) as server,
        chat_endpoint(server, timeout=0.2, max_retries=1) as endpoint,
        pytest.raises(ModelUnavailable, match=r"did not answer within 0.2 s \(after 2 tries\)"),
    ):
        endpoint.post(CHAT)
    assert len(server.requests) == 2


def test_the_key_is_sent_but_never_in_errors_or_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    replies = in_order(Reply.status(503, f"overloaded for key {API_KEY}"), then=Reply.status(401, "no"))
    with ScriptedChatServer(replies, require_key=API_KEY) as server:
        with (
            chat_endpoint(server, api_key=API_KEY) as endpoint,
            pytest.raises(ModelUnavailable, match="answered 401") as raised,
        ):
            endpoint.post(CHAT)
        with (
            chat_endpoint(server, api_key=Secret("sk-wrong-11aa")) as wrong,
            pytest.raises(ModelUnavailable, match="answered 401") as refused,
        ):
            wrong.post(CHAT)
    assert len(server.requests) == 3  # 503 retried, 401s not
    assert "overloaded for key ***; retry 1/3" in caplog.text
    assert "Incorrect API key provided: ***" in str(refused.value)
    for text in (str(raised.value), str(refused.value), caplog.text, repr(endpoint), str(vars(endpoint))):
        assert API_KEY not in text and "sk-wrong-11aa" not in text


def test_concurrency_is_limited() -> None:
    with (
        ScriptedChatServer(together(3, lambda body: Reply.delay(0.3, then=Reply.text("ok")))) as server,
        chat_endpoint(server, max_concurrency=3) as endpoint,
    ):
        threads = [threading.Thread(target=endpoint.post, args=(CHAT,)) for _ in range(7)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=10)
    assert len(server.requests) == 7
    assert server.max_in_flight == 3


def test_bad_options_fail_at_construction() -> None:
    with pytest.raises(ConfigError, match="timeout > 0"):
        ModelEndpoint("http://127.0.0.1:1/v1", "chat endpoint", timeout=0)
    with pytest.raises(ConfigError, match="max_concurrency >= 1"):
        ModelEndpoint("http://127.0.0.1:1/v1", "chat endpoint", max_concurrency=0)
