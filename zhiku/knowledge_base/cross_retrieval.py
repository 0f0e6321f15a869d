"""One question asked of several datasets: which are asked, routed or merged by the retrieval service."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.config import Settings
from zhiku.core.documents import Hit
from zhiku.core.plugin_context import PluginContext
from zhiku.knowledge_base.dataset_lifecycle import DatasetLifecycle
from zhiku.knowledge_base.profiles import DatabaseProfiles
from zhiku.knowledge_base.shared_models import SharedModels
from zhiku.retrieval.routing import RoutedRetrieval
from zhiku.retrieval.types import RetrievalResult, Routing


class CrossDatasetRetrieval:
    """Retrieval across the knowledge base's datasets, through one :class:`RoutedRetrieval` built
    at first use (under the knowledge base's ``lock``) and shared after."""

    def __init__(
        self,
        settings: Settings,
        sessions: sessionmaker[Session],
        models: SharedModels,
        datasets: DatasetLifecycle,
        lock: threading.Lock,
    ) -> None:
        self._settings = settings
        self._sessions = sessions
        self._models = models
        self._datasets = datasets
        self._lock = lock
        self._retrieval: RoutedRetrieval | None = None

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
            targets = self._datasets.datasets()
        else:  # a dataset named twice (by name and by id, say) is searched once
            found = (self._datasets.dataset(name) for name in dict.fromkeys(datasets))
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

    def routed_retrieval(self) -> RoutedRetrieval:
        embedding = self._models.embedding(self._settings.embedding_model, {})
        with self._lock:
            if self._retrieval is None:
                self._retrieval = RoutedRetrieval(
                    DatabaseProfiles(self._sessions),
                    embedding,
                    context=PluginContext(self._settings, chat=self._models.chat_model),
                    rerank_model=self._models.rerank_model,
                    max_threads=self._settings.search_threads,
                )
            return self._retrieval

    def close_held(self) -> None:
        """Close the retrieval service if it was built (the caller holds the lock); the next
        :meth:`routed_retrieval` builds it again."""
        if self._retrieval is not None:
            self._retrieval.close()
            self._retrieval = None
