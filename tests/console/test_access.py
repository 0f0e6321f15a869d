"""Signing in to the console and what a session may do: the cookie's flags, CSRF on every
change, a dataset-scoped key's view, revoked keys and changed passwords, no key in any page."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from flask import Flask

from tests.api.conftest import context_of, make_app
from tests.console.conftest import Console
from zhiku.console import SIGNIN_PER_MINUTE
from zhiku.console.password import ConsolePassword
from zhiku.console.views.account import safe_next


def test_pages_need_a_sign_in(app: Flask) -> None:
    client = app.test_client()
    response = client.get("/datasets/whatever/segments?page=2")
    assert response.status_code == 302
    assert response.headers["Location"].startswith("/signin?next=")
    fetched = client.get("/datasets", headers={"Accept": "application/json"})
    assert fetched.status_code == 401
    assert fetched.json == {"code": "unauthorized", "message": "sign in to the console first", "status": 401}


def test_a_wrong_key_is_refused_and_a_right_one_signs_in(app: Flask, secret: str) -> None:
    browser = Console(app.test_client())
    browser.get("/signin")
    wrong = browser.post("/signin", {"secret": "zk-not-a-key"})
    assert wrong.status_code == 401
    assert "Wrong API key or password." in wrong.get_data(as_text=True)
    right = browser.post("/signin?next=/datasets", {"secret": secret})
    assert right.status_code == 302 and right.headers["Location"] == "/datasets"
    cookie = right.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie
    assert secret not in cookie and secret not in right.headers["Location"]
    page = browser.get("/datasets")
    assert page.status_code == 200 and secret not in page.get_data(as_text=True)
    assert "Content-Security-Policy" in page.headers and page.headers["Cache-Control"] == "no-store"


def test_every_change_needs_the_csrf_token(console: Console, secret: str) -> None:
    refused = console.post("/datasets", {"name": "tea"}, csrf=False)
    assert refused.status_code == 400
    assert "security token" in refused.get_data(as_text=True)
    as_json = console.post(
        "/datasets",
        {"name": "tea", "csrf_token": "forged"},
        csrf=False,
        headers={"Accept": "application/json"},
    )
    assert as_json.status_code == 400 and as_json.json["code"] == "csrf_failed"  # type: ignore[index]
    signout = console.post("/signout", csrf=False)
    assert signout.status_code == 400
    assert console.get("/datasets").status_code == 200  # still signed in
    # the API's bearer-key requests need no token
    api = console.client.post(
        "/v1/datasets", json={"name": "tea"}, headers={"Authorization": f"Bearer {secret}"}
    )
    assert api.status_code == 200


def test_a_scoped_key_sees_only_its_datasets(app: Flask, console: Console) -> None:
    mine = console.create_dataset("mine")
    other = console.create_dataset("other")
    scoped = context_of(app).keys.create(name="scoped", datasets=[mine])[1]
    browser = Console(app.test_client())
    browser.sign_in(scoped)
    listing = browser.get("/datasets").get_data(as_text=True)
    assert "mine" in listing and "other" not in listing and "create-dataset" not in listing
    for page in ("", "/segments", "/hit-testing", "/settings"):
        assert browser.get(f"/datasets/{mine}{page}").status_code == 200
        response = browser.get(f"/datasets/{other}{page}")
        assert response.status_code == 404, page
        assert "other" not in response.get_data(as_text=True)
    assert browser.post("/datasets", {"name": "third"}).status_code == 403
    assert browser.post(f"/datasets/{other}/delete").status_code == 404


def test_revoking_the_key_ends_its_session(app: Flask, console: Console, secret: str) -> None:
    keys = context_of(app).keys
    (key,) = [k for k in keys.stored() if k.name == "console"]
    keys.revoke(key.id)
    assert console.get("/datasets").status_code == 302


def test_the_console_password_signs_in_and_changing_it_signs_out(app: Flask) -> None:
    home = context_of(app).settings.home
    store = ConsolePassword(home)
    store.set("first password")
    assert (store.path.stat().st_mode & 0o777) == 0o600
    assert "first password" not in store.path.read_text()
    browser = Console(app.test_client())
    assert browser.sign_in("wrong password", method="password").status_code == 401
    assert browser.sign_in("first password", method="password").status_code == 302
    assert browser.get("/datasets").status_code == 200
    store.set("second password")
    assert browser.get("/datasets").status_code == 302


def test_the_stylesheet_and_script_are_served_without_a_sign_in(app: Flask) -> None:
    client = app.test_client()
    for name, kind in (("console.css", "text/css"), ("console.js", "text/javascript")):
        response = client.get(f"/assets/{name}")
        assert response.status_code == 200 and response.mimetype == kind


def test_next_stays_on_this_site() -> None:
    assert safe_next("/datasets?page=2") == "/datasets?page=2"
    for outside in ("//evil.example/x", "https://evil.example", "\\\\evil", "/\\evil", None, ""):
        assert safe_next(outside) == "/"


#: ``next`` values a browser would follow off the site: a tab, newline or space a browser drops
#: from a URL (``/\t/evil`` is ``//evil``), a backslash it reads as a slash, an encoded one.
HOSTILE_NEXT = [
    "/\t/evil.example",
    "/\n/evil.example",
    "/\r\n/evil.example",
    "/ /evil.example",
    "\t//evil.example",
    "/%09/evil.example",
    "/%2F/evil.example",
    "/%5Cevil.example",
    "/\x00/evil.example",
    "/\u3000/evil.example",
    "///evil.example",
    "http:/evil.example",
    "javascript:alert(1)",
    "datasets",
    "/\\/evil.example",
]


def test_hostile_next_values_stay_on_this_site() -> None:
    for outside in HOSTILE_NEXT:
        assert safe_next(outside) == "/", outside
    assert safe_next("/datasets/abc/segments?page=2&keyword=%E8%8C%B6") == (
        "/datasets/abc/segments?page=2&keyword=%E8%8C%B6"
    )


def test_signing_in_with_a_hostile_next_goes_home(app: Flask, secret: str) -> None:
    """``next=/%09/evil.example`` was sent back as ``Location: /\t/evil.example``, which a browser
    follows to ``//evil.example``: another site, right after the sign-in."""
    for outside in ("/%09/evil.example", "/%0A/evil.example", "/%5C/evil.example", "%2F%2Fevil.example"):
        browser = Console(app.test_client())
        browser.get("/signin")
        response = browser.post(f"/signin?next={outside}", {"secret": secret})
        assert response.status_code == 302 and response.headers["Location"] == "/", outside
        signed = browser.get(f"/signin?next={outside}")
        assert signed.status_code == 302 and signed.headers["Location"] == "/", outside
    browser.get("/datasets")  # the signed-in session's form token
    language = browser.post("/language", {"lang": "zh", "next": "/\t/evil.example"})
    assert language.status_code == 302 and language.headers["Location"] == "/"


