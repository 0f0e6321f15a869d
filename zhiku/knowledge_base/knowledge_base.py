"""KnowledgeBase: the public facade — settings, database, stores and models, shared by datasets.

>>> kb = KnowledgeBase.open("/tmp/kb")                                  # doctest: +SKIP
>>> ds = kb.create_dataset("handbook", description="Company handbook")  # doctest: +SKIP
>>> ds.add_file("handbook.pdf")                                         # doctest: +SKIP
>>> ds.search("年假有几天？")                                             # doctest: +SKIP
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import exists, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from zhiku.answers.assistant import AskRequest, Assistant
from zhiku.answers.config import AnswerConfig
from zhiku.answers.memory import ConversationStore, Turn
from zhiku.answers.types import Answer, AnswerEvent
from zhiku.answers.understanding import SectionChoice
from zhiku.core.bounded_cache import BoundedCache
from zhiku.core.config import Settings
from zhiku.core.db import DatasetRow, DocumentRow, make_engine, make_session_factory
from zhiku.core.db.models import DocumentJobRow, PreparedVersionRow
from zhiku.core.document_status import IN_PROGRESS, DocumentStatus
from zhiku.core.documents import Hit
from zhiku.core.errors import AlreadyExists, InvalidInput, NotFound, StoreBusy
from zhiku.core.plugin_context import PluginContext
from zhiku.core.private import private_directory, private_file
from zhiku.core.retrieval_config import RetrievalConfig
from zhiku.core.secrets import SecretBox
from zhiku.datasource.stores import check_backends
from zhiku.knowledge_base import llm_options
from zhiku.knowledge_base.answering import build_assistant, token_counter
from zhiku.knowledge_base.catalog import DatasetSummary, dataset_row_named
from zhiku.knowledge_base.context import DatasetContext
from zhiku.knowledge_base.dataset import Dataset
from zhiku.knowledge_base.dataset_settings import as_process_rule, as_retrieval_config
from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex, open_embedding
from zhiku.knowledge_base.indexing.document_states import DocumentStates
from zhiku.knowledge_base.indexing.pipeline import PipelineSpec
from zhiku.knowledge_base.profiles import DatabaseProfiles
from zhiku.knowledge_base.runtime.db_locks import ServerPresence
from zhiku.knowledge_base.runtime.owner_lock import OwnerLock
from zhiku.knowledge_base.runtime.uploads import open_uploads
from zhiku.providers.embedding import CachedEmbedding
from zhiku.providers.llm import ChatModel
from zhiku.providers.rerank.base import RerankModel
from zhiku.retrieval.routing import RoutedRetrieval
from zhiku.retrieval.types import RetrievalResult, Routing
from zhiku.text.stemming import DEFAULT_STEMMER, STEMMERS
from zhiku.text.tokenizer import DEFAULT_HAN_BIGRAMS, keep_lexicon_in

#: Opened rerank and chat models kept at once (each may hold a connection pool or weights).
MODEL_CACHE_SIZE = 16


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
        self._indexes: dict[str, DatasetIndex] = {}
        self._embeddings: dict[str, CachedEmbedding] = {}
        self._lock = threading.Lock()
        self._retrieval: RoutedRetrieval | None = None
        self._chats: BoundedCache[str, ChatModel] = BoundedCache(MODEL_CACHE_SIZE)
        self._reranks: BoundedCache[str, RerankModel] = BoundedCache(MODEL_CACHE_SIZE)
        self._assistant: Assistant | None = None
        self._conversations = ConversationStore(self._sessions, token_counter())
        self._states = DocumentStates(self._sessions)
        self._secrets = SecretBox(settings.home)
        self._context = DatasetContext(
            settings=settings,
            sessions=self._sessions,
            states=self._states,
            secrets=self._secrets,
            index=self.dataset_index,
            embedding=self.dataset_embedding,
            chat_model=self.chat_model,
            rerank_model=self.rerank_model,
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
            self._seal_stored_keys()

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
        with self._lock:
            for index in self._indexes.values():
                index.close()
            self._indexes.clear()
            if self._retrieval is not None:
                self._retrieval.close()
                self._retrieval = None
            self._chats.clear()
            self._reranks.clear()
        if self._presence is not None:
            self._presence.release()
        self._engine.dispose()
        self._owner.release()

    # -- datasets ------------------------------------------------------------------------------

    def create_dataset(
        self,
        name: str,
        *,
        description: str = "",
        retrieval: RetrievalConfig | dict[str, Any] | None = None,
        process_rule: PipelineSpec | dict[str, Any] | None = None,
        embedding_model: str | None = None,
        embedding_options: dict[str, Any] | None = None,
        user_dict: str | Path | None = None,
        stop_words: Iterable[str] | None = None,
        keyword_count: int | None = None,
        stemmer: str | None = DEFAULT_STEMMER,
        han_bigrams: bool = DEFAULT_HAN_BIGRAMS,
        llm: dict[str, Any] | None = None,
    ) -> Dataset:
        """Create a dataset. The embedding model is fixed at creation (its vectors fill the store).

        ``stemmer`` folds the words outside Chinese text for BM25 and keyword search (``plural``,
        the default; ``english``, Snowball; None: as written); it is fixed with the indexes, as is
        ``han_bigrams`` (BM25 also matches pairs of neighbouring Chinese characters; see
        :meth:`~zhiku.text.tokenizer.Tokenizer.terms`).
        ``llm`` overrides the knowledge base's chat model for this dataset's Q&A indexing
        (keys ``base_url``, ``model``, ``api_key``, ``timeout``, ``max_retries``, ``max_concurrency``).
        """
        if not name or not name.strip():
            raise InvalidInput("a dataset needs a non-empty name")
        config = as_retrieval_config(retrieval)
        rule = as_process_rule(process_rule)
        model_name = embedding_model or self.settings.embedding_model
        options = dict(embedding_options or {})
        dim = open_embedding(model_name, options, self._sessions).dim
        tokenizer_settings: dict[str, Any] = {"keyword_count": keyword_count or self.settings.keyword_count}
        if user_dict:
            tokenizer_settings["user_dict"] = str(Path(user_dict).resolve())
        if stop_words is not None:
            tokenizer_settings["stop_words"] = sorted(set(stop_words))
        if stemmer is not None:
            if stemmer not in STEMMERS:
                raise InvalidInput(f"unknown stemmer {stemmer!r}; use one of {', '.join(STEMMERS)} or None")
            tokenizer_settings["stemmer"] = stemmer
        tokenizer_settings["han_bigrams"] = han_bigrams
        row = DatasetRow(
            name=name.strip(),
            description=description,
            embedding_model=model_name,
            embedding_options=options,
            embedding_dim=dim,
            retrieval_config=config.model_dump(),
            process_rule=rule.model_dump(),
            tokenizer_settings=tokenizer_settings,
            doc_form=rule.doc_form,
            llm_options=llm_options.seal(self._secrets, llm),
        )
        try:
            with self._sessions.begin() as session:
                session.add(row)
        except IntegrityError as exc:
            raise AlreadyExists(f"a dataset named {name!r} already exists") from exc
        return Dataset(self._context, row.id)

    def dataset(self, name_or_id: str) -> Dataset:
        """A dataset by id or by name; :class:`NotFound` otherwise."""
        with self._sessions() as session:
            return Dataset(self._context, dataset_row_named(session, name_or_id).id)

    def dataset_with_settings(self, name_or_id: str) -> tuple[Dataset, DatasetSummary]:
        """:meth:`dataset` and its settings as stored, in one read (what a search request reads)."""
        with self._sessions() as session:
            row = dataset_row_named(session, name_or_id)
            return Dataset(self._context, row.id), DatasetSummary.of(row)

    def datasets(self) -> list[Dataset]:
        with self._sessions() as session:
            ids = session.scalars(select(DatasetRow.id).order_by(DatasetRow.created_at))
            return [Dataset(self._context, dataset_id) for dataset_id in ids]

    def delete_dataset(self, name_or_id: str) -> None:
        """Delete a dataset with its documents, segments and every store's data."""
        dataset = self.dataset(name_or_id)
        index = self.dataset_index(dataset.id)
        with self._lock:
            self._indexes.pop(dataset.id, None)
        index.drop()
        with self._sessions.begin() as session:
            row = session.get(DatasetRow, dataset.id)
            if row is not None:
                session.delete(row)

    # -- retrieval across datasets ---------------------------------------------------------------

    def retrieve(
        self,
        query: str,
        *,
        datasets: Sequence[str] | None = None,
        routing: Routing = "multiple",
        router: str = "embedding",
        top_k: int | None = None,
        score_threshold: float | None = None,
        merge: str = "relevance",
        semantic_query: str | None = None,
        section: str | None = None,
    ) -> RetrievalResult:
        """Ask several datasets (names or ids; default: all) one question; ``section`` keeps each
        dataset's search to that section (a heading path) and the sections under it.

        ``routing="single"``: ``router`` (``embedding``, offline; ``function_call`` or ``react``,
        through the configured chat model) picks one dataset, searched with its own config.
        ``routing="multiple"``: all are searched in threads and merged by the merge ``merge`` names
        (``relevance``, ``weighted``, ``reranking_model``, ``rrf`` or an installed one; see
        :mod:`zhiku.retrieval.merges`).
        """
        if datasets is None:
            targets = self.datasets()
        else:  # a dataset named twice (by name and by id, say) is searched once
            found = (self.dataset(name) for name in dict.fromkeys(datasets))
            targets = list({dataset.id: dataset for dataset in found}.values())
        return self.routed_retrieval().route(
            query,
            targets,
            routing=routing,
            router=router,
            top_k=top_k,
            score_threshold=score_threshold,
            merge_by=merge,
            semantic_query=semantic_query,
            section=section,
        )

    def search(self, query: str, **options: Any) -> list[Hit]:
        """The hits of :meth:`retrieve` (same options)."""
        return self.retrieve(query, **options).hits

    # -- answers -------------------------------------------------------------------------------

    def ask(
        self,
        question: str,
        *,
        datasets: Sequence[str] | None = None,
        conversation_id: str | None = None,
        stream: bool = False,
        config: AnswerConfig | dict[str, Any] | None = None,
        remember: bool = True,
        user: str = "",
        owner: str | None = None,
        history: Sequence[Turn] | None = None,
        message_id: str | None = None,
    ) -> Answer | Iterator[AnswerEvent]:
        """Answer ``question`` from ``datasets`` (names or ids; default: all) with cited sources.

        ``conversation_id`` continues a conversation (its history condenses a follow-up); with
        ``remember`` (default) the turn is stored, in a new conversation when none is given.
        ``stream=True`` returns the :class:`AnswerEvent` iterator instead of the :class:`Answer`.
        The chat model answers when one is configured, else the offline extractive answerer
        (``config={"answerer": "extractive"}`` forces it). ``history`` gives earlier turns
        directly (stateless callers); ``message_id`` fixes the stored answer's id in advance.
        """
        if not isinstance(config, AnswerConfig):
            config = AnswerConfig.model_validate(config or {})
        if datasets is not None:
            datasets = [self.dataset(name).id for name in datasets]
        config = self._intents_within(config, datasets)
        request = AskRequest(
            question, datasets, conversation_id, remember, user, owner, history, message_id
        )
        assistant = self._answer_loop()
        return assistant.events(request, config) if stream else assistant.ask(request, config)

    def _intents_within(self, config: AnswerConfig, scope: Sequence[str] | None) -> AnswerConfig:
        """``config`` with each intent's datasets given by id, each within ``scope`` (dataset ids;
        None: every dataset). An intent narrows the datasets asked, never widens them: a dataset
        outside the scope is :class:`NotFound` with the same message as one that does not exist,
        so a scoped caller learns nothing of datasets it may not use."""
        if not any(intent.datasets for intent in config.intents):
            return config
        allowed = set(scope) if scope is not None else None
        intents = []
        for intent in config.intents:
            if intent.datasets is None:
                intents.append(intent)
                continue
            ids = []
            for name in intent.datasets:
                try:
                    dataset_id = self.dataset(name).id
                except NotFound:
                    dataset_id = None
                if dataset_id is None or (allowed is not None and dataset_id not in allowed):
                    raise NotFound(f"no dataset {name!r}")
                ids.append(dataset_id)
            intents.append(intent.model_copy(update={"datasets": tuple(dict.fromkeys(ids))}))
        return config.model_copy(update={"intents": tuple(intents)})

    @property
    def conversations(self) -> ConversationStore:
        """Stored conversations: list, read, rename, delete."""
        return self._conversations

    def _answer_loop(self) -> Assistant:
        embedding = self.embedding(self.settings.embedding_model, {})
        with self._lock:
            if self._assistant is None:
                self._assistant = build_assistant(
                    retrieve=self.retrieve,
                    embedding=embedding,
                    chat_model=self.chat_model,
                    conversations=self._conversations,
                    describe_sections=self._described_sections,
                    settings=self.settings,
                )
            return self._assistant

    def _described_sections(self, datasets: Sequence[str] | None) -> list[SectionChoice]:
        """The sections with a description in the datasets asked (None: all), for the chat model to
        choose among when it reads a question."""
        targets = self.datasets() if datasets is None else [self.dataset(name) for name in datasets]
        described = {
            section.name: section.description
            for dataset in targets
            for section in dataset.sections()
            if section.description
        }
        return [SectionChoice(name, description) for name, description in sorted(described.items())]

    def chat_model(self, override: dict[str, Any] | None = None) -> ChatModel:
        """The chat model of ``ZHIKU_LLM_*`` settings, fields replaced by ``override`` (a dataset's
        own ``llm`` options); ConfigError when no endpoint or model is set."""
        # a Secret prints as *** : key the cache by its hash, so two keys never share a client
        key = json.dumps(override or {}, sort_keys=True, default=lambda value: f"{type(value)}:{hash(value)}")
        return self._chats.get(key, lambda: ChatModel.from_settings(self.settings, override))

    def rerank_model(self, spec: str | None = None) -> RerankModel | None:
        """The rerank model ``spec`` names (default ``ZHIKU_RERANK_MODEL``), or None when neither
        names one. ``spec`` is a name of the ``rerank_models`` setting (the model is then called by
        that name) or a spec ``KIND:TARGET``; ``http:`` specs use ``rerank_base_url``,
        ``rerank_api_key`` and ``rerank_style``. Opened models are kept in a bounded cache."""
        spec = spec or self.settings.rerank_model
        if spec is None:
            return None
        return self._reranks.get(spec, lambda: self._open_rerank(spec))

    def _open_rerank(self, name: str) -> RerankModel:
        from zhiku.providers.rerank import open_rerank_model

        spec = self.settings.rerank_models.get(name, name)
        options: dict[str, Any] = {}
        if spec.startswith("http:"):
            options = {
                "base_url": self.settings.rerank_base_url,
                "api_key": self.settings.rerank_api_key,
                "style": self.settings.rerank_style,
            }
        model = open_rerank_model(spec, options)
        # a retrieval config names the model as the caller did: the configured name, or the spec
        model.name = name
        return model

    def routed_retrieval(self) -> RoutedRetrieval:
        embedding = self.embedding(self.settings.embedding_model, {})
        with self._lock:
            if self._retrieval is None:
                self._retrieval = RoutedRetrieval(
                    DatabaseProfiles(self._sessions),
                    embedding,
                    context=PluginContext(self.settings, chat=self.chat_model),
                    rerank_model=self.rerank_model,
                    max_threads=self.settings.search_threads,
                )
            return self._retrieval

    # -- stores and models shared by datasets --------------------------------------------------

    @property
    def owns_stores(self) -> bool:
        """Whether this process may open the stores: it holds the data directory's owner lock,
        or the stores are on a Qdrant server (which any number of processes share)."""
        return self._owner.held or self.settings.qdrant_url is not None

    @property
    def sessions(self) -> sessionmaker[Session]:
        return self._sessions

    @property
    def states(self) -> DocumentStates:
        return self._states

    def embedding(self, name: str, options: dict[str, Any]) -> CachedEmbedding:
        """One cached embedding per model and options, shared by datasets and the router, so a
        query asked of many datasets is embedded once."""
        with self._lock:
            return self._embedding_unlocked(name, options)

    def _embedding_unlocked(self, name: str, options: dict[str, Any]) -> CachedEmbedding:
        key = f"{name}|{sorted(options.items())}"
        if key not in self._embeddings:
            self._embeddings[key] = open_embedding(name, options, self._sessions)
        return self._embeddings[key]

    def dataset_embedding(self, dataset_id: str) -> CachedEmbedding:
        """The dataset's embedding model (shared with its index), opened without its stores."""
        row = self._dataset_row(dataset_id)
        return self.embedding(row.embedding_model, row.embedding_options or {})

    def dataset_index(self, dataset_id: str) -> DatasetIndex:
        """The dataset's opened stores (opened once). In a process that does not own the embedded
        stores, :class:`StoreBusy` — raised before any store file is touched."""
        if not self.owns_stores:
            raise StoreBusy(
                f"{self.settings.home} is in use by another zhiku process (a running `zhiku serve`?): "
                "its embedded stores admit one process; stop that process, or send the request "
                "through its HTTP API"
            )
        with self._lock:
            index = self._indexes.get(dataset_id)
            if index is None:
                row = self._dataset_row(dataset_id)
                embedding = self._embedding_unlocked(row.embedding_model, row.embedding_options or {})
                index = DatasetIndex(self.settings, self._sessions, row, embedding=embedding)
                self._indexes[dataset_id] = index
                # what a crash left: points without rows, edits between points and rows
                index.sweep_orphans()
                index.repair_pending()
            return index

    def _dataset_row(self, dataset_id: str) -> DatasetRow:
        with self._sessions() as session:
            row = session.get(DatasetRow, dataset_id)
            if row is None:
                raise NotFound(f"no dataset {dataset_id!r}")
            return row

    def _seal_stored_keys(self) -> None:
        """Datasets made before keys were sealed hold ``llm.api_key`` in plain text: seal them."""
        with self._sessions.begin() as session:
            for row in session.scalars(select(DatasetRow)):
                stored = row.llm_options or {}
                if stored.get(llm_options.KEY) is not None and not llm_options.is_sealed(
                    stored[llm_options.KEY]
                ):
                    row.llm_options = llm_options.seal(self._secrets, stored)

    def _recover_interrupted(self) -> None:
        """Documents caught mid-ingest by a crash: those queued through the HTTP API whose upload
        is still stored go back to ``waiting`` and the indexing workers run them again; the others
        (the later files of an ``add_files`` call, a ``replace_file`` not yet started) would wait
        forever, so their run ends as failed — ``error``, or back to the version they still serve."""
        uploads = open_uploads(self.settings, self._sessions)
        with self._sessions() as session:
            rows = session.execute(
                select(DocumentRow.id, DocumentRow.status, DocumentJobRow.upload)
                .outerjoin(DocumentJobRow, DocumentJobRow.document_id == DocumentRow.id)
                .where(DocumentRow.status.in_([str(s) for s in (*IN_PROGRESS, DocumentStatus.WAITING)]))
                # a Celery worker's document is its lease's business, a handed-over one the writer's
                .where(DocumentJobRow.lease_owner.is_(None))
                .where(~exists().where(PreparedVersionRow.document_id == DocumentRow.id))
            ).all()
        for document_id, status, upload in rows:
            if upload and uploads.exists(upload):
                if self._states.move(document_id, DocumentStatus.WAITING, only_from=IN_PROGRESS):
                    self.recovered.append(document_id)
                continue
            stage = "before indexing" if status == DocumentStatus.WAITING else f"during {status}"
            self._states.fail(document_id, f"interrupted {stage}: the process stopped; ingest the file again")
