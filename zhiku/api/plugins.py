"""Plugin names a request may use: the registered plugins and the installed entry points, and
models the operator configured by name (rerank models, tokenizers).

The registries themselves only resolve registered names and installed entry points (never an
importable path, which would let a caller with a key run any function of the server); checking
here as well turns an unknown name into a 400 naming the allowed values, before anything is stored.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from zhiku.core.registry import Registry


def plugin_names(registry: Registry[Any]) -> list[str]:
    """The names ``registry`` resolves now (a package installed while serving included)."""
    return registry.available()


def require_plugin(registry: Registry[Any], name: str, what: str) -> str:
    """``name`` if it is an installed plugin; ValueError naming the installed ones otherwise."""
    known = plugin_names(registry)
    if name not in known:
        raise ValueError(f"unknown {what} {name!r}; installed: {', '.join(known)}")
    return name


def require_choice(name: str, configured: Collection[str], what: str, setting: str, field: str = "") -> str:
    """``name`` if the operator configured it (setting ``setting``); ValueError naming the
    configured names otherwise. A path or a URL is never a choice: only the operator names those."""
    if name not in configured:
        known = ", ".join(sorted(configured)) or f"none (the server sets them: {setting})"
        where = f"{field}: " if field else ""
        raise ValueError(f"{where}unknown {what} {name[:80]!r}; configured: {known}")
    return name
