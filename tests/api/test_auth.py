"""Bearer keys: 401 without or with a bad key, 403 for scoped keys creating datasets, 404 outside
a key's scope (the same answer as for an unknown dataset), and keys stored hashed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def test_scoped_key_cannot_widen_its_scope_through_answer_intents(app: Flask, api: Api) -> None:
    """An intent's datasets narrow the datasets asked, never widen them: a key scoped to one
    dataset naming another in ``answer.intents[].datasets`` gets the same 404 as for a dataset
    that does not exist, on Dify's chat-messages and on OpenAI's chat completions."""
    base = api.create_dataset("base")
    secret_hr = api.create_dataset("secret-hr")
    api.wait(secret_hr, api.add_text(secret_hr, "pay.txt", "The CEO's salary is 9,876,543 yuan a year.")[1])
    api.wait(base, api.add_text(base, "tea.txt", "Green tea is steeped at 80 degrees for two minutes.")[1])
    _, key = context_of(app).keys.create(datasets=[base])
    scoped = Api(app.test_client(), key)

    def intents(names: list[str]) -> dict[str, Any]:
        intent = {"name": "pay", "description": "salary", "datasets": names}
        return {"answerer": "extractive", "intents": [intent]}

    replies = {}
    for name in ("secret-hr", secret_hr, "no-such-dataset"):
        replies[name] = [
            scoped.post(
                "/v1/chat-messages",
                json={
                    "query": "What is the CEO's salary?",
                    "user": "u",
                    "response_mode": "blocking",
                    "answer": intents([name]),
                },
            ),
            scoped.post(
                "/v1/chat/completions",
                json={
                    "model": "zhiku",
                    "messages": [{"role": "user", "content": "What is the CEO's salary?"}],
                    "answer": intents([name]),
                },
            ),
        ]
    for name, responses in replies.items():
        for response in responses:
            assert response.status_code == 404, (name, response.json)
            assert response.json["code"] == "not_found"
            assert "9,876,543" not in response.get_data(as_text=True)
    assert replies["secret-hr"][0].json["message"] == "no dataset 'secret-hr'"

    allowed = scoped.post(
        "/v1/chat-messages",
        json={
            "query": "How hot is the water for green tea?",
            "user": "u",
            "response_mode": "blocking",
            "answer": intents(["base"]),
        },
    )
    assert allowed.status_code == 200, allowed.json
    assert "80 degrees" in allowed.json["answer"]
