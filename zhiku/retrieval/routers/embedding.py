"""The embedding router: no LLM, the query's cosine to each dataset's description and sample."""

from __future__ import annotations

import threading

import numpy as np

from zhiku.providers.embedding import CachedEmbedding
from zhiku.retrieval.types import DatasetProfile, RouteDecision

#: A dataset's score is the mean of the query's best ``TOP_N`` cosines among its description and
#: sampled segments: one lucky segment does not win a dataset, and a dataset whose content is
#: close to the query on several segments does.
TOP_N = 5


class EmbeddingRouter:
    """Picks the dataset whose description and sampled segments lie closest to the query.

    Profile vectors are kept in memory per dataset until its profile ``version`` changes.
    """

    name = "embedding"

    def __init__(self, embedding: CachedEmbedding, *, top_n: int = TOP_N) -> None:
        self._embedding = embedding
        self._top_n = top_n
        self._vectors: dict[str, tuple[str, np.ndarray]] = {}
        self._lock = threading.Lock()

    def scores(self, query: str, profiles: list[DatasetProfile]) -> dict[str, float]:
        """Each dataset's score in ``[-1, 1]`` (a mean of cosines)."""
        if not profiles:
            return {}
        query_vector = self._embedding.embed_query(query)
        result = {}
        for profile in profiles:
            vectors = self._profile_vectors(profile)
            if len(vectors) == 0:
                result[profile.id] = -1.0
                continue
            similarities = vectors @ query_vector
            best = np.sort(similarities)[-self._top_n :]
            result[profile.id] = float(best.mean())
        return result

    def choose(self, query: str, profiles: list[DatasetProfile]) -> RouteDecision:
        if not profiles:
            return RouteDecision(None, self.name, note="no dataset to route to")
        if len(profiles) == 1:
            return RouteDecision(profiles[0].id, self.name)
        scores = self.scores(query, profiles)
        best = max(scores, key=lambda dataset_id: scores[dataset_id])
        return RouteDecision(best, self.name, scores=scores)

    def _profile_vectors(self, profile: DatasetProfile) -> np.ndarray:
        with self._lock:
            cached = self._vectors.get(profile.id)
        if cached is not None and cached[0] == profile.version:
            return cached[1]
        texts = [text for text in (profile.description, *profile.sample) if text.strip()]
        vectors = (
            self._embedding.embed_documents(texts)
            if texts
            else np.zeros((0, self._embedding.dim), dtype=np.float32)
        )
        with self._lock:
            self._vectors[profile.id] = (profile.version, vectors)
        return vectors
