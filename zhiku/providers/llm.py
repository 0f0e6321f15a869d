"""Chat model behind any OpenAI-compatible ``/v1/chat/completions`` endpoint, plain text or tool calls.

One wire format covers OpenAI, DashScope (compatible mode), DeepSeek, Ollama and vLLM, so Q&A
indexing and LLM routers need no vendor SDK. A dataset may override the global settings.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

from pydantic import SecretStr

from zhiku.core.cancellation import checkpoint
from zhiku.core.config import Settings
from zhiku.core.errors import ConfigError, ModelUnavailable
from zhiku.core.secrets import Secret

N = TypeVar("N", int, float)

TOOL_CHOICE_MODES = frozenset({"auto", "none", "required"})
OVERRIDE_KEYS = frozenset(
    {"base_url", "model", "api_key", "timeout", "max_retries", "max_concurrency", "temperature", "extra_body"}
)


@dataclass(frozen=True)
class Tool:
    """A function the model may call; ``parameters`` is its JSON schema."""

    name: str
    description: str
    parameters: dict[str, Any]

    def to_wire(self) -> dict[str, Any]:
        function = {"name": self.name, "description": self.description, "parameters": self.parameters}
        return {"type": "function", "function": function}


@dataclass(frozen=True)
class ToolCall:
    """A call the model asked for.

    ``arguments`` is ``{}`` when ``raw_arguments`` is not a JSON object: models do emit broken
    JSON, and only the caller knows whether to repair it, ask again or give up.
    """

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str


@dataclass(frozen=True)
class ChatResult:
    """The first choice of an answer; ``content`` is ``""`` when the model only called tools."""

    content: str
    tool_calls: list[ToolCall]
    finish_reason: str | None


class ChatModel:
    """POSTs chat completions to ``{base_url}/chat/completions`` (``base_url`` ends in ``/v1``).

    Thread-safe: one HTTP client is shared and at most ``max_concurrency`` requests are in
    flight at once, so a pool of indexing workers cannot flood a rate-limited endpoint.
    Connection errors, timeouts, 429, 500, 502, 503 and 504 are retried ``max_retries`` times with
    exponential backoff from ``retry_backoff`` seconds or the server's ``Retry-After``
    (:mod:`zhiku.providers.http`); any other failure or an answer without ``choices[0].message``
    raises :class:`ModelUnavailable`.
    ``extra_body`` is merged last into every request for vendor options (e.g.
    ``{"enable_thinking": False}``). ``timeout`` is in seconds per request. Call :meth:`close`
    when done, or use the model as a context manager.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: Secret | str | None = None,
        *,
        timeout: float = 60,
        max_retries: int = 3,
        retry_backoff: float = 1.0,
        max_concurrency: int = 4,
        temperature: float = 0.0,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"chat model base_url must be an http(s) URL ending in /v1, got {base_url!r}")
        if timeout <= 0 or max_retries < 0 or max_concurrency < 1:
            raise ConfigError(
                "chat model needs timeout > 0, max_retries >= 0 and max_concurrency >= 1, got "
                f"{timeout}, {max_retries} and {max_concurrency}"
            )
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_backoff = retry_backoff
        self.temperature = temperature
        self.extra_body = dict(extra_body or {})
        self.name: str = f"{model}@{parts.hostname}{f':{parts.port}' if parts.port else ''}"
        # the HTTP client (httpx) loads with the first chat model, not with every knowledge base
        from zhiku.providers.http import ModelEndpoint, RetryPolicy

        retry = RetryPolicy(max_retries, retry_backoff)
        self._endpoint = ModelEndpoint(self.url, "chat endpoint", api_key, timeout, retry, max_concurrency)

    @classmethod
    def from_settings(cls, settings: Settings, override: Mapping[str, Any] | None = None) -> ChatModel:
        """The global ``llm_*`` settings, with a dataset's own options (``override``) winning field by field.

        Override keys: ``base_url``, ``model``, ``api_key``, ``timeout``, ``max_retries``,
        ``max_concurrency``, ``temperature``, ``extra_body``; a ``None`` value keeps the setting.
        """
        options = {key: value for key, value in (override or {}).items() if value is not None}
        unknown = sorted(set(options) - OVERRIDE_KEYS)
        if unknown:
            raise ConfigError(f"unknown LLM option(s) {unknown}; known options: {sorted(OVERRIDE_KEYS)}")
        base_url = options.get("base_url", settings.llm_base_url)
        model = options.get("model", settings.llm_model)
        missing = [
            f"ZHIKU_LLM_{field.upper()} (llm_{field} in zhiku.toml)"
            for field, value in (("base_url", base_url), ("model", model))
            if not value
        ]
        if missing:
            raise ConfigError(f"no chat model configured: set {' and '.join(missing)}")
        extra_body = options.get("extra_body", {})
        if not isinstance(extra_body, Mapping):
            raise ConfigError(f"LLM option extra_body must be a mapping, got {type(extra_body).__name__}")
        return cls(
            str(base_url),
            str(model),
            _as_secret(options.get("api_key", settings.llm_api_key)),
            timeout=_number(options, "timeout", settings.llm_timeout, float),
            max_retries=_number(options, "max_retries", settings.llm_max_retries, int),
            max_concurrency=_number(options, "max_concurrency", settings.llm_max_concurrency, int),
            temperature=_number(options, "temperature", 0.0, float),
            extra_body=dict(extra_body),
        )

    def __repr__(self) -> str:
        return f"ChatModel(url={self.url!r}, model={self.model!r})"

    def __enter__(self) -> ChatModel:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def chat(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        tools: Sequence[Tool] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> ChatResult:
        """One completion of ``messages``.

        ``tool_choice`` is ``"auto"``, ``"none"``, ``"required"``, a wire-format dict, or the
        name of one of ``tools`` to force that tool.
        """
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "temperature": self.temperature,
        }
        if max_tokens is not None:
            payload["max_tokens"] = max_tokens
        if tools:
            payload["tools"] = [tool.to_wire() for tool in tools]
        if isinstance(tool_choice, str) and tool_choice not in TOOL_CHOICE_MODES:
            payload["tool_choice"] = {"type": "function", "function": {"name": tool_choice}}
        elif tool_choice is not None:
            payload["tool_choice"] = tool_choice
        payload.update(self.extra_body)
        response = self._endpoint.post(payload)
        try:
            return _read_answer(response.json())
        except (ValueError, LookupError, TypeError) as exc:
            raise ModelUnavailable(
                f"chat endpoint {self.url} sent an unexpected answer ({type(exc).__name__}: {exc}): "
                f"{self._endpoint.excerpt(response.text)}"
            ) from exc

    def stream(self, messages: Sequence[dict[str, Any]], *, max_tokens: int | None = None) -> Iterator[str]:
        """The text of one completion, piece by piece as the server sends it (``stream: true``).

        Failures before the server starts answering (connection, timeout, a retried status) are
        retried like :meth:`chat`; once it has started, a failure raises :class:`ModelUnavailable`,
        because a retry would repeat text already handed out. Closing the iterator closes the
        connection, which is how a caller stops a long answer.
        """
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "temperature": self.temperature,
            "stream": True,
        }
        if max_tokens is not None:
            payload["max_tokens"] = max_tokens
        payload.update(self.extra_body)
        with self._endpoint.stream(payload) as response:
            yield from _stream_pieces(response.iter_lines(), self.url)

    def complete(self, prompt: str, *, system: str | None = None, max_tokens: int | None = None) -> str:
        """The text answer to a single user ``prompt``, after an optional ``system`` message."""
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": prompt})
        return self.chat(messages, max_tokens=max_tokens).content

    def close(self) -> None:
        self._endpoint.close()


