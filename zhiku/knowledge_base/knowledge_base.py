"""KnowledgeBase: the public facade — settings, database, stores and models, shared by datasets.

It opens the database and takes the owner lock (then makes the owner's repairs, see
:mod:`.owner_repairs`), and hands each call to the part whose job it is:
the shared models (:mod:`.shared_models`), each dataset's opened stores (:mod:`.opened_indexes`),
datasets made and deleted (:mod:`.dataset_lifecycle`), retrieval across datasets
(:mod:`.cross_retrieval`) and answers (:mod:`.answer_loop`). A method that is a collaborator's
own is declared :class:`Delegated`.

>>> kb = KnowledgeBase.open("/tmp/kb")                                  # doctest: +SKIP
>>> ds = kb.create_dataset("handbook", description="Company handbook")  # doctest: +SKIP
>>> ds.add_file("handbook.pdf")                                         # doctest: +SKIP
>>> ds.search("年假有几天？")                                             # doctest: +SKIP
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from zhiku.answers.memory import ConversationStore
from zhiku.core.config import Settings
from zhiku.core.db import make_engine, make_session_factory
from zhiku.core.delegation import Delegated
from zhiku.core.private import private_directory, private_file
from zhiku.core.secrets import SecretBox
from zhiku.datasource.stores import check_backends
from zhiku.knowledge_base.answer_loop import AnswerLoop
from zhiku.knowledge_base.answering import token_counter
from zhiku.knowledge_base.context import DatasetContext
from zhiku.knowledge_base.cross_retrieval import CrossDatasetRetrieval
from zhiku.knowledge_base.dataset_lifecycle import DatasetLifecycle
from zhiku.knowledge_base.indexing.document_states import DocumentStates
from zhiku.knowledge_base.metadata_points import MetadataPointSync, datasets_with_pending
from zhiku.knowledge_base.opened_indexes import OpenedIndexes
from zhiku.knowledge_base.owner_repairs import recover_interrupted, seal_stored_keys
from zhiku.knowledge_base.runtime.db_locks import ServerPresence
from zhiku.knowledge_base.runtime.owner_lock import OwnerLock
from zhiku.knowledge_base.shared_models import SharedModels
from zhiku.knowledge_base.store_moves import StoreMoves
from zhiku.text.tokenizer import keep_lexicon_in


class KnowledgeBase:
    """A data directory (or database URL + Qdrant URL) holding any number of datasets."""

    def __init__(self, settings: Settings, *, worker: bool = False) -> None:
        """``worker=True``: a Celery worker's knowledge base — it never takes the data directory's
        owner lock (a worker started first must not keep ``zhiku serve`` from owning the stores),
        so it opens the stores only on a Qdrant server and recovers nothing."""
        check_backends(settings)  # an unknown store backend fails here, not at the first dataset
        self.settings = settings
        private_directory(settings.home)
        if settings.database_url is None:  # the embedded SQLite file, made private before SQLite opens it
            private_file(settings.home / "zhiku.db")
        # taken before anything else: no store file is opened by a process that does not own it
        self._owner = OwnerLock(settings.home, take=not worker)
        # a built jieba dictionary kept beside the data: a later process tokenizes Chinese at once
        keep_lexicon_in(settings.home / "cache")
        #: documents recovery put back to ``waiting`` (a Celery queue sends them tasks)
        self.recovered: list[str] = []
        self._engine = make_engine(settings.resolved_database_url)
        self._sessions: sessionmaker[Session] = make_session_factory(self._engine)
        # one lock guards the opened indexes, embeddings, retrieval service and answer loop
        self._lock = threading.Lock()
        self._secrets = SecretBox(settings.home)
        self._models = SharedModels(settings, self._sessions, self._lock, self._secrets)
        self._indexes = OpenedIndexes(settings, self._sessions, self._models, self._owner, self._lock)
        self._metadata_points = MetadataPointSync(self._indexes.dataset_index)
        conversations = ConversationStore(self._sessions, token_counter())
        self._states = DocumentStates(self._sessions)
        self._context = DatasetContext(
            settings=settings,
            sessions=self._sessions,
            states=self._states,
            secrets=self._secrets,
            index=self._indexes.dataset_index,
            embedding=self._indexes.dataset_embedding,
            chat_model=self._models.chat_model,
            rerank_model=self._models.rerank_model,
            metadata_changed=lambda dataset_id: self._metadata_points.apply([dataset_id]),
        )
        self._datasets = DatasetLifecycle(self._context, self._indexes)
        self._stores = StoreMoves(settings, self._sessions, self._indexes)
        self._retrieval = CrossDatasetRetrieval(
            settings, self._sessions, self._models, self._datasets, self._lock
        )
        self._answers = AnswerLoop(
            settings, self._models, self._datasets, lambda: self.retrieve, conversations, self._lock
        )
        # on PostgreSQL, other processes (on other machines) may be indexing documents in their
        # own threads: recover only when none is connected (see ``db_locks``)
        self._presence = ServerPresence(self._engine) if self._owner.held else None
        if self._presence is not None:
            try:
                if self._presence.alone:
                    self._recover_interrupted()
            finally:
                self._presence.recovered()
            seal_stored_keys(self._sessions, self._secrets)
            self._datasets.finish_deletions()
            self.sync_metadata_points()

    @classmethod
    def open(cls, home: str | Path | None = None, **settings: Any) -> KnowledgeBase:
        """Open (creating if needed) the knowledge base in ``home``.

        ``home`` defaults to ``ZHIKU_HOME`` or ``~/.zhiku``; ``settings`` override ``zhiku.toml``.
        """
        return cls(Settings.load(home, **settings))

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._datasets.stop_deletions()
        self._metadata_points.stop()
        with self._lock:
            self._indexes.close_held()
            self._retrieval.close_held()
            self._models.close_held()
        if self._presence is not None:
            self._presence.release()
        self._engine.dispose()
        self._owner.release()

    def sync_metadata_points(self) -> None:
        """Write into the store points, in the background, the metadata values they are behind
        on: marks left by another process or by an upgrade (see ``metadata_points``)."""
        self._metadata_points.apply(datasets_with_pending(self._sessions))

    def wait_for_metadata_points(self, timeout: float | None = None) -> bool:
        """Wait until the store points hold the metadata values changed so far in this process
        (True), or ``timeout`` seconds; filters are right meanwhile, only slower."""
        return self._metadata_points.wait(timeout)

    def _recover_interrupted(self) -> None:
        """Documents a crash caught mid-ingest: see :func:`.owner_repairs.recover_interrupted`."""
        recover_interrupted(self.settings, self._sessions, self._states, self.recovered)

    # -- datasets ------------------------------------------------------------------------------

    create_dataset = Delegated("_datasets", DatasetLifecycle.create_dataset)
    dataset = Delegated("_datasets", DatasetLifecycle.dataset)
    dataset_with_settings = Delegated("_datasets", DatasetLifecycle.dataset_with_settings)
    datasets = Delegated("_datasets", DatasetLifecycle.datasets)
    delete_dataset = Delegated("_datasets", DatasetLifecycle.delete_dataset)
    wait_for_deletions = Delegated("_datasets", DatasetLifecycle.wait_for_deletions)
    store_backends = Delegated("_stores", StoreMoves.backends)
    move_stores = Delegated("_stores", StoreMoves.move)

    # -- retrieval across datasets ---------------------------------------------------------------

    retrieve = Delegated("_retrieval", CrossDatasetRetrieval.retrieve)
    search = Delegated("_retrieval", CrossDatasetRetrieval.search)
    routed_retrieval = Delegated("_retrieval", CrossDatasetRetrieval.routed_retrieval)

    # -- answers -------------------------------------------------------------------------------

    ask = Delegated("_answers", AnswerLoop.ask)

    @property
    def conversations(self) -> ConversationStore:
        """Stored conversations: list, read, rename, delete."""
        return self._answers.conversations

    # -- stores and models shared by datasets --------------------------------------------------

    chat_model = Delegated("_models", SharedModels.chat_model)
    rerank_model = Delegated("_models", SharedModels.rerank_model)
    embedding = Delegated("_models", SharedModels.embedding)
    dataset_embedding = Delegated("_indexes", OpenedIndexes.dataset_embedding)
    dataset_index = Delegated("_indexes", OpenedIndexes.dataset_index)

    @property
    def owns_stores(self) -> bool:
        """Whether this process may open the stores: it holds the data directory's owner lock,
        or the stores are on a server (which any number of processes share)."""
        return self._indexes.owns_stores

    @property
    def sessions(self) -> sessionmaker[Session]:
        return self._sessions

    @property
    def states(self) -> DocumentStates:
        return self._states
