"""Secret: the value is reachable only through reveal()."""

from __future__ import annotations

import pickle

import pytest

from zhiku.core.secrets import Secret


def test_secret_never_prints_its_value() -> None:
    secret = Secret("sk-live-123")
    assert secret.reveal() == "sk-live-123"
    for shown in (str(secret), repr(secret), f"{secret}", f"{secret!r}", str([secret])):
        assert "sk-live" not in shown
    assert str(secret) == "***"
    assert secret == Secret("sk-live-123") and secret != Secret("other")
    assert not Secret("")


def test_secret_refuses_pickling() -> None:
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(Secret("sk-live-123"))


def test_secret_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZHIKU_TEST_KEY", "abc")
    monkeypatch.setenv("ZHIKU_EMPTY_KEY", "")
    key = Secret.from_env("ZHIKU_TEST_KEY")
    assert key is not None and key.reveal() == "abc"
    assert Secret.from_env("ZHIKU_EMPTY_KEY") is None
    assert Secret.from_env("ZHIKU_SURELY_UNSET_KEY") is None