def test_language_follows_the_browser_then_the_switch(console: Console) -> None:
    english = console.get("/datasets").get_data(as_text=True)
    assert ">Datasets<" in english
    chinese = console.get("/datasets", headers={"Accept-Language": "zh-CN,zh;q=0.9"}).get_data(as_text=True)
    assert ">知识库<" in chinese and 'lang="zh-CN"' in chinese
    switched = console.post("/language", {"lang": "zh", "next": "/datasets"})
    assert switched.status_code == 302 and "lang=zh" in switched.headers["Set-Cookie"]
    assert ">知识库<" in console.get("/datasets").get_data(as_text=True)


def test_console_password_command_stores_only_a_hash(tmp_path: Path) -> None:
    home = tmp_path / "home"
    command = [sys.executable, "-m", "zhiku.cli", "--home", str(home), "console-password"]
    short = subprocess.run([*command, "--password-stdin"], input="short\n", capture_output=True, text=True)
    assert short.returncode == 1 and "password: between 8" in short.stderr
    made = subprocess.run(
        [*command, "--password-stdin"], input="tea garden 9\n", capture_output=True, text=True
    )
    assert made.returncode == 0, made.stderr
    store = ConsolePassword(home)
    assert store.verify("tea garden 9") is not None and store.verify("tea garden 8") is None
    assert (store.path.stat().st_mode & 0o777) == 0o600 and "tea garden" not in store.path.read_text()
    cleared = subprocess.run([*command, "--clear"], capture_output=True, text=True)
    assert cleared.returncode == 0 and store.stored() is None


