"""Bearer keys: 401 without or with a bad key, 403 for scoped keys creating datasets, 404 outside
a key's scope (the same answer as for an unknown dataset), and keys stored hashed."""

from __future__ import annotations

from pathlib import Path

from flask import Flask

from tests.api.conftest import Api, context_of, make_app
from zhiku.core.db.models import ApiKeyRow


def test_missing_bad_and_revoked_keys_get_401(app: Flask, api: Api) -> None:
    anonymous = Api(app.test_client(), None)
    response = anonymous.get("/v1/datasets")
    assert response.status_code == 401
    assert response.json == {
        "code": "unauthorized",
        "message": "send an API key: Authorization: Bearer <key>",
        "status": 401,
    }
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert Api(app.test_client(), "zk-not-a-key").get("/v1/datasets").status_code == 401
    assert anonymous.get("/v1/datasets", headers={"Authorization": "Basic abc"}).status_code == 401

    keys = context_of(app).keys
    key, secret = keys.create()
    assert Api(app.test_client(), secret).get("/v1/datasets").status_code == 200
    keys.revoke(key.prefix)
    revoked = Api(app.test_client(), secret).get("/v1/datasets")
    assert revoked.status_code == 401 and revoked.json["message"] == "invalid or revoked API key"


def test_keys_are_stored_as_hashes(app: Flask) -> None:
    key, secret = context_of(app).keys.create()
    with context_of(app).kb.sessions() as session:
        row = session.get(ApiKeyRow, key.id)
        assert row is not None
        assert secret not in (row.key_hash, row.prefix) and secret.startswith(row.prefix)
        assert len(row.key_hash) == 64


def test_scoped_key_sees_only_its_datasets(app: Flask, api: Api) -> None:
    mine = api.create_dataset("mine")
    other = api.create_dataset("other")
    _, secret = context_of(app).keys.create(datasets=[mine])
    scoped = Api(app.test_client(), secret)

    created = scoped.post("/v1/datasets", json={"name": "new"})
    assert created.status_code == 403 and created.json["code"] == "forbidden"
    listed = scoped.get("/v1/datasets").json
    assert [item["id"] for item in listed["data"]] == [mine] and listed["total"] == 1
    assert scoped.get(f"/v1/datasets/{mine}").status_code == 200

    outside = scoped.get(f"/v1/datasets/{other}")
    unknown = scoped.get("/v1/datasets/00000000-0000-0000-0000-000000000000")
    assert outside.status_code == unknown.status_code == 404
    assert outside.json["code"] == "not_found" and other not in outside.json["message"].replace(other, "", 1)
    for call in (
        scoped.get(f"/v1/datasets/{other}/documents"),
        scoped.post(f"/v1/datasets/{other}/document/create-by-text", json={"name": "x", "text": "y"}),
        scoped.post(f"/v1/datasets/{other}/retrieve", json={"query": "tea"}),
        scoped.delete(f"/v1/datasets/{other}"),
        scoped.post("/v1/retrieve", json={"query": "tea", "datasets": [other]}),
    ):
        assert call.status_code == 404, call.json
    assert api.get(f"/v1/datasets/{other}").status_code == 200


def test_openapi_needs_no_key(app: Flask) -> None:
    assert Api(app.test_client(), None).get("/v1/openapi.json").status_code == 200


def test_auth_off_for_a_trusted_embedding_process(home: Path) -> None:
    app = make_app(home, auth=False, workers=False)
    try:
        assert Api(app.test_client(), None).get("/v1/datasets").status_code == 200
    finally:
        context_of(app).close()
