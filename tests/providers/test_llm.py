"""ChatModel against a real chat-completions server on 127.0.0.1 (tests/fixtures/openai_server.py)."""

from __future__ import annotations

import logging
import socket
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.fixtures.openai_server import Reply, ScriptedChatServer, in_order, last_user_text, together
from zhiku.core.config import Settings
from zhiku.core.errors import ConfigError, ModelUnavailable
from zhiku.core.secrets import Secret
from zhiku.providers.llm import ChatModel, ChatResult, Tool, ToolCall

API_KEY = "sk-test-5c1e9"
WEATHER = Tool(
    name="get_weather",
    description="Current weather of a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def make(server: ScriptedChatServer, **options: Any) -> ChatModel:
    settings: dict[str, Any] = {"retry_backoff": 0.01, "timeout": 5, **options}
    return ChatModel(server.base_url, "fake-chat", **settings)


def test_plain_text_and_the_request_it_sends() -> None:
    with (
        ScriptedChatServer(lambda body: Reply.text(f"回答：{last_user_text(body)}")) as server,
        make(server) as model,
    ):
        answer = model.complete("会员积分多久过期？", system="你是客服。", max_tokens=64)
        result = model.chat([{"role": "user", "content": "hello"}])

    assert answer == "回答：会员积分多久过期？"
    assert result == ChatResult(content="回答：hello", tool_calls=[], finish_reason="stop")
    first, second = server.requests
    assert first == {
        "model": "fake-chat",
        "messages": [
            {"role": "system", "content": "你是客服。"},
            {"role": "user", "content": "会员积分多久过期？"},
        ],
        "temperature": 0.0,
        "max_tokens": 64,
    }
    assert second == {
        "model": "fake-chat",
        "messages": [{"role": "user", "content": "hello"}],
        "temperature": 0.0,
    }


def test_tools_tool_choice_and_extra_body_are_sent() -> None:
    with (
        ScriptedChatServer(lambda body: Reply.text("ok")) as server,
        make(server, temperature=0.3, extra_body={"enable_thinking": False}) as model,
    ):
        messages = [{"role": "user", "content": "杭州天气"}]
        model.chat(messages, tools=[WEATHER], tool_choice="get_weather", max_tokens=10)
        model.chat(messages, tools=[WEATHER], tool_choice="required")
        model.chat(messages, tools=[], tool_choice={"type": "function", "function": {"name": "x"}})

    forced, required, no_tools = server.requests
    assert forced["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Current weather of a city",
                "parameters": WEATHER.parameters,
            },
        }
    ]
    assert forced["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert forced["temperature"] == 0.3 and forced["max_tokens"] == 10
    assert forced["enable_thinking"] is False
    assert required["tool_choice"] == "required" and "max_tokens" not in required
    assert "tools" not in no_tools
    assert no_tools["tool_choice"] == {"type": "function", "function": {"name": "x"}}


def test_tool_calls_are_parsed_and_bad_arguments_kept_raw() -> None:
    replies = in_order(
        Reply.tool_call("get_weather", {"city": "杭州"}, call_id="call_abc"),
        Reply.tool_calls(("get_weather", '{"city": "北京"'), ("get_weather", "[1, 2]"), ("get_weather", "")),
        Reply.function_call("get_weather", {"city": "Paris"}),
        Reply.function_call("get_weather", "not json"),
    )
    with ScriptedChatServer(replies) as server, make(server) as model:
        results = [model.chat([{"role": "user", "content": "天气"}], tools=[WEATHER]) for _ in range(4)]

    valid, malformed, legacy, legacy_bad = results
    assert valid == ChatResult(
        content="",
        tool_calls=[ToolCall("call_abc", "get_weather", {"city": "杭州"}, '{"city": "杭州"}')],
        finish_reason="tool_calls",
    )
    assert malformed.tool_calls == [
        ToolCall("call_0", "get_weather", {}, '{"city": "北京"'),
        ToolCall("call_1", "get_weather", {}, "[1, 2]"),
        ToolCall("call_2", "get_weather", {}, ""),
    ]
    assert legacy == ChatResult(
        content="",
        tool_calls=[ToolCall("call_0", "get_weather", {"city": "Paris"}, '{"city": "Paris"}')],
        finish_reason="function_call",
    )
    assert legacy_bad.tool_calls == [ToolCall("call_0", "get_weather", {}, "not json")]


def test_a_500_then_success_is_retried() -> None:
    with ScriptedChatServer(
        in_order(Reply.status(500), Reply.status(502), then=Reply.text("fine"))
    ) as server:
        assert make(server).complete("hi") == "fine"
    assert len(server.requests) == 3


def test_a_429_waits_for_retry_after() -> None:
    replies = in_order(Reply.status(429, "slow down", retry_after="1"), then=Reply.text("fine"))
    with ScriptedChatServer(replies) as server:
        start = time.monotonic()
        assert make(server, retry_backoff=0.01).complete("hi") == "fine"
        elapsed = time.monotonic() - start
    assert len(server.requests) == 2
    assert 0.9 <= elapsed < 5


def test_a_timeout_is_retried() -> None:
    replies = in_order(Reply.delay(60, then=Reply.text("too late")), then=Reply.text("in time"))
    with ScriptedChatServer(replies) as server:
        # "in time" is proof enough: a client that waited would have had "too late" (no clock to
        # read, so a busy machine cannot fail it; closing the server ends the delayed reply)
        assert make(server, timeout=0.5).complete("hi") == "in time"
    assert len(server.requests) == 2


def test_a_persistent_timeout_says_so() -> None:
    with (
        ScriptedChatServer(lambda body: Reply.delay(5, then=Reply.text("late"))) as server,
        pytest.raises(ModelUnavailable, match=r"did not answer within 0.2 s \(after 2 tries\)"),
    ):
        make(server, timeout=0.2, max_retries=1).complete("hi")


def test_a_persistent_500_gives_up_with_status_and_body() -> None:
    with (
        ScriptedChatServer(lambda body: Reply.status(500, '{"error": "engine overloaded"}')) as server,
        pytest.raises(ModelUnavailable, match=r"answered 500: .*engine overloaded.*\(after 3 tries\)"),
    ):
        make(server, max_retries=2).complete("hi")
    assert len(server.requests) == 3


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (Reply.raw("<html>gateway</html>"), r"unexpected answer \(JSONDecodeError.*<html>gateway</html>"),
        (Reply.raw('{"choices": []}'), r"unexpected answer \(IndexError"),
        (Reply.raw('{"error": {"message": "quota"}}'), r"unexpected answer \(KeyError: 'choices'\).*quota"),
        (Reply.raw('{"choices": [{"message": "hi"}]}'), r"message is str, not an object"),
        (Reply.raw('{"choices": [{"message": {"tool_calls": [{"id": "1"}]}}]}'), r"KeyError: 'function'"),
        (Reply.status(400, '{"error": "context too long"}'), r"answered 400: .*context too long"),
    ],
)
def test_a_bad_answer_is_model_unavailable_without_retry(reply: Reply, expected: str) -> None:
    with ScriptedChatServer(lambda body: reply) as server, pytest.raises(ModelUnavailable, match=expected):
        make(server).complete("hi")
    assert len(server.requests) == 1


