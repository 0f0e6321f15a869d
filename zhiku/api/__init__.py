"""The HTTP API: Dify-compatible dataset service endpoints over a knowledge base (Flask).

``create_app`` is imported on first use, so the modules of this package that the command line
reads (plug-in names, shapes) do not load Flask.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zhiku.api.app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from zhiku.api.app import create_app

        return create_app
    raise AttributeError(f"module 'zhiku.api' has no attribute {name!r}")
