"""One HTTP client for every model endpoint: chat completions, embeddings and rerank APIs.

What a caller must know:

- **Retries.** Connection errors, timeouts and the statuses in :data:`RETRY_STATUSES` (429, 500,
  502, 503, 504) are retried ``max_retries`` times; every other status is final at once. The wait
  before retry ``n`` (from 0) is ``retry_backoff * 2**n`` seconds, or the server's
  ``Retry-After`` (seconds or an HTTP date), never more than :data:`MAX_WAIT_S`. Each retry is
  logged as a warning on this module's logger.
- **Concurrency.** At most ``max_concurrency`` requests are in flight at once (httpx's connection
  pool); a caller beyond that waits for a free connection, for as long as it takes. A request
  waiting out its backoff holds no connection.
- **Timeouts.** ``timeout`` seconds for connecting, and for each read and write.
- **The API key** goes only into the ``Authorization`` header: it is masked (``***``) in the body
  excerpts that errors and logs quote, and nothing else quotes headers.

The retries live in :class:`RetryTransport`, an httpx transport, so a streamed answer is retried
exactly like a plain one until its headers arrive; a failure after that is final.
"""

from __future__ import annotations

import email.utils
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from zhiku.core.errors import ConfigError, ModelUnavailable
from zhiku.core.secrets import Secret

logger = logging.getLogger(__name__)

