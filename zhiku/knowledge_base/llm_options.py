"""A dataset's own model options (its chat model's, its embedding model's), stored with their
``api_key`` sealed (see :mod:`zhiku.core.secrets`): never in plain text in the database."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zhiku.core.secrets import SecretBox, as_secret

KEY = "api_key"


def seal(box: SecretBox, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """Options as they are stored: ``api_key`` (a string, a Secret or ``{"env": NAME}``) becomes
    ``{"env": NAME}`` or ``{"encrypted": ...}``, never the key in plain text."""
    stored = dict(options or {})
    if stored.get(KEY) is not None and not is_sealed(stored[KEY]):
        stored[KEY] = box.seal(as_secret(stored[KEY]))
    return stored


def unseal(box: SecretBox, stored: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Options for the model, the key as a Secret again (None when there are none)."""
    if not stored:
        return None
    options = dict(stored)
    if options.get(KEY) is not None:
        options[KEY] = box.open(options[KEY])
    return options


def is_sealed(value: object) -> bool:
    return isinstance(value, dict) and set(value) in ({"env"}, {"encrypted"})
