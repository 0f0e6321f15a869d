"""The HTTP API: Dify-compatible dataset service endpoints over a knowledge base (Flask)."""

from zhiku.api.app import create_app

__all__ = ["create_app"]
