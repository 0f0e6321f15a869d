"""Any OpenAI-compatible ``/v1/embeddings`` endpoint: OpenAI, DashScope, Ollama, vLLM, TEI."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx
import numpy as np

from zhiku.core.errors import ModelUnavailable
from zhiku.core.secrets import Secret
from zhiku.providers.embedding.base import ProgressCallback, embed_in_batches, l2_normalize

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
MAX_BACKOFF_S = 8.0
EXCERPT_CHARS = 300


class OpenAICompatibleEmbedding:
    """POSTs ``{"model", "input": [...]}`` to ``{base_url}/embeddings`` (``base_url`` ends in ``/v1``).

    Connection errors, timeouts, 408/429 and 5xx are retried ``max_retries`` times with
    exponential backoff starting at ``retry_backoff`` seconds (or the server's ``Retry-After``);
    any other failure raises :class:`ModelUnavailable` with the status and a body excerpt.
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
        name: str | None = None,
    ) -> None:
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self._api_key = Secret(api_key) if isinstance(api_key, str) else api_key
        self._dim = dim
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.retry_backoff = retry_backoff
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        self.name: str = name or f"openai/{host}{f':{parts.port}' if parts.port else ''}/{model}"
        headers = {"Authorization": f"Bearer {self._api_key.reveal()}"} if self._api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers)

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
        self._client.close()

    def _request(self, texts: Sequence[str]) -> np.ndarray:
        payload = {"model": self.model, "input": list(texts)}
        attempt = 0
        while True:
            response: httpx.Response | None = None
            cause: Exception | None = None
            try:
                response = self._client.post(self.url, json=payload)
            except httpx.TransportError as exc:
                failure, cause = f"is unreachable ({exc})", exc
            else:
                if response.status_code < 400:
                    return self._parse(response, len(texts))
                failure = f"answered {response.status_code}: {self._excerpt(response.text)}"
                if response.status_code not in RETRY_STATUSES:
                    raise ModelUnavailable(f"embedding endpoint {self.url} {failure}")
            if attempt >= self.max_retries:
                raise ModelUnavailable(
                    f"embedding endpoint {self.url} {failure} (after {attempt + 1} tries)"
                ) from cause
            time.sleep(self._backoff(attempt, response))
            attempt += 1

    def _backoff(self, attempt: int, response: httpx.Response | None) -> float:
        retry_after = response.headers.get("retry-after") if response is not None else None
        if retry_after is not None:
            try:
                return min(float(retry_after), MAX_BACKOFF_S)
            except ValueError:
                pass
        return float(min(self.retry_backoff * 2**attempt, MAX_BACKOFF_S))

    def _parse(self, response: httpx.Response, expected: int) -> np.ndarray:
        try:
            data: list[dict[str, Any]] = response.json()["data"]
            items = sorted(data, key=lambda item: int(item["index"]))
            rows = np.asarray([item["embedding"] for item in items], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise ModelUnavailable(
                f"embedding endpoint {self.url} sent an unexpected answer ({exc}): "
                f"{self._excerpt(response.text)}"
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

    def _excerpt(self, body: str) -> str:
        text = " ".join(body.split())[:EXCERPT_CHARS]
        return text.replace(self._api_key.reveal(), "***") if self._api_key else text
