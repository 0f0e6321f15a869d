"""Every API request counts against its client address, whatever key it carries (setting
``rate_limit_per_address``): many keys from one address share one count; the address behind a
trusted proxy is the forwarded one; the loopback is not counted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.api.conftest import Api, context_of, make_app

CLIENT = "203.0.113.7"
PROXY = "10.0.0.5"


@pytest.fixture
def limited_app(home: Path) -> Iterator[Flask]:
    app = make_app(home, workers=False, rate_limit_per_address=4, trusted_proxies=[PROXY])
    yield app
    context_of(app).close()


def client_from(app: Flask, address: str, name: str, **environ: Any) -> Api:
    """An API client with a key of its own whose connection comes from ``address``."""
    client = app.test_client()
    client.environ_base.update({"REMOTE_ADDR": address, **environ})
    return Api(client, context_of(app).keys.create(name=name)[1])


def test_keys_from_one_address_share_its_limit_and_the_429_says_so(limited_app: Flask) -> None:
    first, second = client_from(limited_app, CLIENT, "a"), client_from(limited_app, CLIENT, "b")
    for api in (first, second, first, second):
        assert api.get("/v1/datasets").status_code == 200
    refused = second.get("/v1/datasets")
    assert refused.status_code == 429, refused.json
    assert refused.json["code"] == "rate_limited"
    assert "from this address" in refused.json["message"], refused.json
    assert "rate_limit_per_address" in refused.json["message"], refused.json
    assert int(refused.headers["Retry-After"]) >= 1, dict(refused.headers)
    # a request without any key, or to a public route, is counted too
    assert first.client.get("/v1/openapi.json").status_code == 429
    assert client_from(limited_app, "203.0.113.8", "c").get("/v1/datasets").status_code == 200


def test_behind_a_trusted_proxy_the_forwarded_address_is_counted(limited_app: Flask) -> None:
    one = client_from(limited_app, PROXY, "one", HTTP_X_FORWARDED_FOR=CLIENT)
    other = client_from(limited_app, PROXY, "other", HTTP_X_FORWARDED_FOR="198.51.100.9")
    for _ in range(4):
        assert one.get("/v1/datasets").status_code == 200
    assert one.get("/v1/datasets").status_code == 429
    assert other.get("/v1/datasets").status_code == 200  # the same proxy, another client
    # from an untrusted connection the header is the client's own words: not believed
    forged = client_from(limited_app, "203.0.113.99", "forged")
    for n in range(4):
        headers = {"X-Forwarded-For": f"198.51.100.{n}"}  # a fresh counter each, if believed
        assert forged.get("/v1/datasets", headers=headers).status_code == 200
    assert forged.get("/v1/datasets", headers={"X-Forwarded-For": "198.51.100.200"}).status_code == 429


def test_the_loopback_is_not_counted(limited_app: Flask) -> None:
    local = client_from(limited_app, "127.0.0.1", "local")
    for _ in range(10):
        assert local.get("/v1/datasets").status_code == 200


def test_the_limit_is_on_by_default_and_0_turns_it_off(home: Path) -> None:
    from zhiku.core.config import Settings

    assert Settings().rate_limit_per_address > 0
    app = make_app(home, workers=False, rate_limit_per_address=0)
    try:
        api = client_from(app, CLIENT, "a")
        for _ in range(30):
            assert api.get("/v1/datasets").status_code == 200
    finally:
        context_of(app).close()
