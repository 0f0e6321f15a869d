"""Any OpenAI-compatible ``/v1/embeddings`` endpoint: OpenAI, DashScope, Ollama, vLLM, TEI."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx
import numpy as np

from zhiku.core.errors import ModelUnavailable
from zhiku.core.secrets import Secret
from zhiku.providers.embedding.base import ProgressCallback, embed_in_batches, l2_normalize
from zhiku.providers.http import ModelEndpoint, RetryPolicy


class OpenAICompatibleEmbedding:
    """POSTs ``{"model", "input": [...]}`` to ``{base_url}/embeddings`` (``base_url`` ends in ``/v1``).

    Connection errors, timeouts, 429, 500, 502, 503 and 504 are retried ``max_retries`` times with
    exponential backoff from ``retry_backoff`` seconds or the server's ``Retry-After``, with at
    most ``max_concurrency`` requests in flight (:mod:`zhiku.providers.http`); any other failure
    raises :class:`ModelUnavailable` with the status and a body excerpt.
    ``dim`` is learned from the first answer when not given (reading ``dim`` first sends one
    probe request; an empty input gives ``(0, 0)`` while it is unknown). ``timeout`` is in
    seconds per request. Call :meth:`close` when done.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: Secret | str | None = None,
        dim: int | None = None,
        batch_size: int = 64,
        timeout: float = 30,
        max_retries: int = 3,
        retry_backoff: float = 0.5,
        max_concurrency: int = 8,
        name: str | None = None,
    ) -> None:
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self._dim = dim
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.retry_backoff = retry_backoff
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        self.name: str = name or f"openai/{host}{f':{parts.port}' if parts.port else ''}/{model}"
        retry = RetryPolicy(max_retries, retry_backoff)
        self._endpoint = ModelEndpoint(
            self.url, "embedding endpoint", api_key, timeout, retry, max_concurrency
        )

    def __repr__(self) -> str:
        return f"OpenAICompatibleEmbedding(url={self.url!r}, model={self.model!r})"

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = self._request(["dimension probe"]).shape[1]
        return self._dim

    def embed_documents(
        self, texts: Sequence[str], *, on_progress: ProgressCallback | None = None
    ) -> np.ndarray:
        if not texts:
            return np.empty((0, self._dim or 0), dtype=np.float32)
        return embed_in_batches(texts, self.batch_size, self._request, 0, on_progress)

    def embed_query(self, text: str) -> np.ndarray:
        return l2_normalize(self._request([text]))[0]

    def close(self) -> None:
        self._endpoint.close()

    def _request(self, texts: Sequence[str]) -> np.ndarray:
        response = self._endpoint.post({"model": self.model, "input": list(texts)})
        return self._parse(response, len(texts))

    def _parse(self, response: httpx.Response, expected: int) -> np.ndarray:
        try:
            data: list[dict[str, Any]] = response.json()["data"]
            items = sorted(data, key=lambda item: int(item["index"]))
            rows = np.asarray([item["embedding"] for item in items], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise ModelUnavailable(
                f"embedding endpoint {self.url} sent an unexpected answer ({exc}): "
                f"{self._endpoint.excerpt(response.text)}"
            ) from exc
        if rows.ndim != 2 or rows.shape[0] != expected:
            raise ModelUnavailable(
                f"embedding endpoint {self.url} sent {rows.shape[0] if rows.ndim else 0} "
                f"vectors for {expected} inputs"
            )
        if self._dim is None:
            self._dim = rows.shape[1]
        elif rows.shape[1] != self._dim:
            raise ModelUnavailable(
                f"embedding endpoint {self.url} sent {rows.shape[1]}-d vectors, expected {self._dim}"
            )
        return rows
