"""Every error is JSON {code, message, status}: malformed JSON, invalid fields, size and type limits,
unknown ids, Flask's own 404/405, and a 500 without a stack trace."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from flask import Flask

from tests.api.conftest import Api, context_of, make_app
from tests.fixtures.make_files import pdf_bytes

UNKNOWN = "00000000-0000-0000-0000-000000000000"


def _error(response, status: int, code: str) -> dict:  # type: ignore[no-untyped-def]
    assert response.status_code == status, response.json
    body = response.json
    assert set(body) >= {"code", "message", "status"} and body["status"] == status and body["code"] == code
    assert "Traceback" not in body["message"]
    return body  # type: ignore[no-any-return]


def test_malformed_json_is_invalid_json(api: Api) -> None:
    dataset = api.create_dataset()
    response = api.post(
        f"/v1/datasets/{dataset}/retrieve", data='{"query": ', headers={"Content-Type": "application/json"}
    )
    _error(response, 400, "invalid_json")


def test_invalid_fields_are_named(api: Api) -> None:
    body = _error(
        api.post("/v1/datasets", json={"name": "", "retrieval_model": {"top_k": 0}}), 400, "invalid_param"
    )
    locations = {detail["loc"] for detail in body["details"]}
    assert locations == {"name", "retrieval_model"}
    dataset = api.create_dataset()
    body = _error(api.get(f"/v1/datasets/{dataset}/documents?limit=500"), 400, "invalid_param")
    assert body["details"][0]["loc"] == "limit"
    body = _error(
        api.post(
            f"/v1/datasets/{dataset}/document/create-by-text",
            json={"name": "a", "text": "b", "doc_form": "x"},
        ),
        400,
        "invalid_param",
    )
    assert "doc_form" in body["message"]
    _error(api.post(f"/v1/datasets/{dataset}/retrieve", json=["not", "an", "object"]), 400, "invalid_param")


def test_upload_limits(home: Path) -> None:
    app = make_app(home, workers=False, upload_max_mb=0.01)
    try:
        _, secret = context_of(app).keys.create()
        api = Api(app.test_client(), secret)
        dataset = api.create_dataset()
        big = io.BytesIO(b"tea " * 5000)
        response = api.post(
            f"/v1/datasets/{dataset}/document/create-by-file", data={"file": (big, "big.txt")}
        )
        _error(response, 413, "file_too_large")
        huge = io.BytesIO(b"x" * (2 * 1024 * 1024))
        _error(
            api.post(f"/v1/datasets/{dataset}/document/create-by-file", data={"file": (huge, "h.txt")}),
            413,
            "file_too_large",
        )
        text = api.post(
            f"/v1/datasets/{dataset}/document/create-by-text", json={"name": "t", "text": "茶" * 5000}
        )
        _error(text, 413, "file_too_large")
        binary = io.BytesIO(bytes(range(256)) * 4)
        _error(
            api.post(f"/v1/datasets/{dataset}/document/create-by-file", data={"file": (binary, "blob.bin")}),
            415,
            "unsupported_file_type",
        )
        _error(api.post(f"/v1/datasets/{dataset}/document/create-by-file", data={}), 400, "invalid_param")
        _error(
            api.post(
                f"/v1/datasets/{dataset}/document/create-by-file",
                data={"data": "{}"},
                content_type="multipart/form-data",
            ),
            400,
            "no_file_uploaded",
        )
        pdf = io.BytesIO(pdf_bytes(["tea"]))
        _error(
            api.post(
                f"/v1/datasets/{dataset}/document/create-by-file",
                data={"file": (pdf, "a.pdf"), "data": "{oops"},
            ),
            400,
            "invalid_json",
        )
    finally:
        context_of(app).close()


def test_unknown_ids_are_404(api: Api) -> None:
    dataset = api.create_dataset()
    document = api.indexed_text(dataset, "a", "Longjing is a green tea.")
    _error(api.get(f"/v1/datasets/{UNKNOWN}"), 404, "not_found")
    _error(api.get(f"/v1/datasets/{UNKNOWN}/documents"), 404, "not_found")
    _error(api.get(f"/v1/datasets/{dataset}/documents/{UNKNOWN}"), 404, "not_found")
    _error(api.delete(f"/v1/datasets/{dataset}/documents/{UNKNOWN}"), 404, "not_found")
    _error(api.get(f"/v1/datasets/{dataset}/documents/{UNKNOWN}/segments"), 404, "not_found")
    _error(api.get(f"/v1/datasets/{dataset}/documents/{document}/segments/{UNKNOWN}"), 404, "not_found")
    _error(api.get(f"/v1/datasets/{dataset}/documents/no-such-batch/indexing-status"), 404, "not_found")
    _error(
        api.patch(f"/v1/datasets/{dataset}/documents/status/enable", json={"document_ids": [UNKNOWN]}),
        404,
        "not_found",
    )


def test_flask_errors_are_json(api: Api) -> None:
    _error(api.get("/v1/no-such-thing"), 404, "not_found")
    response = _error(api.delete("/v1/openapi.json"), 405, "method_not_allowed")
    assert response["message"]
    dataset = api.create_dataset()
    _error(
        api.patch(f"/v1/datasets/{dataset}/documents/status/explode", json={"document_ids": ["x"]}),
        400,
        "invalid_action",
    )


def test_duplicate_name_is_409(api: Api) -> None:
    api.create_dataset("same")
    _error(api.post("/v1/datasets", json={"name": "same"}), 409, "already_exists")


def test_unexpected_errors_are_500_without_details(
    app: Flask, api: Api, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("secret internals /srv/data")

    monkeypatch.setattr(context_of(app).catalog, "dataset_ids", broken)
    body = _error(api.get("/v1/datasets"), 500, "internal_error")
    assert "secret" not in body["message"]
    assert "secret internals" in caplog.text
