"""Retrieval across datasets: N-choose-1 routing or multi-path search and merge."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from zhiku.core.documents import Hit
from zhiku.core.errors import ConfigError, ZhikuError
from zhiku.core.plugin_context import PluginContext
from zhiku.core.retrieval_config import RetrievalConfig
from zhiku.providers.embedding import CachedEmbedding
from zhiku.providers.rerank.base import RerankModel
from zhiku.retrieval.merges import MergeInputs, merges
from zhiku.retrieval.multi_path import best_semantic_scores, dataset_weights
from zhiku.retrieval.profiles import ProfileCache, ProfileSource
from zhiku.retrieval.routers import EMBEDDING_ROUTER, EmbeddingRouter, routers
from zhiku.retrieval.types import RetrievalResult, Router, Routing

logger = logging.getLogger(__name__)


class SearchTarget(Protocol):
    """A dataset as retrieval sees it (``zhiku.knowledge_base.Dataset`` is one)."""

    id: str

    @property
    def retrieval(self) -> RetrievalConfig: ...

    @property
    def embedding_model(self) -> str: ...

    def search_with(
        self, query: str, config: RetrievalConfig, *, semantic_query: str | None = None
    ) -> list[Hit]:
        """This dataset searched with ``config`` (the public ``Dataset.search_with``, so its name stays)."""
        ...


class RoutedRetrieval:
    """Routes a query to one dataset, or searches many in threads and merges their hits.

    ``context`` (its chat model) is given to the routers a query names, and ``rerank_model``
    called only when a model merge is asked for, so a knowledge base without them configured
    works fully offline.
    """

    def __init__(
        self,
        profiles: ProfileSource,
        embedding: CachedEmbedding,
        *,
        context: PluginContext,
        rerank_model: Callable[[], RerankModel | None],
        max_threads: int = 8,
    ) -> None:
        self._profiles = ProfileCache(profiles)
        self._embedding_router = EmbeddingRouter(embedding)
        self._context = context
        self._rerank_model = rerank_model
        self._pool = ThreadPoolExecutor(max_workers=max_threads, thread_name_prefix="zhiku-datasets")

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def router(self, name: str) -> Router:
        """The router registered as ``name`` (ConfigError naming the installed ones otherwise)."""
        if name == EMBEDDING_ROUTER:
            return self._embedding_router
        return routers.factory(name)(self._context, self._embedding_router)

    def route(
        self,
        query: str,
        targets: Sequence[SearchTarget],
        *,
        routing: Routing = "multiple",
        router: str = "embedding",
        top_k: int | None = None,
        score_threshold: float | None = None,
        merge_by: str = "relevance",
        semantic_query: str | None = None,
        section: str | None = None,
    ) -> RetrievalResult:
        """``semantic_query`` (a HyDE passage) drives semantic search in place of ``query``;
        ``section`` restricts every dataset's search to that section and those under it.

        ``single``: the router picks one dataset, searched with its own config (``top_k`` and
        ``score_threshold`` override it when given). ``multiple``: every dataset is searched with
        its own config in its own thread, the hits merged (see :mod:`zhiku.retrieval.multi_path`),
        each cut at ``score_threshold`` when given (else at its own), and ``top_k`` (default: the
        largest of the datasets' own) cuts the merge, ``merge_by`` names it (the ``merges``
        registry). A hit's score is its relevance throughout."""
        if routing == "single":
            return self._single(query, targets, router, top_k, score_threshold, semantic_query, section)
        if routing == "multiple":
            return self._multiple(query, targets, top_k, score_threshold, merge_by, semantic_query, section)
        raise ConfigError(f"unknown routing {routing!r}; use 'single' or 'multiple'")

    def _single(
        self,
        query: str,
        targets: Sequence[SearchTarget],
        router_name: str,
        top_k: int | None,
        score_threshold: float | None,
        semantic_query: str | None,
        section: str | None,
    ) -> RetrievalResult:
        chosen_router = self.router(router_name)
        profiles = self._profiles.profiles([target.id for target in targets])
        decision = chosen_router.choose(query, profiles) if query.strip() else None
        if decision is None or decision.dataset_id is None:
            note = decision.note if decision else "empty query"
            return RetrievalResult([], [], "single", router=router_name, note=note)
        target = next(t for t in targets if t.id == decision.dataset_id)
        override: dict[str, object] = {"section": section} if section is not None else {}
        if top_k is not None:
            override["top_k"] = top_k
        if score_threshold is not None:
            override["score_threshold"] = score_threshold
        hits = target.search_with(query, target.retrieval.merged(override), semantic_query=semantic_query)
        return RetrievalResult(hits, [target.id], "single", router=router_name, note=decision.note)

    def _multiple(
        self,
        query: str,
        targets: Sequence[SearchTarget],
        top_k: int | None,
        score_threshold: float | None,
        merge_by: str,
        semantic_query: str | None,
        section: str | None,
    ) -> RetrievalResult:
        ids = [target.id for target in targets]
        if not targets or not query.strip():
            return RetrievalResult([], ids, "multiple")
        configs = {target.id: target.retrieval for target in targets}
        k = top_k or max(config.top_k for config in configs.values())
        merge = merges.factory(merges.check(merge_by, "merge"))
        futures = {
            target.id: self._pool.submit(
                target.search_with,
                query,
                configs[target.id].merged(
                    {"top_k": k}
                    | ({"section": section} if section else {})
                    | ({"score_threshold": score_threshold} if score_threshold is not None else {})
                ),
                semantic_query=semantic_query,
            )
            for target in targets
        }
        per_dataset: dict[str, list[Hit]] = {}
        failed: dict[str, Exception] = {}
        for dataset_id, future in futures.items():
            try:
                per_dataset[dataset_id] = future.result()
            except ZhikuError as exc:
                failed[dataset_id] = exc
        if failed and not per_dataset:
            raise next(iter(failed.values()))
        note = None
        if failed:
            for dataset_id, error in failed.items():
                logger.warning("dataset %s failed in multi-path retrieval: %s", dataset_id, error)
            note = "not searched (failed): " + "; ".join(f"{d}: {e}" for d, e in failed.items())

        def weights() -> dict[str, float]:
            models = {target.embedding_model for target in targets if target.id in per_dataset}
            fit = best_semantic_scores(per_dataset) if len(models) == 1 else None
            if fit is None:
                profiles = self._profiles.profiles(list(per_dataset))
                fit = self._embedding_router.scores(query, profiles)
            return dataset_weights(fit)

        threshold = score_threshold if score_threshold is not None else min(
            (config.score_threshold or 0.0 for config in configs.values()), default=0.0
        )
        hits = merge(per_dataset, MergeInputs(query, weights, self._rerank, threshold))
        return RetrievalResult(hits[:k], ids, "multiple", note=note)

    def _rerank(self) -> RerankModel:
        model = self._rerank_model()
        if model is None:
            raise ConfigError("multi-path merge 'reranking_model' needs a rerank model (ZHIKU_RERANK_MODEL)")
        return model
