"""The console's API access page: the API's address and OpenAPI document, keys listed without
their secrets, a new key (optionally scoped) shown once, revoking one refused by the API at once,
when each key was last used; only a sign-in valid for every dataset manages keys."""

from __future__ import annotations

import re

from flask import Flask

from tests.api.conftest import context_of
from tests.console.conftest import Console


def _new_key(console: Console, **form: object) -> tuple[str, str]:
    """The page after creating a key, and the secret it shows."""
    page = console.post("/api-access/keys", form).get_data(as_text=True)
    found = re.search(r'id="secret-value">(zk-[A-Za-z0-9_-]+)<', page)
    assert found, page
    return page, found[1]


def test_the_page_needs_a_sign_in_valid_for_every_dataset(app: Flask, console: Console) -> None:
    anonymous = app.test_client()
    assert anonymous.get("/api-access").status_code == 302
    assert anonymous.post("/api-access/keys", data={"name": "x"}).status_code in (400, 401)
    dataset = console.create_dataset("tea")
    scoped = Console(app.test_client())
    scoped.sign_in(context_of(app).keys.create(name="scoped", datasets=[dataset])[1])
    assert scoped.get("/api-access").status_code == 403
    assert "nav-api" not in scoped.get("/datasets").get_data(as_text=True)
    assert scoped.post("/api-access/keys", {"name": "escalate"}).status_code == 403
    assert all(key.name != "escalate" for key in context_of(app).keys.stored())


def test_the_page_names_the_api_and_lists_keys_without_secrets(console: Console, secret: str) -> None:
    page = console.get("/api-access").get_data(as_text=True)
    assert 'id="base-url">http://localhost/v1<' in page
    assert 'href="http://localhost/v1/openapi.json"' in page
    assert console.client.get("/v1/openapi.json").status_code == 200
    assert secret not in page and secret[:10] in page  # the prefix recognises it, never the secret
    assert "The key you signed in with" in page


def test_a_new_key_is_shown_once_works_and_a_revoked_one_is_refused_at_once(
    app: Flask, console: Console
) -> None:
    dataset = console.create_dataset("oolong")
    console.create_dataset("other")
    page, secret = _new_key(console, name="app <b>one</b>", datasets=[dataset])
    assert "app &lt;b&gt;one&lt;/b&gt;" in page and "<b>one</b>" not in page
    assert page.count(secret) == 1 and 'id="copy-secret"' in page
    assert secret not in console.get("/api-access").get_data(as_text=True)  # shown once
    (key,) = [k for k in context_of(app).keys.stored() if k.name == "app <b>one</b>"]
    assert key.datasets == (dataset,)
    api = app.test_client()
    bearer = {"Authorization": f"Bearer {secret}"}
    listed = api.get("/v1/datasets", headers=bearer)
    assert listed.status_code == 200 and [d["id"] for d in listed.json["data"]] == [dataset]  # type: ignore[index]
    used = console.get("/api-access").get_data(as_text=True).split(f'data-key="{key.id}"')[1]
    assert "never" not in used.split("</tr>")[0]  # its last use is shown

    revoked = console.post(f"/api-access/keys/{key.id}/revoke")
    assert revoked.status_code == 302 and revoked.headers["Location"].endswith("revoked=1")
    assert api.get("/v1/datasets", headers=bearer).status_code == 401
    row = console.get("/api-access").get_data(as_text=True).split(f'data-key="{key.id}"')[1].split("</tr>")[0]
    assert row.startswith(' class="revoked"') and "button" not in row  # nothing left to revoke
    assert console.post("/api-access/keys/no-such-key/revoke").status_code == 404


def test_a_key_unused_says_never_and_its_scope_by_name(app: Flask, console: Console) -> None:
    dataset = console.create_dataset("puer")
    _new_key(console, name="unused", datasets=[dataset])
    page = console.get("/api-access").get_data(as_text=True)
    (key,) = [k for k in context_of(app).keys.stored() if k.name == "unused"]
    row = page.split(f'data-key="{key.id}"')[1].split("</tr>")[0]
    assert "never" in row and ">puer<" in row


def test_a_bad_new_key_is_refused_beside_its_field_as_typed(console: Console) -> None:
    console.create_dataset("tea")
    for form, field, message in (
        ({"name": ""}, "name", "required"),
        ({"name": "n" * 10_000}, "name", "at most 255 characters"),
        ({"name": "ok", "datasets": ["<script>x</script>"]}, "datasets", "each one of"),
    ):
        response = console.post("/api-access/keys", form)
        page = response.get_data(as_text=True)
        assert response.status_code == 400, form
        beside = re.search(rf'id="error-new-key-{field}"[^>]*>([^<]+)<', page)
        assert beside and beside[1].startswith(message), page
        assert "<script>x" not in page and 'id="secret-value"' not in page
    kept = console.post("/api-access/keys", {"name": "n" * 300}).get_data(as_text=True)
    assert 'value="' + "n" * 300 + '"' in kept
    json = console.post("/api-access/keys", {"name": ""}, headers={"Accept": "application/json"})
    assert json.status_code == 400 and json.json["message"].startswith("name")  # type: ignore[index]


def test_a_key_records_its_last_use_at_most_once_a_minute(app: Flask) -> None:
    from zhiku.api.keys import ApiKeys

    keys = ApiKeys(context_of(app).kb.sessions, cache_seconds=0)
    key, secret = keys.create(name="counted")
    assert key.last_used_at is None
    first = keys.verify(secret)
    assert first is not None
    (stored,) = [k for k in keys.stored() if k.id == key.id]
    assert stored.last_used_at is not None
    keys.verify(secret)
    (again,) = [k for k in keys.stored() if k.id == key.id]
    assert again.last_used_at == stored.last_used_at  # within the minute: not written again
