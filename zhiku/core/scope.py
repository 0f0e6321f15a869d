"""DocumentScope: which documents (and section) a search may return, applied inside every channel.

A metadata filter (or a caller restricting a search to some documents or to a section) becomes a
scope, and each channel applies it in its own store before taking its top ``limit`` — a Qdrant
payload filter on ``document_id`` and ``sections``, SQL in the keyword store — so a narrow filter
still fills ``top_k``.
"""

from __future__ import annotations

from dataclasses import dataclass

from zhiku.core.payload_filter import PayloadFilter
from zhiku.core.sections import narrower, within


@dataclass(frozen=True)
class DocumentScope:
    """Only the documents in ``ids`` or, with ``exclude``, every document but those.

    Whichever list is shorter is kept (see :mod:`zhiku.knowledge_base.metadata`), so the filter a
    store evaluates stays small whether a scope keeps 1% or 99% of a dataset. ``section``, when
    set, also keeps only segments in that section or one under it (see :mod:`zhiku.core.sections`).

    ``payload_filter``, when set, admits the same documents by the metadata values in the store
    points' payload (:mod:`zhiku.core.payload_filter`): a store that can test them does so
    instead of testing ``document_id`` against the list.
    """

    ids: frozenset[str]
    exclude: bool = False
    section: str | None = None
    payload_filter: PayloadFilter | None = None

    @classmethod
    def of_section(cls, section: str) -> DocumentScope:
        """Every document, only the segments in ``section`` (and the sections under it)."""
        return cls(frozenset(), exclude=True, section=section)

    @property
    def empty(self) -> bool:
        """True when nothing can match: no search needs to run."""
        return not self.exclude and not self.ids

    @property
    def all_documents(self) -> bool:
        """True when no document is left out (a store need not test ``document_id``)."""
        return self.exclude and not self.ids

    def admits(self, document_id: str, section: str | None = None) -> bool:
        """Whether a segment of ``document_id`` in ``section`` is in the scope."""
        if self.section is not None and not within(section, self.section):
            return False
        return (document_id in self.ids) != self.exclude

    def intersect(self, other: DocumentScope) -> DocumentScope:
        """The documents both scopes admit (two filters that must both pass). A payload filter
        is kept only beside a scope of every document (a section): the list says the rest."""
        section = self.section or other.section
        if self.section and other.section:
            section = narrower(self.section, other.section)
            if section is None:  # two unrelated sections: nothing is in both
                return DocumentScope(frozenset())
        if self.all_documents or other.all_documents:
            kept = other if self.all_documents else self
            return DocumentScope(kept.ids, kept.exclude, section, kept.payload_filter)
        if self.exclude and other.exclude:
            return DocumentScope(self.ids | other.ids, exclude=True, section=section)
        if self.exclude:
            return DocumentScope(other.ids - self.ids, section=section)
        if other.exclude:
            return DocumentScope(self.ids - other.ids, section=section)
        return DocumentScope(self.ids & other.ids, section=section)

    def union(self, other: DocumentScope) -> DocumentScope:
        """The documents either scope admits (two filters of which one must pass); sections are
        not joined, so it is for scopes without one."""
        if self.section is not None or other.section is not None:
            raise ValueError("the union of scopes limited to sections is not a scope")
        if self.exclude and other.exclude:
            return DocumentScope(self.ids & other.ids, exclude=True)
        if self.exclude:
            return DocumentScope(self.ids - other.ids, exclude=True)
        if other.exclude:
            return DocumentScope(other.ids - self.ids, exclude=True)
        return DocumentScope(self.ids | other.ids)
