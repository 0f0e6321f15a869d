"""A document's lifecycle: its statuses and the transitions allowed between them, written once.

```
waiting → parsing → cleaning → splitting → indexing → completed | completed_with_errors | error
   ↑          └──────────┴──────────┴──────────┴─→ paused (any stage) → waiting (resume)
   └── completed, completed_with_errors, error: queued again (re-index, retry)
```

Segment rows are written only by the transaction that completes a version, so a document that
has rows while it is in progress or paused is being re-indexed and its previous version stays
served until the new one replaces it. A document whose re-index fails goes back to the status
of the version it still serves (``completed`` or ``completed_with_errors``) with the reason in
``error``; ``error`` itself is never served. Every write of ``documents.status`` goes through
:mod:`zhiku.knowledge_base.indexing.document_states`, which refuses a transition this table does not hold.
"""

from __future__ import annotations

from enum import StrEnum


class DocumentStatus(StrEnum):
    WAITING = "waiting"
    PARSING = "parsing"
    CLEANING = "cleaning"
    SPLITTING = "splitting"
    INDEXING = "indexing"
    PAUSED = "paused"
    COMPLETED = "completed"
    #: served, but some chunks could not be indexed (a Q&A model call failed); they are listed in
    #: the document's ``failed_chunks`` and ``retry`` redoes only them
    COMPLETED_WITH_ERRORS = "completed_with_errors"
    ERROR = "error"


S = DocumentStatus

#: A worker (or a synchronous ingest) is running the document.
IN_PROGRESS: frozenset[DocumentStatus] = frozenset({S.PARSING, S.CLEANING, S.SPLITTING, S.INDEXING})
#: A version was completed: its segment rows are served (with ``enabled``).
FINISHED: frozenset[DocumentStatus] = frozenset({S.COMPLETED, S.COMPLETED_WITH_ERRORS})
#: Statuses whose segment rows, where there are any, are served: rows exist only for a completed
#: version, so in progress or paused means "being re-indexed, previous version served".
SERVED: frozenset[DocumentStatus] = frozenset(S) - {S.ERROR}
UNSERVED: frozenset[DocumentStatus] = frozenset(S) - SERVED
#: Statuses a new run of the document may start from (queued again, retried, re-indexed).
RESTARTABLE: frozenset[DocumentStatus] = FINISHED | {S.ERROR}

_ANY_STAGE = IN_PROGRESS | {S.WAITING}

#: target status → the statuses it may be reached from.
TRANSITIONS: dict[DocumentStatus, frozenset[DocumentStatus]] = {
    S.WAITING: RESTARTABLE | {S.PAUSED} | IN_PROGRESS,  # queued (again); recovery after a crash
    S.PARSING: frozenset({S.WAITING}),
    S.CLEANING: frozenset({S.PARSING}),
    S.SPLITTING: frozenset({S.CLEANING}),
    # also straight from a finished or failed state: pre-made chunks, Q&A pairs, chunk retries
    S.INDEXING: frozenset({S.SPLITTING, S.WAITING}) | RESTARTABLE,
    S.PAUSED: _ANY_STAGE,
    # from an earlier stage or ``waiting`` only to restore the version still served after a
    # failed or interrupted re-index
    S.COMPLETED: IN_PROGRESS | {S.WAITING},
    S.COMPLETED_WITH_ERRORS: IN_PROGRESS | {S.WAITING},
    S.ERROR: _ANY_STAGE,  # a paused document stays paused until resumed or deleted
}


def sources(target: DocumentStatus) -> frozenset[DocumentStatus]:
    """The statuses ``target`` may be reached from."""
    return TRANSITIONS[target]


def allowed(current: str, target: DocumentStatus) -> bool:
    return current in TRANSITIONS[target]
