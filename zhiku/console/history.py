"""Recent hit-testing queries per console session, in this process's memory.

Bounded twice: at most :data:`PER_SESSION` queries a session, at most :data:`SESSIONS` sessions
(the least recently used is forgotten first). A restart forgets them; they are a convenience.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from dataclasses import dataclass

PER_SESSION = 20
SESSIONS = 1000
MAX_QUERY_CHARS = 500


@dataclass(frozen=True)
class PastQuery:
    dataset_id: str
    query: str
    hits: int


class QueryHistory:
    def __init__(self, per_session: int = PER_SESSION, sessions: int = SESSIONS) -> None:
        self._per_session = per_session
        self._sessions = sessions
        self._queries: OrderedDict[str, deque[PastQuery]] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, session_id: str, item: PastQuery) -> None:
        item = PastQuery(item.dataset_id, item.query[:MAX_QUERY_CHARS], item.hits)
        with self._lock:
            queries = self._queries.pop(session_id, None) or deque(maxlen=self._per_session)
            if item in queries:
                queries.remove(item)
            queries.appendleft(item)
            self._queries[session_id] = queries
            while len(self._queries) > self._sessions:
                self._queries.popitem(last=False)

    def recent(self, session_id: str, dataset_id: str) -> list[PastQuery]:
        """This session's queries on this dataset, newest first."""
        with self._lock:
            queries = list(self._queries.get(session_id, ()))
        return [item for item in queries if item.dataset_id == dataset_id]