def test_unreachable_endpoint() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = ChatModel(f"http://127.0.0.1:{port}/v1", "m", max_retries=1, retry_backoff=0.01)
    with pytest.raises(ModelUnavailable, match=r"unreachable.*after 2 tries"):
        model.complete("hi")


def test_the_key_is_sent_but_never_shown(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with ScriptedChatServer(lambda body: Reply.text("ok"), require_key=API_KEY) as server:
        assert make(server, api_key=API_KEY).complete("hi") == "ok"
        assert make(server, api_key=Secret(API_KEY)).complete("hi") == "ok"

        wrong = make(server, api_key="sk-wrong-4d2b7")
        with pytest.raises(ModelUnavailable, match="answered 401") as caught:
            wrong.complete("hi")
        with pytest.raises(ModelUnavailable, match="answered 401"):
            make(server).complete("hi")  # no key, no Authorization header
    assert len(server.requests) == 4  # a 401 is not retried

    assert "Incorrect API key provided: ***" in str(caught.value)
    for text in (str(caught.value), repr(wrong), wrong.name, str(vars(wrong)), caplog.text):
        assert "sk-wrong-4d2b7" not in text and API_KEY not in text
    assert wrong.name == f"fake-chat@127.0.0.1:{urlsplit(server.base_url).port}"


def test_retries_are_logged_without_the_key(caplog: pytest.LogCaptureFixture) -> None:
    replies = in_order(Reply.status(503, f"bad key {API_KEY}"), then=Reply.text("ok"))
    with (
        ScriptedChatServer(replies) as server,
        caplog.at_level(logging.WARNING, logger="zhiku.providers.http"),
    ):
        assert make(server, api_key=API_KEY).complete("hi") == "ok"
    assert "answered 503: bad key ***; retry 1/3" in caplog.text
    assert API_KEY not in caplog.text


def test_max_concurrency_is_honoured_across_threads() -> None:
    echo = together(2, lambda body: Reply.delay(0.3, then=Reply.text(last_user_text(body))))
    with ScriptedChatServer(echo) as server, make(server, max_concurrency=2) as model:
        answers: dict[int, str] = {}

        def ask(i: int) -> None:
            answers[i] = model.complete(f"q{i}")

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=10)

    assert answers == {i: f"q{i}" for i in range(6)}
    assert server.max_in_flight == 2


