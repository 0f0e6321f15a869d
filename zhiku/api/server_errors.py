"""Errors waitress answers itself (a malformed request line, a raw UTF-8 query string, a header
too large) in the API's JSON error shape, like every other error, instead of waitress's plain
text: clients parse one shape."""

from __future__ import annotations

import json

from waitress.channel import HTTPChannel
from waitress.task import ErrorTask

#: What to do about the errors a client can fix.
HINTS = {"Bad URI": "percent-encode non-ASCII characters in the path and query string"}


class JsonErrorTask(ErrorTask):  # type: ignore[misc]
    def execute(self) -> None:
        error = self.request.error
        code = str(error.reason).lower().replace(" ", "_")
        message = str(error.body) + (f": {HINTS[error.body]}" if error.body in HINTS else "")
        body = json.dumps({"code": code, "message": message, "status": error.code}).encode()
        self.status = f"{error.code} {error.reason}"
        self.response_headers.append(("Content-Type", "application/json"))
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class JsonErrorChannel(HTTPChannel):  # type: ignore[misc]
    error_task_class = JsonErrorTask