def _stream_pieces(lines: Iterator[str], url: str) -> Iterator[str]:
    """The ``choices[0].delta.content`` of each server-sent event up to ``data: [DONE]``; every
    line is a checkpoint, so a caller that is gone stops the stream even while the model sends
    no text (reasoning deltas, keep-alive comments)."""
    for line in lines:
        checkpoint()
        if not line.startswith("data:"):
            continue  # blank separators, comments and event names carry no text
        data = line[5:].strip()
        if data == "[DONE]":
            return
        try:
            event = json.loads(data)
            choices = event.get("choices") or []
            delta = choices[0].get("delta") or {} if choices else {}
            content = delta.get("content")
        except (ValueError, AttributeError, TypeError) as exc:
            from zhiku.providers.http import EXCERPT_CHARS

            raise ModelUnavailable(
                f"chat endpoint {url} sent a malformed stream event: {data[:EXCERPT_CHARS]}"
            ) from exc
        if isinstance(content, str) and content:
            yield content


def _read_answer(data: Any) -> ChatResult:
    """The first choice of a chat-completions body; raises LookupError/TypeError when it has none."""
    choice = data["choices"][0]
    message = choice["message"]
    if not isinstance(message, dict):
        raise TypeError(f"choices[0].message is {type(message).__name__}, not an object")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise TypeError(f"choices[0].message.content is {type(content).__name__}, not a string")
    calls = message.get("tool_calls") or []
    if not calls and isinstance(message.get("function_call"), dict):  # the pre-tools wire format
        calls = [{"function": message["function_call"]}]
    if not isinstance(calls, list):
        raise TypeError(f"choices[0].message.tool_calls is {type(calls).__name__}, not a list")
    tool_calls = [_read_tool_call(call, index) for index, call in enumerate(calls)]
    return ChatResult(content or "", tool_calls, choice.get("finish_reason"))


def _read_tool_call(call: dict[str, Any], index: int) -> ToolCall:
    function = call["function"]
    name = function["name"]
    if not isinstance(name, str) or not name:
        raise TypeError(f"tool call {index} has no function name")
    call_id = str(call.get("id") or f"call_{index}")
    raw = function.get("arguments")
    if isinstance(raw, dict):  # some servers send the object itself instead of its JSON text
        return ToolCall(call_id, name, raw, json.dumps(raw, ensure_ascii=False))
    raw = raw if isinstance(raw, str) else ""
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    return ToolCall(call_id, name, parsed if isinstance(parsed, dict) else {}, raw)


def _as_secret(value: Secret | SecretStr | str | None) -> Secret | None:
    if isinstance(value, SecretStr):
        return Secret(value.get_secret_value())
    return Secret(value) if isinstance(value, str) else value


def _number(options: Mapping[str, Any], key: str, default: N, kind: Callable[[Any], N]) -> N:
    value = options.get(key, default)
    try:
        return kind(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"LLM option {key} must be a number, got {value!r}") from exc