def _wrong_sign_in(app: Flask, address: str, forwarded_for: str | None = None, n: int = 0) -> int:
    """One failed sign-in from ``address``, varying what an attacker controls: a fresh session,
    an ``X-Forwarded-For`` and a bearer header of its own each time."""
    browser = Console(app.test_client())
    headers = {"Authorization": f"Bearer zk-guess-{n}", "Accept": "application/json"}
    if forwarded_for is not None:
        headers["X-Forwarded-For"] = forwarded_for
    environ = {"REMOTE_ADDR": address}
    browser.get("/signin", environ_base=environ)
    response = browser.post("/signin", {"secret": f"zk-wrong-{n}"}, headers=headers, environ_base=environ)
    return int(response.status_code)


def test_failed_sign_ins_from_one_address_are_limited_whatever_its_headers(app: Flask, secret: str) -> None:
    """The limit was keyed on the bearer header, which an attacker varies at will: guesses were
    not limited at all. It is keyed on the connection's address now."""
    statuses = [_wrong_sign_in(app, "203.0.113.7", f"198.51.100.{n}", n) for n in range(SIGNIN_PER_MINUTE)]
    assert statuses == [401] * SIGNIN_PER_MINUTE
    assert _wrong_sign_in(app, "203.0.113.7", "198.51.100.250", 999) == 429
    # the address is refused even with the right key; another address still signs in
    browser = Console(app.test_client())
    browser.get("/signin", environ_base={"REMOTE_ADDR": "203.0.113.7"})
    limited = browser.post(
        "/signin",
        {"secret": secret},
        headers={"Accept": "application/json"},
        environ_base={"REMOTE_ADDR": "203.0.113.7"},
    )
    assert limited.status_code == 429 and limited.json["code"] == "rate_limited"  # type: ignore[index]
    assert int(limited.headers["Retry-After"]) >= 1
    assert _wrong_sign_in(app, "203.0.113.8") == 401
    other = Console(app.test_client())
    other.get("/signin", environ_base={"REMOTE_ADDR": "203.0.113.9"})
    signed = other.post("/signin", {"secret": secret}, environ_base={"REMOTE_ADDR": "203.0.113.9"})
    assert signed.status_code == 302


def test_behind_a_trusted_proxy_sign_ins_are_limited_per_forwarded_address(tmp_path: Path) -> None:
    proxy = "10.0.0.2"
    app = make_app(tmp_path / "home", workers=False, trusted_proxies=[proxy])
    try:
        for n in range(SIGNIN_PER_MINUTE):
            assert _wrong_sign_in(app, proxy, "198.51.100.1", n) == 401
        assert _wrong_sign_in(app, proxy, "198.51.100.1") == 429
        # a forged entry before the proxy's own is ignored: the address the proxy saw counts
        assert _wrong_sign_in(app, proxy, "192.0.2.9, 198.51.100.1") == 429
        assert _wrong_sign_in(app, proxy, "198.51.100.2") == 401
        # a client that is not the proxy is counted by its own address, whatever it forwards
        for n in range(SIGNIN_PER_MINUTE):
            assert _wrong_sign_in(app, "203.0.113.50", f"198.51.100.{100 + n}", n) == 401
        assert _wrong_sign_in(app, "203.0.113.50", "198.51.100.200") == 429
    finally:
        context_of(app).close()
