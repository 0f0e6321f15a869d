"""The console's pages, one module per area; importing them adds their routes to the blueprint."""

from zhiku.console.views import account, chat, datasets, document, documents, hit_testing, preview, segments

__all__ = ["account", "chat", "datasets", "document", "documents", "hit_testing", "preview", "segments"]
