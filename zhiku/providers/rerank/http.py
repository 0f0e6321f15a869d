"""Rerank HTTP APIs: Cohere (and the many servers that copy it), Jina, Hugging Face TEI, DashScope."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

import httpx

from zhiku.core.errors import ConfigError, ModelUnavailable
from zhiku.core.secrets import Secret
from zhiku.providers.http import ModelEndpoint, RetryPolicy

RerankStyle = Literal["cohere", "jina", "tei", "dashscope"]


@dataclass(frozen=True, slots=True)
class Wire:
    """One API's request path under ``base_url``, request body, result list and score field."""

    path: str
    body: Callable[[str, str, list[str]], dict[str, Any]]  # (model, query, texts) -> JSON body
    results: Callable[[Any], Any]  # the answer's JSON -> its list of results
    score_key: str


def _cohere_body(model: str, query: str, texts: list[str]) -> dict[str, Any]:
    return {"model": model, "query": query, "documents": texts, "top_n": len(texts)}


def _jina_body(model: str, query: str, texts: list[str]) -> dict[str, Any]:
    return {**_cohere_body(model, query, texts), "return_documents": False}


def _tei_body(model: str, query: str, texts: list[str]) -> dict[str, Any]:
    # TEI serves one model and rejects over-long inputs unless asked to cut them.
    return {"query": query, "texts": texts, "truncate": True}


def _dashscope_body(model: str, query: str, texts: list[str]) -> dict[str, Any]:
    return {
        "model": model,
        "input": {"query": query, "documents": texts},
        "parameters": {"return_documents": False, "top_n": len(texts)},
    }


WIRES: dict[str, Wire] = {
    "cohere": Wire("/rerank", _cohere_body, lambda answer: answer["results"], "relevance_score"),
    "jina": Wire("/rerank", _jina_body, lambda answer: answer["results"], "relevance_score"),
    "tei": Wire("/rerank", _tei_body, lambda answer: answer, "score"),
    "dashscope": Wire(
        "/services/rerank/text-rerank/text-rerank",
        _dashscope_body,
        lambda answer: answer["output"]["results"],
        "relevance_score",
    ),
}


class HttpRerank:
    """Scores texts with a rerank API; ``style`` picks the wire format.

    ``base_url`` is the API root the path is appended to: ``https://api.cohere.com/v2``
    (``/rerank``), ``https://api.jina.ai/v1`` (``/rerank``), a TEI server's root (``/rerank``), or
    ``https://dashscope.aliyuncs.com/api/v1`` (``/services/rerank/text-rerank/text-rerank``).
    ``model`` is sent to every API but TEI, which serves one model. Scores are the API's own —
    a relevance in ``[0, 1]`` for these four — returned in input order.

    Texts go ``batch_size`` per request: TEI refuses more than 32 by default and DashScope caps
    the tokens of one request. Connection errors, timeouts, 429, 500, 502, 503 and 504 are retried
    ``max_retries`` times with exponential backoff from ``retry_backoff`` seconds or the server's
    ``Retry-After``, with at most ``max_concurrency`` requests in flight
    (:mod:`zhiku.providers.http`); any other failure, and an answer that leaves a text unscored,
    raises :class:`ModelUnavailable`. The API key goes only into the ``Authorization`` header.
    Call :meth:`close` when done.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: Secret | str | None = None,
        *,
        style: RerankStyle = "cohere",
        timeout: float = 30,
        max_retries: int = 2,
        batch_size: int = 32,
        retry_backoff: float = 0.5,
        max_concurrency: int = 8,
        name: str | None = None,
    ) -> None:
        if style not in WIRES:
            known = ", ".join(get_args(RerankStyle))
            raise ConfigError(f"unknown rerank API style {style!r}; known: {known}")
        if batch_size < 1 or max_retries < 0:
            raise ConfigError(
                f"rerank batch_size must be >= 1 and max_retries >= 0, got {batch_size}, {max_retries}"
            )
        self.style = style
        self._wire = WIRES[style]
        self.url = base_url.rstrip("/") + self._wire.path
        self.model = model
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.retry_backoff = retry_backoff
        parts = urlsplit(self.url)
        host = f"{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}"
        self.name: str = name or f"{style}/{host}/{model}"
        retry = RetryPolicy(max_retries, retry_backoff)
        self._endpoint = ModelEndpoint(self.url, "rerank endpoint", api_key, timeout, retry, max_concurrency)

    def __repr__(self) -> str:
        return f"HttpRerank(url={self.url!r}, model={self.model!r}, style={self.style!r})"

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score per text, in input order."""
        scores: list[float] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            response = self._endpoint.post(self._wire.body(self.model, query, batch))
            scores.extend(self._scores(response, len(batch)))
        return scores

    def close(self) -> None:
        self._endpoint.close()

    def _scores(self, response: httpx.Response, expected: int) -> list[float]:
        """The answer's scores put back in request order; every text must have exactly one."""
        found: dict[int, float] = {}
        try:
            for item in self._wire.results(response.json()):
                index, score = item["index"], item[self._wire.score_key]
                if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < expected:
                    raise ValueError(f"index {index!r} is not one of the {expected} texts sent")
                if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
                    raise ValueError(f"score {score!r} is not a finite number")
                if index in found:
                    raise ValueError(f"index {index} is scored twice")
                found[index] = float(score)
        except (ValueError, KeyError, TypeError) as exc:
            raise ModelUnavailable(
                f"rerank endpoint {self.url} sent an unexpected answer ({exc}): "
                f"{self._endpoint.excerpt(response.text)}"
            ) from exc
        if len(found) != expected:
            missing = [i for i in range(expected) if i not in found]
            raise ModelUnavailable(
                f"rerank endpoint {self.url} scored {len(found)} of {expected} texts "
                f"(missing index {', '.join(map(str, missing[:5]))})"
            )
        return [found[i] for i in range(expected)]
