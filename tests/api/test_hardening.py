"""Bounded work for every request, and a scoped key learns nothing of the server.

Each test reproduces an attack on a live server with an ordinary key: rerank model names that
grew a cache without bound, 2,000 copies of one dataset id, JSON nested 50,000 deep, text no
store can hold, a scoped key probing other datasets' names and the server's directories, and
a key flooding the API or the indexing queue.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.api.conftest import Api, context_of, make_app
from zhiku.api.schemas import (
    MAX_MESSAGE_CHARS,
    MAX_NAME_CHARS,
    MAX_QUERY_CHARS,
    MAX_QUESTION_CHARS,
)
from zhiku.core.metadata import MAX_VALUE_CHARS


@pytest.fixture
def quiet_app(home: Path) -> Iterator[Flask]:
    """No indexing workers: requests only."""
    application = make_app(home, workers=False)
    yield application
    context_of(application).close()


@pytest.fixture
def quiet_api(quiet_app: Flask) -> Api:
    _, secret = context_of(quiet_app).keys.create(name="test")
    return Api(quiet_app.test_client(), secret)


def _error(response: Any, status: int, code: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.get_data(as_text=True)[:300])
    body: dict[str, Any] = response.json
    assert set(body) >= {"code", "message", "status"} and body["status"] == status, body
    if code is not None:
        assert body["code"] == code, body
    return body


def _scoped(app: Flask, *dataset_ids: str) -> Api:
    _, secret = context_of(app).keys.create(name="scoped", datasets=list(dataset_ids))
    return Api(app.test_client(), secret)


# -- models and paths are the operator's ----------------------------------------------------------


def test_600_rerank_names_are_refused_and_nothing_is_cached(quiet_app: Flask, quiet_api: Api) -> None:
    """Each distinct ``http:<anything>`` once opened and cached a client for good (805 → 1,202 MB
    after 600 requests). A request now names a model the operator configured, or gets a 400."""
    dataset = quiet_api.create_dataset("tea")
    kb = context_of(quiet_app).kb
    for i in range(600):
        rerank = {"mode": "reranking_model", "model": f"http:m{i}"}
        body = {"query": "tea", "retrieval_model": {"reranking": rerank}}
        refused = _error(quiet_api.post(f"/v1/datasets/{dataset}/retrieve", json=body), 400, "invalid_param")
        assert "unknown rerank model" in refused["message"]
    assert len(kb._models._reranks) == 0


def test_a_configured_rerank_name_is_accepted_and_a_missing_model_names_no_path(home: Path) -> None:
    secret_dir = "/srv/models/private-reranker"
    app = make_app(home, workers=False, rerank_models={"house": f"cross-encoder:{secret_dir}"})
    try:
        _, key = context_of(app).keys.create(name="k")
        api = Api(app.test_client(), key)
        dataset = api.create_dataset("tea")
        rerank = {"reranking": {"mode": "reranking_model", "model": "house"}}
        updated = api.patch(f"/v1/datasets/{dataset}", json={"retrieval_model": rerank})
        assert updated.status_code == 200, updated.json
        failed = api.post(f"/v1/datasets/{dataset}/retrieve", json={"query": "tea"})
        body = _error(failed, 503, "model_unavailable")
        assert secret_dir not in json.dumps(body) and "private-reranker" not in json.dumps(body)
    finally:
        context_of(app).close()


@pytest.mark.parametrize("spec", ["cross-encoder:/tmp", "cross-encoder:/no/such/dir", "http://evil.test/x"])
def test_a_path_or_url_as_rerank_model_gets_one_answer(quiet_api: Api, spec: str) -> None:
    """``cross-encoder:<dir>`` answered 503 naming the path for a missing directory: a probe of
    which directories exist. Every path now gets the same 400, existing or not."""
    dataset = quiet_api.create_dataset("tea")
    body = {"query": "tea", "retrieval_model": {"reranking": {"mode": "reranking_model", "model": spec}}}
    refused = _error(quiet_api.post(f"/v1/datasets/{dataset}/retrieve", json=body), 400, "invalid_param")
    assert "unknown rerank model" in refused["message"] and refused["details"][0]["loc"] == "retrieval_model"


@pytest.mark.parametrize("length", ["/nonexistent-dir", "/tmp", "../../etc"])
def test_a_tokenizer_path_is_refused_at_the_schema(quiet_api: Api, length: str) -> None:
    dataset = quiet_api.create_dataset("tea")
    response = quiet_api.post(
        f"/v1/datasets/{dataset}/document/create-by-text",
        json={"name": "a", "text": "tea", "process_rule": {"length": length}},
    )
    body = _error(response, 400, "invalid_param")
    assert "process_rule.length" in body["message"] and "unknown tokenizer" in body["message"]


# -- every request bounded -------------------------------------------------------------------


def test_2000_copies_of_one_dataset_id_are_refused_at_once(quiet_api: Api) -> None:
    dataset = quiet_api.create_dataset("tea")
    started = time.monotonic()
    response = quiet_api.post("/v1/retrieve", json={"query": "tea", "datasets": [dataset] * 2000})
    body = _error(response, 400, "invalid_param")
    assert time.monotonic() - started < 5  # generous: it was 16 s
    assert body["details"][0]["loc"] == "datasets"
    fine = quiet_api.post("/v1/retrieve", json={"query": "tea", "datasets": [dataset] * 50})
    assert fine.status_code == 200 and fine.json["datasets"] == [dataset], fine.json


@pytest.mark.parametrize("depth", [50_000, 1000, 40])
def test_deeply_nested_json_is_a_400(quiet_api: Api, depth: int) -> None:
    body = '{"query": "tea", "retrieval_model": ' + "[" * depth + "]" * depth + "}"
    response = quiet_api.post("/v1/retrieve", data=body, content_type="application/json")
    assert _error(response, 400)["code"] in ("invalid_json", "invalid_param")


@pytest.mark.parametrize(
    ("path", "payload", "field"),
    [
        ("/v1/retrieve", '{"query": "\\ud800"}', "query"),
        ("/v1/retrieve", '{"query": "tea\\u0000"}', "query"),
        ("/v1/datasets", '{"name": "a\\udfff"}', "name"),
        ("/v1/datasets", '{"name": "ok", "description": "\\u0000"}', "description"),
        ("/v1/retrieve", '{"query": "tea", "datasets": ["\\ud83d"]}', "datasets.0"),
        ("/v1/retrieve", '{"query": "tea", "\\ud800": 1}', "body"),
    ],
)
def test_lone_surrogates_and_nuls_are_refused_naming_the_field(
    quiet_api: Api, path: str, payload: str, field: str
) -> None:
    body = _error(quiet_api.post(path, data=payload, content_type="application/json"), 400, "invalid_param")
    assert body["details"][0]["loc"].startswith(field.split(".")[0] if field != "body" else ""), body


def test_segment_keywords_and_answers_are_bounded(quiet_api: Api) -> None:
    dataset = quiet_api.create_dataset("tea")
    base = f"/v1/datasets/{dataset}/documents/none/segments"
    cases = [
        ({"segments": [{"content": "c", "keywords": ["k"] * 101}]}, "segments.0.keywords"),
        ({"segments": [{"content": "c", "keywords": ["k" * 256]}]}, "segments.0.keywords.0"),
        ({"segments": [{"content": "c", "answer": "\ud800"}]}, "segments.0.answer"),
    ]
    for payload, loc in cases:
        data = json.dumps(payload)
        body = _error(quiet_api.post(base, data=data, content_type="application/json"), 400, "invalid_param")
        assert body["details"][0]["loc"] == loc, body


def _long(n: int) -> str:
    return "茶" * n


#: (path, body, the field named) — each one character past its limit.
OVERLONG_FIELDS = [
    ("/v1/retrieve", {"query": _long(MAX_QUERY_CHARS + 1)}, "query"),
    ("/v1/datasets/{dataset}/retrieve", {"query": _long(MAX_QUERY_CHARS + 1)}, "query"),
    ("/v1/datasets/{dataset}/hit-testing", {"query": _long(MAX_QUERY_CHARS + 1)}, "query"),
    ("/v1/kb-search", {"query": "tea", "datasets": [_long(MAX_NAME_CHARS + 1)]}, "datasets.0"),
    ("/v1/chat-messages", {"query": _long(MAX_QUESTION_CHARS + 1)}, "query"),
    ("/v1/chat-messages", {"query": "tea", "inputs": {"topic": _long(MAX_MESSAGE_CHARS + 1)}}, "inputs"),
    ("/v1/chat-messages", {"query": "tea", "datasets": [_long(MAX_NAME_CHARS + 1)]}, "datasets.0"),
    (
        "/v1/chat-messages",
        {
            "query": "tea",
            "answer": {"intents": [{"name": "a", "description": "b", "examples": [_long(2001)]}]},
        },
        "answer.intents.0.examples.0",
    ),
    (
        "/v1/chat/completions",
        {"model": "zhiku", "messages": [{"role": "user", "content": _long(MAX_MESSAGE_CHARS + 1)}]},
        "messages.0.content",
    ),
    (
        "/v1/chat/completions",
        {
            "model": "zhiku",
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": _long(MAX_MESSAGE_CHARS + 1)}]},
            ],
        },
        "messages.1.content",
    ),
    (
        "/v1/chat/completions",
        {
            "model": "zhiku",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": _long(MAX_MESSAGE_CHARS)}] * 2}
            ],
        },
        "messages.0.content",
    ),
    (
        "/v1/retrieval",
        {
            "knowledge_id": "{dataset}",
            "query": _long(MAX_QUESTION_CHARS + 1),
            "retrieval_setting": {"top_k": 3, "score_threshold": 0},
        },
        "query",
    ),
    (
        "/v1/datasets/{dataset}/documents/metadata",
        {
            "operation_data": [
                {"document_id": "d", "metadata_list": [{"id": "f", "value": _long(MAX_VALUE_CHARS + 1)}]}
            ]
        },
        "operation_data.0.metadata_list.0.value",
    ),
]


@pytest.mark.parametrize(
    ("path", "payload", "field"), OVERLONG_FIELDS, ids=[f"{p}:{f}" for p, _, f in OVERLONG_FIELDS]
)
def test_an_overlong_text_field_is_a_400_naming_it(
    quiet_api: Api, path: str, payload: dict[str, Any], field: str
) -> None:
    """Queries were bounded, the rest of a request's free text was not: a 20,000-character
    message cost minutes of embedding. Every text field now has a limit, checked before any work."""
    dataset = quiet_api.create_dataset("tea")
    body = json.loads(json.dumps(payload).replace("{dataset}", dataset))
    refused = _error(quiet_api.post(path.format(dataset=dataset), json=body), 400, "invalid_param")
    assert refused["details"][0]["loc"].startswith(field), refused["details"]
    assert field in refused["message"]


def test_text_limits_are_in_the_openapi_document(quiet_api: Api) -> None:
    components = quiet_api.get("/v1/openapi.json").json["components"]["schemas"]
    content = json.dumps(components["OpenAIMessage"]["properties"]["content"])
    assert f'"maxLength": {MAX_MESSAGE_CHARS}' in content
    assert components["ChatMessageBody"]["properties"]["query"]["maxLength"] == MAX_QUESTION_CHARS
    assert components["ExternalRetrievalBody"]["properties"]["query"]["maxLength"] == MAX_QUESTION_CHARS
    assert components["RetrieveBody"]["properties"]["query"]["maxLength"] == MAX_QUERY_CHARS


def test_questions_at_their_limits_are_answered(quiet_api: Api) -> None:
    """The longest accepted question is answered, not refused: the embedding model reads what
    fits its input and the rest is cut."""
    dataset = quiet_api.create_dataset("tea")
    query = "绿茶怎么泡？" + _long(MAX_QUERY_CHARS - 6)
    assert quiet_api.post("/v1/retrieve", json={"query": query}).status_code == 200
    message = {"role": "user", "content": "绿茶怎么泡？" + _long(MAX_MESSAGE_CHARS - 6)}
    answered = quiet_api.post("/v1/chat/completions", json={"model": "zhiku", "messages": [message]})
    assert answered.status_code == 200, answered.get_data(as_text=True)[:300]
    external = {
        "knowledge_id": dataset,
        "query": _long(MAX_QUESTION_CHARS),
        "retrieval_setting": {"top_k": 3, "score_threshold": 0},
    }
    assert quiet_api.post("/v1/retrieval", json=external).status_code == 200


# -- a scoped key learns nothing ---------------------------------------------------------------


def test_a_scoped_key_renaming_onto_another_dataset_learns_nothing(quiet_app: Flask, quiet_api: Api) -> None:
    mine = quiet_api.create_dataset("alpha")
    quiet_api.create_dataset("beta")
    scoped = _scoped(quiet_app, mine)
    body = _error(scoped.patch(f"/v1/datasets/{mine}", json={"name": "beta"}), 409, "already_exists")
    assert "beta" not in body["message"]
    # the full key sees every dataset: it is told which name is taken
    assert "beta" in _error(quiet_api.patch(f"/v1/datasets/{mine}", json={"name": "beta"}), 409)["message"]


# -- rate limits and the queue -----------------------------------------------------------------


def test_a_key_past_its_rate_limit_gets_429_with_retry_after(home: Path) -> None:
    app = make_app(home, workers=False, rate_limit_search=3)
    try:
        keys = context_of(app).keys
        first = Api(app.test_client(), keys.create(name="a")[1])
        second = Api(app.test_client(), keys.create(name="b")[1])
        dataset = first.create_dataset("tea")
        path = f"/v1/datasets/{dataset}/retrieve"
        for _ in range(3):
            assert first.post(path, json={"query": "tea"}).status_code == 200
        limited = first.post(path, json={"query": "tea"})
        body = _error(limited, 429, "rate_limited")
        assert int(limited.headers["Retry-After"]) >= 1, dict(limited.headers)
        assert "3 per 1 minute" in body["message"]
        assert first.get(f"/v1/datasets/{dataset}").status_code == 200  # reads: their own class
        assert second.post(path, json={"query": "tea"}).status_code == 200  # another key
    finally:
        context_of(app).close()


def test_dify_external_retrieval_counts_against_the_search_limit(home: Path) -> None:
    """``POST /v1/retrieval`` (Dify's External Knowledge API) is public in the route table (it
    answers Dify's own errors), and so escaped every limit: a key searched without bound."""
    app = make_app(home, workers=False, rate_limit_search=3)
    try:
        api = Api(app.test_client(), context_of(app).keys.create(name="a")[1])
        dataset = api.create_dataset("tea")
        body = {
            "knowledge_id": dataset,
            "query": "tea",
            "retrieval_setting": {"top_k": 3, "score_threshold": 0},
        }
        assert api.post("/v1/retrieve", json={"query": "tea"}).status_code == 200  # one search spent
        for _ in range(2):
            assert api.post("/v1/retrieval", json=body).status_code == 200
        limited = api.post("/v1/retrieval", json=body)
        assert "3 per 1 minute" in _error(limited, 429, "rate_limited")["message"]
        assert int(limited.headers["Retry-After"]) >= 1
        assert api.get("/v1/openapi.json").status_code == 200  # the other public route: no limit
    finally:
        context_of(app).close()


def test_the_indexing_queue_per_key_is_bounded(home: Path) -> None:
    app = make_app(home, workers=False, queue_max_per_key=2)
    try:
        api = Api(app.test_client(), context_of(app).keys.create(name="a")[1])
        dataset = api.create_dataset("tea")
        api.add_text(dataset, "a", "tea one")
        api.add_text(dataset, "b", "tea two")
        path = f"/v1/datasets/{dataset}/document/create-by-text"
        response = api.post(path, json={"name": "c", "text": "x"})
        assert "Retry-After" in response.headers
        assert "limit is 2" in _error(response, 429, "queue_full")["message"]
    finally:
        context_of(app).close()


def test_limits_are_off_by_default(quiet_api: Api) -> None:
    dataset = quiet_api.create_dataset("tea")
    for _ in range(50):
        assert quiet_api.post(f"/v1/datasets/{dataset}/retrieve", json={"query": "tea"}).status_code == 200


# -- files -----------------------------------------------------------------------------------


def test_the_data_directory_and_its_files_are_the_owners_alone(home: Path, quiet_api: Api) -> None:
    dataset = quiet_api.create_dataset("tea")
    quiet_api.add_text(dataset, "a", "tea")
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    database = home / "zhiku.db"  # absent when the run keeps its metadata in PostgreSQL
    assert not database.exists() or stat.S_IMODE(database.stat().st_mode) == 0o600
    uploads = [path for path in (home / "uploads").rglob("*") if path.is_file()]
    assert uploads and all(stat.S_IMODE(path.stat().st_mode) == 0o600 for path in uploads)
    folders = [path for path in (home / "uploads").rglob("*") if path.is_dir()]
    assert all(stat.S_IMODE(path.stat().st_mode) & 0o077 == 0 for path in folders)
    assert not database.exists() or os.access(database, os.R_OK | os.W_OK)