#: Statuses a later try may fix: rate limited, or the server (or a gateway) failing for now.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
#: Longest wait before a retry in seconds, whatever the backoff or ``Retry-After`` says.
MAX_WAIT_S = 8.0
#: Characters of a failed answer's body quoted in errors and logs.
EXCERPT_CHARS = 300


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to wait: ``max_retries`` >= 0 tries after the first, waiting
    ``backoff * 2**n`` seconds (or ``Retry-After``) before retry ``n``, at most :data:`MAX_WAIT_S`."""

    max_retries: int = 3
    backoff: float = 0.5

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.backoff < 0:
            raise ConfigError(
                "retries need max_retries >= 0 and retry_backoff >= 0, "
                f"got {self.max_retries} and {self.backoff}"
            )

    def wait(self, retry: int, retry_after: str | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (0 for the first)."""
        asked = retry_after_seconds(retry_after)
        wait = asked if asked is not None else self.backoff * 2**retry
        return float(min(max(wait, 0.0), MAX_WAIT_S))


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """A ``Retry-After`` header in seconds (delta-seconds or an HTTP date), None if absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return (when - (now or datetime.now(UTC))).total_seconds()


class RetryTransport(httpx.BaseTransport):
    """Sends each request through ``wrapped`` again, after a wait, while ``policy`` allows and the
    failure is one a later try may fix; the last answer (or error) is what the caller gets.

    ``on_retry(failure, retry, wait)`` is told of each retry: ``failure`` is the exception or the
    failed response (its body already read).
    """

    def __init__(
        self,
        wrapped: httpx.BaseTransport,
        policy: RetryPolicy,
        on_retry: Callable[[httpx.Response | httpx.TransportError, int, float], None] | None = None,
    ) -> None:
        self._wrapped = wrapped
        self.policy = policy
        self._on_retry = on_retry

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        retry = 0
        while True:
            try:
                response = self._wrapped.handle_request(request)
            except httpx.TransportError as exc:
                if retry >= self.policy.max_retries:
                    raise
                failure: httpx.Response | httpx.TransportError = exc
                wait = self.policy.wait(retry)
            else:
                if response.status_code not in RETRY_STATUSES or retry >= self.policy.max_retries:
                    return response
                try:
                    response.read()  # for the log; frees the connection for others while we wait
                finally:
                    response.close()
                failure = response
                wait = self.policy.wait(retry, response.headers.get("retry-after"))
            if self._on_retry is not None:
                self._on_retry(failure, retry, wait)
            time.sleep(wait)
            retry += 1

    def close(self) -> None:
        self._wrapped.close()


class ModelEndpoint:
    """POSTs JSON to one model endpoint ``url``; ``kind`` names it in errors ("chat endpoint").

    ``timeout`` is in seconds, ``retry`` says how often and how long to wait, ``max_concurrency``
    bounds the requests in flight; ``api_key`` (a token is wrapped in a :class:`Secret`) is sent
    as ``Authorization: Bearer``.

    :meth:`post` returns the first answer below 400 after the retries described in the module
    docstring; anything else raises :class:`ModelUnavailable` naming the URL, the status or the
    error, a body excerpt with the key masked, and ``(after N tries)`` when retries ran out.
    Thread-safe. Call :meth:`close` when done.
    """

    def __init__(
        self,
        url: str,
        kind: str,
        api_key: Secret | str | None = None,
        timeout: float = 30,
        retry: RetryPolicy = RetryPolicy(),
        max_concurrency: int = 8,
    ) -> None:
        if timeout <= 0 or max_concurrency < 1:
            raise ConfigError(
                f"{kind} needs timeout > 0 and max_concurrency >= 1, got {timeout} and {max_concurrency}"
            )
        self.url = url
        self.kind = kind
        self.timeout = timeout
        self.policy = retry
        self._api_key = Secret(api_key) if isinstance(api_key, str) else api_key
        headers = {"Authorization": f"Bearer {self._api_key.reveal()}"} if self._api_key else {}
        limits = httpx.Limits(max_connections=max_concurrency, max_keepalive_connections=max_concurrency)
        transport = RetryTransport(httpx.HTTPTransport(limits=limits), retry, self._log_retry)
        self._client = httpx.Client(
            transport=transport, headers=headers, timeout=httpx.Timeout(timeout, pool=None)
        )

    def __repr__(self) -> str:
        return f"ModelEndpoint(url={self.url!r}, kind={self.kind!r})"

    def post(self, body: dict[str, Any]) -> httpx.Response:
        """The answer to ``body``, read in full; ModelUnavailable unless its status is below 400."""
        try:
            response = self._client.post(self.url, json=body)
        except httpx.TransportError as exc:
            raise self._unavailable(exc) from exc
        self._check(response)
        return response

    @contextmanager
    def stream(self, body: dict[str, Any]) -> Iterator[httpx.Response]:
        """The answer to ``body`` with its body not yet read (``iter_lines``...); checked like
        :meth:`post` before it is handed out. A failure while reading is not retried."""
        try:
            with self._client.stream("POST", self.url, json=body) as response:
                if not response.is_success:
                    response.read()
                    self._check(response)
                yield response
        except httpx.TransportError as exc:
            raise self._unavailable(exc) from exc

    def excerpt(self, text: str) -> str:
        """The start of an answer's body on one line, with the API key masked."""
        text = " ".join(text.split())[:EXCERPT_CHARS]
        key = self._api_key.reveal() if self._api_key else ""
        return text.replace(key, "***") if key else text

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> ModelEndpoint:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _tries(self) -> str:
        return f" (after {self.policy.max_retries + 1} tries)"

    def _check(self, response: httpx.Response) -> None:
        status = response.status_code
        if status < 400:
            return
        tries = self._tries() if status in RETRY_STATUSES else ""
        raise ModelUnavailable(f"{self.kind} {self.url} {self._failure(response)}{tries}")

    def _unavailable(self, exc: httpx.TransportError) -> ModelUnavailable:
        return ModelUnavailable(f"{self.kind} {self.url} {self._failure(exc)}{self._tries()}")

    def _failure(self, failure: httpx.Response | httpx.TransportError) -> str:
        if isinstance(failure, httpx.Response):
            return f"answered {failure.status_code}: {self.excerpt(failure.text)}"
        if isinstance(failure, httpx.TimeoutException):
            return f"did not answer within {self.timeout:g} s"
        return f"is unreachable ({self.excerpt(str(failure))})"

    def _log_retry(self, failure: httpx.Response | httpx.TransportError, retry: int, wait: float) -> None:
        logger.warning(
            "%s %s %s; retry %d/%d in %.1f s",
            self.kind,
            self.url,
            self._failure(failure),
            retry + 1,
            self.policy.max_retries,
            wait,
        )
