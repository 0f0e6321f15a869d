"""Each dataset's stores, opened once per process — and only by a process that may open them.

The embedded stores admit one process: the one holding the data directory's owner lock. Any
number of processes share stores on a server (Qdrant, or PostgreSQL with pgvector).
"""

from __future__ import annotations

import threading

from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.config import Settings
from zhiku.core.db import DatasetRow
from zhiku.core.errors import StoreBusy
from zhiku.knowledge_base.dataset_settings import dataset_row
from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex
from zhiku.knowledge_base.runtime.owner_lock import OwnerLock
from zhiku.knowledge_base.shared_models import SharedModels
from zhiku.providers.embedding import CachedEmbedding


class OpenedIndexes:
    """The opened :class:`DatasetIndex` of each dataset, guarded by the knowledge base's ``lock``."""

    def __init__(
        self,
        settings: Settings,
        sessions: sessionmaker[Session],
        models: SharedModels,
        owner: OwnerLock,
        lock: threading.Lock,
    ) -> None:
        self._settings = settings
        self._sessions = sessions
        self._models = models
        self._owner = owner
        self._lock = lock
        self._indexes: dict[str, DatasetIndex] = {}

    @property
    def owns_stores(self) -> bool:
        """Whether this process may open the stores: it holds the data directory's owner lock,
        or the stores are on a server (Qdrant, or PostgreSQL with pgvector), which any number of
        processes share."""
        return self._owner.held or not self._settings.embedded_stores

    def dataset_embedding(self, dataset_id: str) -> CachedEmbedding:
        """The dataset's embedding model (shared with its index), opened without its stores."""
        row = self._dataset_row(dataset_id)
        return self._models.embedding(row.embedding_model, row.embedding_options or {})

    def dataset_index(self, dataset_id: str, *, deleting: bool = False) -> DatasetIndex:
        """The dataset's opened stores (opened once). In a process that does not own the embedded
        stores, when the dataset's are embedded: :class:`StoreBusy` — raised before any store file
        is touched (a dataset moved by ``zhiku stores migrate`` has backends of its own).
        ``deleting``: also of a dataset being deleted (to drop its stores)."""
        with self._lock:
            index = self._indexes.get(dataset_id)
        if index is not None:
            return index
        row = self._dataset_row(dataset_id, deleting)
        self.check_may_open(row.store_backends or {})
        with self._lock:
            index = self._indexes.get(dataset_id)
            if index is None:
                embedding = self._models.embedding_held(row.embedding_model, row.embedding_options or {})
                index = DatasetIndex(self._settings, self._sessions, row, embedding=embedding)
                self._indexes[dataset_id] = index
                # what a crash left: points without rows, edits between points and rows
                index.sweep_orphans()
                index.repair_pending()
            return index

    def check_may_open(self, backends: dict[str, str]) -> None:
        """:class:`StoreBusy` unless this process may open stores of these backends (a dataset's
        ``store_backends``): they are on a server, or it owns the embedded ones."""
        if self._settings.with_backends(backends).embedded_stores and not self._owner.held:
            raise StoreBusy(
                f"{self._settings.home} is in use by another zhiku process (a running `zhiku serve`?): "
                "its embedded stores admit one process; stop that process, or send the request "
                "through its HTTP API"
            )

    def forget(self, dataset_id: str) -> None:
        """Stop keeping the dataset's index (its dataset is being deleted)."""
        with self._lock:
            self._indexes.pop(dataset_id, None)

    def close_held(self) -> None:
        """Close every opened index (the caller holds the lock)."""
        for index in self._indexes.values():
            index.close()
        self._indexes.clear()

    def _dataset_row(self, dataset_id: str, deleting: bool = False) -> DatasetRow:
        with self._sessions() as session:
            return dataset_row(session, dataset_id, deleting=deleting)
