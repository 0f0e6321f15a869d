"""Every error as JSON ``{"code", "message", "status"}`` with a stable code, never a stack trace.

zhiku's own errors keep their ``code`` and get an HTTP status from :data:`STATUS_OF_CODE`;
Flask's own 404/405/413 become ``not_found``, ``method_not_allowed`` and ``file_too_large``;
anything unexpected is logged with its traceback and answered ``500 internal_error``.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from flask import Flask, Response, jsonify
from werkzeug.exceptions import HTTPException

from zhiku.core.errors import ZhikuError

log = logging.getLogger(__name__)

#: HTTP status of each zhiku error code; an unlisted ``ZhikuError`` is a 400.
STATUS_OF_CODE: dict[str, int] = {
    "not_found": 404,
    "already_exists": 409,
    "invalid_input": 400,
    "invalid_config": 400,
    "extraction_error": 400,
    "unsupported_file_type": 415,
    "model_unavailable": 503,
    "store_error": 503,
    "store_busy": 503,
    "cancelled": 409,
    "time_limit": 503,
    "document_indexing": 409,
    "invalid_state": 409,
    "archived_document_immutable": 403,
}

_HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 413: "file_too_large", 429: "rate_limited"}

#: Failures on the server's side — a model that cannot load, a store that failed — answered with
#: a message that names nothing of the server (their details hold directories, URLs, settings a
#: caller has no business seeing); the detail goes to the server log only.
SERVER_SIDE_MESSAGES: dict[str, str] = {
    "model_unavailable": "a model this request needs is unavailable; the server log has the details",
    "store_error": "a store failed to answer; the server log has the details",
    "store_busy": "the stores are busy in another process; the server log has the details",
}


#: The Flask-Limiter scope of the limit per client address (its 429 names the address, not a key).
ADDRESS_SCOPE = "address"


def _too_many(exc: HTTPException) -> str:
    limit = getattr(exc, "limit", None)
    if getattr(limit, "scope", None) == ADDRESS_SCOPE:
        return f"too many requests from this address ({exc.description}); retry later"
    return f"too many requests for this API key ({exc.description}); retry later"


def retry_after(exc: HTTPException) -> dict[str, str]:
    """``Retry-After`` of a rate-limit answer: what the limiter put on its own response, else
    the seconds to the end of the limit's window."""
    own = exc.response.headers.get("Retry-After") if exc.response is not None else None
    if own:
        return {"Retry-After": own}
    limit = getattr(exc, "limit", None)
    seconds = int(limit.limit.get_expiry()) if limit is not None else 60
    return {"Retry-After": str(max(1, seconds))}


class ApiError(Exception):
    """An error answered as is: ``status``, stable ``code``, ``message`` and optional ``details``."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        details: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.headers = headers or {}


def error_response(
    status: int, code: str, message: str, details: list[dict[str, Any]] | None = None
) -> Response:
    body: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details is not None:
        body["details"] = details
    response = jsonify(body)
    response.status_code = status
    return response


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(ApiError)
    def _api_error(exc: ApiError) -> Response:
        response = error_response(exc.status, exc.code, exc.message, exc.details)
        response.headers.update(exc.headers)
        return response

    @app.errorhandler(ZhikuError)
    def _zhiku_error(exc: ZhikuError) -> Response:
        message = SERVER_SIDE_MESSAGES.get(exc.code)
        if message is not None:
            log.warning("%s: %s", exc.code, exc)
        return error_response(STATUS_OF_CODE.get(exc.code, 400), exc.code, message or str(exc))

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException) -> Response:
        status = exc.code or 500
        code = _HTTP_CODES.get(status) or re.sub(r"\W+", "_", (exc.name or "error").lower()).strip("_")
        message = {
            404: "no such endpoint; see /v1/openapi.json",
            405: "method not allowed on this endpoint",
            413: "request body too large",
        }.get(status, exc.description or exc.name or "error")
        if status == 429:
            message = _too_many(exc)
        response = error_response(status, code, message)
        if status == 429:
            response.headers.update(retry_after(exc))
        if status == 405 and exc.get_response().headers.get("Allow"):
            response.headers["Allow"] = exc.get_response().headers["Allow"]
        return response

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception) -> Response:
        log.exception("unhandled error")
        return error_response(500, "internal_error", "internal server error; the server log has the details")
