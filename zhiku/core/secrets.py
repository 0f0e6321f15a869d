"""A value that must never be printed, logged or written into a config file by accident."""

from __future__ import annotations

import hmac
import os
from typing import NoReturn


class Secret:
    """Holds an API key or password; ``str()``, ``repr()`` and f-strings show ``***``.

    Read the value with :meth:`reveal` only where it is sent (an HTTP header). Pickling is
    refused so a secret does not end up in a file or a queue by accident.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    @classmethod
    def from_env(cls, variable: str) -> Secret | None:
        """The secret in environment variable ``variable``, or None when it is unset or empty."""
        value = os.environ.get(variable)
        return cls(value) if value else None

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    def __str__(self) -> str:
        return "***"

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        return hmac.compare_digest(self._value.encode(), other._value.encode())

    def __hash__(self) -> int:
        return hash((Secret, self._value))

    def __reduce__(self) -> NoReturn:
        raise TypeError("a Secret cannot be pickled")
