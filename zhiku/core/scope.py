"""DocumentScope: which documents a search may return, applied inside every channel's search.

A metadata filter (or a caller restricting a search to some documents) becomes a scope, and each
channel applies it in its own store before taking its top ``limit`` — a Qdrant payload filter on
``document_id``, SQL in the keyword store — so a narrow filter still fills ``top_k``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DocumentScope:
    """Only the documents in ``ids`` or, with ``exclude``, every document but those.

    Whichever list is shorter is kept (see :mod:`zhiku.knowledge_base.metadata`), so the filter a
    store evaluates stays small whether a scope keeps 1% or 99% of a dataset.
    """

    ids: frozenset[str]
    exclude: bool = False

    @property
    def empty(self) -> bool:
        """True when nothing can match: no search needs to run."""
        return not self.exclude and not self.ids

    def admits(self, document_id: str) -> bool:
        return (document_id in self.ids) != self.exclude

    def intersect(self, other: DocumentScope) -> DocumentScope:
        """The documents both scopes admit (two filters that must both pass)."""
        if self.exclude and other.exclude:
            return DocumentScope(self.ids | other.ids, exclude=True)
        if self.exclude:
            return DocumentScope(other.ids - self.ids)
        if other.exclude:
            return DocumentScope(self.ids - other.ids)
        return DocumentScope(self.ids & other.ids)
