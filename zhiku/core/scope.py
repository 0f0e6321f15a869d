"""DocumentScope: which documents (and section) a search may return, applied inside every channel.

A metadata filter (or a caller restricting a search to some documents or to a section) becomes a
scope, and each channel applies it in its own store before taking its top ``limit`` — a Qdrant
payload filter on ``document_id`` and ``sections``, SQL in the keyword store — so a narrow filter
still fills ``top_k``.

A scope whose filter the Qdrant stores test in their points' payload reads its list of documents
only when a store that cannot (PostgreSQL, the keyword postings) first asks for it: a hybrid search
on the embedded stores never does, and the list of a tenth of a million segments' documents cost
it about a millisecond of SQL.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from zhiku.core.payload_filter import PayloadFilter
from zhiku.core.sections import narrower, within


class _DocumentList:
    """A scope's documents and whether they are the ones it leaves out: given, or read once by
    ``read`` when first asked for (by whichever thread asks first)."""

    __slots__ = ("_listed", "_read", "_lock")

    def __init__(
        self,
        listed: tuple[frozenset[str], bool] | None,
        read: Callable[[], DocumentScope] | None = None,
    ) -> None:
        self._listed = listed
        self._read = read
        self._lock = threading.Lock() if listed is None else None

    @property
    def at_hand(self) -> bool:
        return self._listed is not None

    def get(self) -> tuple[frozenset[str], bool]:
        listed = self._listed
        if listed is None:
            assert self._lock is not None and self._read is not None
            with self._lock:
                if self._listed is None:
                    scope = self._read()
                    self._listed = (scope.ids, scope.exclude)
                listed = self._listed
        return listed


class DocumentScope:
    """Only the documents in ``ids`` or, with ``exclude``, every document but those.

    Whichever list is shorter is kept (see :mod:`zhiku.knowledge_base.metadata`), so the filter a
    store evaluates stays small whether a scope keeps 1% or 99% of a dataset. ``section``, when
    set, also keeps only segments in that section or one under it (see :mod:`zhiku.core.sections`).

    ``payload_filter``, when set, admits the same documents by the metadata values in the store
    points' payload (:mod:`zhiku.core.payload_filter`): a store that can test them does so
    instead of testing ``document_id`` against the list, and a scope made by :meth:`by_payload`
    reads that list only when asked for it (``listed`` says whether it is at hand).
    """

    __slots__ = ("_documents", "_section", "_payload_filter")

    def __init__(
        self,
        ids: frozenset[str],
        exclude: bool = False,
        section: str | None = None,
        payload_filter: PayloadFilter | None = None,
    ) -> None:
        self._documents = _DocumentList((frozenset(ids), exclude))
        self._section = section
        self._payload_filter = payload_filter

    @classmethod
    def of_section(cls, section: str) -> DocumentScope:
        """Every document, only the segments in ``section`` (and the sections under it)."""
        return cls(frozenset(), exclude=True, section=section)

    @classmethod
    def by_payload(cls, payload_filter: PayloadFilter, read: Callable[[], DocumentScope]) -> DocumentScope:
        """The documents ``payload_filter`` admits; their list is what ``read`` returns, read
        when a store first asks for it."""
        scope = cls(frozenset(), payload_filter=payload_filter)
        scope._documents = _DocumentList(None, read)
        return scope

    @property
    def section(self) -> str | None:
        return self._section

    @property
    def payload_filter(self) -> PayloadFilter | None:
        return self._payload_filter

    @property
    def ids(self) -> frozenset[str]:
        return self._documents.get()[0]

    @property
    def exclude(self) -> bool:
        return self._documents.get()[1]

    @property
    def listed(self) -> bool:
        """Whether the list of documents is at hand (reading ``ids`` or ``exclude`` reads it)."""
        return self._documents.at_hand

    @property
    def empty(self) -> bool:
        """True when nothing can match: no search needs to run. A scope whose list is not read
        yet is not known to be empty (its stores find nothing if it is)."""
        return self.listed and not self.exclude and not self.ids

    @property
    def all_documents(self) -> bool:
        """True when no document is left out (a store need not test ``document_id``)."""
        return self.exclude and not self.ids

    def admits(self, document_id: str, section: str | None = None) -> bool:
        """Whether a segment of ``document_id`` in ``section`` is in the scope."""
        if self.section is not None and not within(section, self.section):
            return False
        return (document_id in self.ids) != self.exclude

    def with_payload_filter(self, payload_filter: PayloadFilter | None) -> DocumentScope:
        """The same documents, tested by ``payload_filter`` (None: by the list alone)."""
        return self._copy(self.section, payload_filter)

    def intersect(self, other: DocumentScope) -> DocumentScope:
        """The documents both scopes admit (two filters that must both pass). A payload filter
        is kept only beside a scope of every document (a section): the list says the rest."""
        section = self.section or other.section
        if self.section and other.section:
            section = narrower(self.section, other.section)
            if section is None:  # two unrelated sections: nothing is in both
                return DocumentScope(frozenset())
        if other._every_document():
            return self._copy(section, self.payload_filter)
        if self._every_document():
            return other._copy(section, other.payload_filter)
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

    def _every_document(self) -> bool:
        """No document left out and no payload test (at most a section): read without a list."""
        return self.payload_filter is None and self.all_documents

    def _copy(self, section: str | None, payload_filter: PayloadFilter | None) -> DocumentScope:
        """This scope's documents (read or not, shared) in ``section``, tested by ``payload_filter``."""
        copy = DocumentScope(frozenset(), section=section, payload_filter=payload_filter)
        copy._documents = self._documents
        return copy

    def _key(self) -> tuple[frozenset[str], bool, str | None, PayloadFilter | None]:
        return self.ids, self.exclude, self.section, self.payload_filter

    def __eq__(self, other: object) -> bool:
        """Same documents, section and payload tests; compares lists, so it reads a scope's
        list if not read yet (a store's search never compares scopes)."""
        return isinstance(other, DocumentScope) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        documents = f"ids={sorted(self.ids)!r}, exclude={self.exclude}" if self.listed else "ids=<not read>"
        return f"DocumentScope({documents}, section={self.section!r}, payload_filter={self.payload_filter!r})"
