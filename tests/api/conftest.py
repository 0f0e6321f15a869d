"""An API app over a knowledge base in a temp dir (fast ``use`` embedding, one indexing worker)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from zhiku.api import create_app
from zhiku.api.context import ApiContext
from zhiku.core.config import Settings
from zhiku.core.document_status import IN_PROGRESS, DocumentStatus

DONE = ("completed", "error")
#: What a just-queued document reads: waiting, or already claimed by a worker (workers poll too).
UNDER_WAY = frozenset({DocumentStatus.WAITING.value, *(status.value for status in IN_PROGRESS)})


class Api:
    """The test client with a bearer key and short-hands for the calls tests repeat."""

    def __init__(self, client: FlaskClient, key: str | None) -> None:
        self.client = client
        self.key = key

    def _headers(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        headers = dict(kwargs.pop("headers", {}) or {})
        if self.key is not None:
            headers.setdefault("Authorization", f"Bearer {self.key}")
        return headers

    def get(self, path: str, **kwargs: Any) -> TestResponse:
        return self.client.get(path, headers=self._headers(kwargs), **kwargs)

    def post(self, path: str, **kwargs: Any) -> TestResponse:
        return self.client.post(path, headers=self._headers(kwargs), **kwargs)

    def patch(self, path: str, **kwargs: Any) -> TestResponse:
        return self.client.patch(path, headers=self._headers(kwargs), **kwargs)

    def delete(self, path: str, **kwargs: Any) -> TestResponse:
        return self.client.delete(path, headers=self._headers(kwargs), **kwargs)

    def create_dataset(self, name: str = "tea", **fields: Any) -> str:
        response = self.post("/v1/datasets", json={"name": name, **fields})
        assert response.status_code == 200, response.json
        return str(response.json["id"])

    def add_text(self, dataset_id: str, name: str, text: str, **fields: Any) -> tuple[str, str]:
        """Queue a text document; returns (document id, batch)."""
        response = self.post(
            f"/v1/datasets/{dataset_id}/document/create-by-text", json={"name": name, "text": text, **fields}
        )
        assert response.status_code == 200, response.json
        return response.json["document"]["id"], response.json["batch"]

    def wait(self, dataset_id: str, batch: str, timeout: float = 90.0) -> list[dict[str, Any]]:
        """Poll indexing-status until every document of the batch is completed or failed."""
        deadline = time.monotonic() + timeout
        while True:
            response = self.get(f"/v1/datasets/{dataset_id}/documents/{batch}/indexing-status")
            assert response.status_code == 200, response.json
            data: list[dict[str, Any]] = response.json["data"]
            if all(item["indexing_status"] in DONE for item in data):
                return data
            assert time.monotonic() < deadline, data
            time.sleep(0.05)

    def indexed_text(self, dataset_id: str, name: str, text: str, **fields: Any) -> str:
        document_id, batch = self.add_text(dataset_id, name, text, **fields)
        (status,) = self.wait(dataset_id, batch)
        assert status["indexing_status"] == "completed", status
        return document_id


def make_app(home: Path, *, workers: bool = True, auth: bool = True, **settings: Any) -> Flask:
    values = {"embedding_model": "use", "indexing_workers": 1, **settings}
    return create_app(Settings.load(home, **values), workers=workers, auth=auth)


def context_of(app: Flask) -> ApiContext:
    return app.extensions["zhiku"]  # type: ignore[no-any-return]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def app(home: Path) -> Iterator[Flask]:
    application = make_app(home)
    yield application
    context_of(application).close()


@pytest.fixture
def api(app: Flask) -> Api:
    _, secret = context_of(app).keys.create(name="test")
    return Api(app.test_client(), secret)
