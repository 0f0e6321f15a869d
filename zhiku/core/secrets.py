"""Secrets: one type for every API key, and how they are stored without plain text.

A :class:`Secret` is either a reference to an environment variable (read when it is used, saved
as ``{"env": "NAME"}``) or a value given directly (a token), which refuses to be serialised —
Haystack's ``Secret.from_env_var`` / ``Secret.from_token`` pattern. Where a token must be kept
(a dataset's own chat model key), a :class:`SecretBox` stores it encrypted (Fernet: AES-128-CBC
with an HMAC) under a key from ``ZHIKU_SECRET_KEY`` or ``<home>/secret.key`` (created 0600);
the database then holds ``{"encrypted": "..."}``, never the key itself.
"""

from __future__ import annotations

import hmac
import os
from pathlib import Path
from typing import Any, NoReturn

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

from zhiku.core.errors import ConfigError

SECRET_KEY_VARIABLE = "ZHIKU_SECRET_KEY"
SECRET_KEY_FILE = "secret.key"


class Secret:
    """An API key or password; ``str()``, ``repr()`` and f-strings show ``***``.

    Read the value with :meth:`reveal` only where it is sent (an HTTP header). Pickling is
    refused, and so is serialising a token (:meth:`to_dict`), so a secret does not end up in a
    file, a log or a queue by accident.
    """

    __slots__ = ("_value", "_env")

    def __init__(self, value: str = "", *, env: str | None = None) -> None:
        self._value = value
        self._env = env

    @classmethod
    def from_token(cls, value: str) -> Secret:
        return cls(value)

    @classmethod
    def from_env_var(cls, variable: str) -> Secret:
        """A reference to ``variable``, read each time the secret is used."""
        if not variable or not variable.strip():
            raise ConfigError("a secret's environment variable needs a name")
        return cls(env=variable.strip())

    @classmethod
    def from_env(cls, variable: str) -> Secret | None:
        """The secret in environment variable ``variable``, or None when it is unset or empty."""
        value = os.environ.get(variable)
        return cls(value) if value else None

    @property
    def env_var(self) -> str | None:
        return self._env

    def reveal(self) -> str:
        if self._env is not None:
            value = os.environ.get(self._env)
            if not value:
                raise ConfigError(f"environment variable {self._env} (a secret) is not set")
            return value
        return self._value

    def to_dict(self) -> dict[str, str]:
        """``{"env": NAME}``; a token refuses (store it in a :class:`SecretBox` instead)."""
        if self._env is None:
            raise TypeError("a secret given as a value cannot be serialised; use an environment variable")
        return {"env": self._env}

    def __repr__(self) -> str:
        return f"Secret(env={self._env!r})" if self._env else "Secret('***')"

    def __str__(self) -> str:
        return "***"

    def __bool__(self) -> bool:
        return bool(self._env or self._value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        if self._env is not None or other._env is not None:
            return self._env == other._env
        return hmac.compare_digest(self._value.encode(), other._value.encode())

    def __hash__(self) -> int:
        return hash((Secret, self._env, self._value))

    def __reduce__(self) -> NoReturn:
        raise TypeError("a Secret cannot be pickled")

    @classmethod
    def __get_pydantic_core_schema__(
        cls, _source: Any, _handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        """Settings accept a string (a token) or ``{"env": NAME}``; they dump as ``{"env": NAME}``
        and refuse to dump a token."""
        return core_schema.no_info_plain_validator_function(
            as_secret,
            serialization=core_schema.plain_serializer_function_ser_schema(lambda secret: secret.to_dict()),
        )


def as_secret(value: object) -> Secret:
    """A Secret from a Secret, a token string or ``{"env": NAME}``."""
    if isinstance(value, Secret):
        return value
    if isinstance(value, str):
        return Secret.from_token(value)
    if isinstance(value, dict) and set(value) == {"env"} and isinstance(value["env"], str):
        return Secret.from_env_var(value["env"])
    raise ConfigError('a secret is a string or {"env": "VARIABLE_NAME"}')


class SecretBox:
    """Encrypts tokens that must be stored (``{"encrypted": ...}``) and opens them again.

    The key comes from ``ZHIKU_SECRET_KEY`` (a Fernet key) or ``<home>/secret.key``, made on first
    use with mode 0600. A database copied without its key file cannot be read for keys: set the
    same ``ZHIKU_SECRET_KEY`` on every server that shares a database.
    """

    def __init__(self, home: Path) -> None:
        self._home = home
        self._fernet: Any = None

    def seal(self, secret: Secret) -> dict[str, str]:
        """What to store for ``secret``: its environment variable's name, or its value encrypted."""
        if secret.env_var is not None:
            return secret.to_dict()
        return {"encrypted": self._cipher().encrypt(secret.reveal().encode("utf-8")).decode("ascii")}

    def open(self, stored: object) -> Secret:
        """The Secret a stored value stands for (a plain string, from before sealing, is taken as is)."""
        if isinstance(stored, dict) and set(stored) == {"encrypted"}:
            from cryptography.fernet import InvalidToken

            try:
                return Secret.from_token(self._cipher().decrypt(str(stored["encrypted"]).encode()).decode())
            except InvalidToken as exc:
                raise ConfigError(
                    f"a stored key cannot be decrypted: {SECRET_KEY_VARIABLE} or {SECRET_KEY_FILE} changed"
                ) from exc
        return as_secret(stored)

    def _cipher(self) -> Any:
        if self._fernet is None:
            from cryptography.fernet import Fernet

            self._fernet = Fernet(self._key())
        return self._fernet

    def _key(self) -> bytes:
        configured = os.environ.get(SECRET_KEY_VARIABLE)
        if configured:
            return configured.encode("ascii")
        path = self._home / SECRET_KEY_FILE
        if not path.exists():
            from cryptography.fernet import Fernet

            # written whole to a private temp file, then linked into place: a second process
            # racing us either links first (we read its key) or finds the file complete
            temp = self._home / f".{SECRET_KEY_FILE}.{os.getpid()}"
            descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(Fernet.generate_key())
            try:
                os.link(temp, path)
            except FileExistsError:
                pass
            finally:
                temp.unlink()
        return path.read_bytes().strip()