def test_from_settings_with_a_dataset_override(tmp_path: Path) -> None:
    with ScriptedChatServer(lambda body: Reply.text("ok"), require_key=API_KEY) as server:
        settings = Settings(
            home=tmp_path,
            llm_base_url=server.base_url,
            llm_model="global-model",
            llm_api_key=Secret.from_token(API_KEY),
            llm_timeout=7,
            llm_max_retries=1,
            llm_max_concurrency=3,
        )
        with ChatModel.from_settings(settings) as model:
            assert model.complete("hi") == "ok"
            assert (model.timeout, model.max_retries, model.temperature) == (7, 1, 0.0)
        override = {"model": "dataset-model", "temperature": 0.5, "max_retries": 0, "timeout": None}
        with ChatModel.from_settings(settings, override) as model:
            assert model.complete("hi") == "ok"
            assert (model.timeout, model.max_retries) == (7, 0)
        with (
            ChatModel.from_settings(settings, {"api_key": "sk-other"}) as model,
            pytest.raises(ModelUnavailable, match="answered 401"),
        ):
            model.complete("hi")

    assert [(r["model"], r["temperature"]) for r in server.requests] == [
        ("global-model", 0.0),
        ("dataset-model", 0.5),
        ("global-model", 0.0),
    ]


def test_from_settings_says_which_setting_is_missing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="ZHIKU_LLM_BASE_URL .* and ZHIKU_LLM_MODEL"):
        ChatModel.from_settings(Settings(home=tmp_path))
    with pytest.raises(ConfigError, match="set ZHIKU_LLM_MODEL") as caught:
        ChatModel.from_settings(Settings(home=tmp_path, llm_base_url="http://127.0.0.1:9/v1"))
    assert "BASE_URL" not in str(caught.value)
    model = ChatModel.from_settings(
        Settings(home=tmp_path), {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    )
    assert model.name == "m@127.0.0.1:9"
    model.close()


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ({"modle": "typo"}, r"unknown LLM option\(s\) \['modle'\]"),
        ({"timeout": "soon"}, "timeout must be a number"),
        ({"max_concurrency": 0}, "max_concurrency >= 1"),
        ({"base_url": "api.deepseek.com/v1"}, "must be an http"),
        ({"extra_body": ["x"]}, "extra_body must be a mapping"),
    ],
)
def test_invalid_options_are_config_errors(tmp_path: Path, override: dict[str, Any], expected: str) -> None:
    settings = Settings(home=tmp_path, llm_base_url="http://127.0.0.1:9/v1", llm_model="m")
    with pytest.raises(ConfigError, match=expected):
        ChatModel.from_settings(settings, override)


def test_a_failing_script_fails_the_test() -> None:
    with (
        pytest.raises(AssertionError, match="all 1 scripted replies were used"),
        ScriptedChatServer(in_order(Reply.text("once"))) as server, make(server) as model,
    ):
        assert model.complete("one") == "once"
        with pytest.raises(ModelUnavailable, match="answered 400: .*scripted handler raised"):
            model.complete("two")


def test_stream_yields_the_pieces_in_order_and_asks_for_a_stream() -> None:
    with (
        ScriptedChatServer(lambda body: Reply.text("积分在获得后十二个月过期。")) as server,
        make(server) as model,
    ):
        pieces = list(model.stream([{"role": "user", "content": "积分？"}], max_tokens=32))

    assert len(pieces) > 1  # really streamed, not one block
    assert "".join(pieces) == "积分在获得后十二个月过期。"
    assert server.requests[0]["stream"] is True
    assert server.requests[0]["max_tokens"] == 32


def test_stream_retries_a_server_error_before_the_first_piece() -> None:
    with (
        ScriptedChatServer(in_order(Reply.status(503), Reply.text("ok now"))) as server,
        make(server) as model,
    ):
        assert "".join(model.stream([{"role": "user", "content": "hi"}])) == "ok now"
    assert len(server.requests) == 2


def test_stream_refuses_a_client_error_and_a_malformed_event() -> None:
    with (
        ScriptedChatServer(in_order(Reply.status(400), Reply.raw("data: {not json\n\n"))) as server,
        make(server) as model,
    ):
        with pytest.raises(ModelUnavailable, match="400"):
            list(model.stream([{"role": "user", "content": "hi"}]))
        with pytest.raises(ModelUnavailable, match="malformed stream event"):
            list(model.stream([{"role": "user", "content": "hi"}]))
