"""The console's pages, one module per area; importing them adds their routes to the blueprint."""

from zhiku.console.views import (
    account,
    api_access,
    chat,
    datasets,
    document,
    documents,
    hit_testing,
    preview,
    segments,
)

__all__ = [
    "account",
    "api_access",
    "chat",
    "datasets",
    "document",
    "documents",
    "hit_testing",
    "preview",
    "segments",
]
