"""Secret: the value is reachable only through reveal()."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from zhiku.core.config import Settings
from zhiku.core.errors import ConfigError
from zhiku.core.secrets import Secret, SecretBox


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


def test_an_env_var_secret_is_read_when_used_and_saved_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = Secret.from_env_var("ZHIKU_TEST_LATE_KEY")
    with pytest.raises(ConfigError, match="ZHIKU_TEST_LATE_KEY"):
        secret.reveal()
    monkeypatch.setenv("ZHIKU_TEST_LATE_KEY", "late")
    assert secret.reveal() == "late" and secret.to_dict() == {"env": "ZHIKU_TEST_LATE_KEY"}
    with pytest.raises(TypeError, match="cannot be serialised"):
        Secret.from_token("sk-live-123").to_dict()


def test_settings_take_a_token_or_a_variable_and_never_dump_a_token(tmp_path: Path) -> None:
    by_name = Settings(home=tmp_path, llm_api_key={"env": "DEEPSEEK_API_KEY"})
    assert by_name.model_dump()["llm_api_key"] == {"env": "DEEPSEEK_API_KEY"}
    token = Settings(home=tmp_path, llm_api_key="sk-live-123")
    assert token.llm_api_key is not None and token.llm_api_key.reveal() == "sk-live-123"
    assert "sk-live" not in repr(token)
    with pytest.raises(Exception, match="cannot be serialised"):
        token.model_dump()


def test_a_box_seals_tokens_with_the_data_directory_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ZHIKU_SECRET_KEY", raising=False)
    box = SecretBox(tmp_path)
    sealed = box.seal(Secret.from_token("sk-live-123"))
    assert set(sealed) == {"encrypted"} and "sk-live" not in sealed["encrypted"]
    assert (tmp_path / "secret.key").stat().st_mode & 0o777 == 0o600
    assert SecretBox(tmp_path).open(sealed).reveal() == "sk-live-123"  # a new process, the same key file
    assert box.seal(Secret.from_env_var("X_KEY")) == {"env": "X_KEY"}
    monkeypatch.setenv("ZHIKU_SECRET_KEY", Fernet.generate_key().decode())
    with pytest.raises(ConfigError, match="cannot be decrypted"):
        SecretBox(tmp_path).open(sealed)  # another key: refused, not garbage
