"""The console over an API app in a temp dir, driven through Flask's test client."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from tests.api.conftest import context_of, make_app

_TOKEN = re.compile(r'name="csrf-token" content="([^"]+)"')


class Console:
    """A browser-like client: signs in with a form, keeps its cookie, sends the page's CSRF token."""

    def __init__(self, client: FlaskClient) -> None:
        self.client = client
        self.token = ""

    def get(self, path: str, **kwargs: object) -> TestResponse:
        response = self.client.get(path, **kwargs)  # type: ignore[arg-type]
        found = _TOKEN.search(response.get_data(as_text=True))
        if found:
            self.token = found.group(1)
        return response

    def post(self, path: str, data: dict[str, object] | None = None, *, csrf: bool = True, **kwargs: object):  # type: ignore[no-untyped-def]
        form = dict(data or {})
        if csrf:
            if not self.token:
                self.get("/signin")
            form["csrf_token"] = self.token
        return self.client.post(path, data=form, **kwargs)  # type: ignore[arg-type]

    def sign_in(self, secret: str, method: str = "key") -> TestResponse:
        self.get("/signin")
        response = self.post("/signin", {"secret": secret, "method": method})
        self.get("/datasets")
        return response

    def create_dataset(self, name: str) -> str:
        response = self.post("/datasets", {"name": name})
        assert response.status_code == 302, response.get_data(as_text=True)
        return response.headers["Location"].rsplit("/", 1)[-1]

    def add_text(self, dataset_id: str, name: str, text: str) -> str:
        from io import BytesIO

        response = self.post(
            f"/datasets/{dataset_id}/upload",
            {"file": (BytesIO(text.encode()), name)},
            headers={"Accept": "application/json"},
        )
        assert response.status_code == 200, response.get_data(as_text=True)
        return str(response.json["documents"][0]["id"])  # type: ignore[index]

    def wait_indexed(self, dataset_id: str, timeout: float = 90.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            response = self.get(f"/datasets/{dataset_id}/rows")
            if response.headers["X-Zhiku-Active"] == "0":
                return response.get_data(as_text=True)
            assert time.monotonic() < deadline
            time.sleep(0.1)


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Flask]:
    application = make_app(tmp_path / "home")
    yield application
    context_of(application).close()


@pytest.fixture
def secret(app: Flask) -> str:
    return context_of(app).keys.create(name="console")[1]


@pytest.fixture
def console(app: Flask, secret: str) -> Console:
    signed = Console(app.test_client())
    signed.sign_in(secret)
    return signed
