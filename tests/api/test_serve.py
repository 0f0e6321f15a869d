"""``zhiku serve``'s waitress server is built from the settings: connections, idle timeout, threads.

110 idle connections once stopped the server for everyone (waitress's limit was its default
100, and each byte a connection sends renews its timeout); the limits are settings now, with
safer defaults, and these tests read them back from the server waitress creates.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from flask import Flask

from tests.api.conftest import context_of, make_app
from zhiku.api import serve as serve_module
from zhiku.api.serve import create_server
from zhiku.cli import main
from zhiku.core.config import Settings


@pytest.fixture
def app(home: Path) -> Iterator[Flask]:
    application = make_app(home, workers=False)
    yield application
    context_of(application).close()


def test_the_defaults_outlast_idle_connections(app: Flask) -> None:
    settings = Settings()
    server = create_server(app, settings, host="127.0.0.1", port=0)
    try:
        adjustments = server.adj
        assert adjustments.connection_limit == settings.api_connection_limit > 100  # waitress: 100
        assert adjustments.channel_timeout == settings.api_channel_timeout < 120  # waitress: 120
        assert adjustments.cleanup_interval <= adjustments.channel_timeout
        assert adjustments.threads == settings.api_threads
        assert adjustments.ident == "zhiku"
    finally:
        server.close()


def test_the_settings_reach_waitress(app: Flask, home: Path) -> None:
    settings = Settings.load(home, api_connection_limit=321, api_channel_timeout=7, api_threads=3)
    server = create_server(app, settings, host="127.0.0.1", port=0)
    try:
        assert (server.adj.connection_limit, server.adj.channel_timeout, server.adj.threads) == (321, 7, 3)
        assert server.adj.cleanup_interval <= 7
    finally:
        server.close()
    assert create_server(app, settings, host="127.0.0.1", port=0, threads=5).adj.threads == 5


@pytest.mark.parametrize("value", ["0", "-1"])
def test_a_setting_out_of_range_is_refused(home: Path, value: str) -> None:
    with pytest.raises(Exception, match="api_connection_limit"):
        Settings.load(home, api_connection_limit=value)


def test_serve_takes_its_threads_from_the_settings_unless_told(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(
        serve_module, "serve", lambda settings, **kw: calls.append({"settings": settings, **kw})
    )
    monkeypatch.setenv("ZHIKU_API_THREADS", "6")
    runner = CliRunner()
    assert runner.invoke(main, ["--home", str(home), "serve"]).exit_code == 0
    assert runner.invoke(main, ["--home", str(home), "serve", "--threads", "2"]).exit_code == 0
    assert [call["threads"] for call in calls] == [None, 2]
    assert calls[0]["settings"].api_threads == 6
