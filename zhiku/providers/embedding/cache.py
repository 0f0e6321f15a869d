"""Embedding cache keyed by ``(model name, sha256(text))``, and a model wrapper that uses it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from zhiku.core.cancellation import checkpoint
from zhiku.core.documents import content_hash
from zhiku.providers.embedding.base import EmbeddingModel, ProgressCallback

QUERY_CACHE_SIZE = 1024
#: Texts embedded (and cached) per step of :meth:`CachedEmbedding.embed_documents`. A pause or
#: a stop takes effect between steps, so a step must be short: at 64 texts a pause of a document
#: on the slowest offline model on two cores took effect tens of seconds late; one cache write
#: per 16 texts is cheap beside their embedding.
CACHE_BATCH = 16


class EmbeddingCache(Protocol):
    """Stores document embeddings; hashes are :func:`zhiku.core.documents.content_hash` values."""

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors among ``hashes``, by hash; unknown hashes are simply absent."""
        ...

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None:
        """Store (or overwrite) vectors by hash."""
        ...


class InMemoryEmbeddingCache:
    """A dict-backed cache for tests and ephemeral datasets; safe to share between threads."""

    def __init__(self) -> None:
        self._vectors: dict[tuple[str, str], np.ndarray] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._vectors)

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        with self._lock:
            found = {h: self._vectors.get((model, h)) for h in hashes}
        return {h: v.copy() for h, v in found.items() if v is not None}

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None:
        rows = {(model, h): np.array(v, dtype=np.float32) for h, v in items.items()}
        with self._lock:
            self._vectors.update(rows)


class CachedEmbedding:
    """An EmbeddingModel that embeds only texts the cache does not hold yet.

    The same text twice in one call is embedded once. Documents go to ``cache``; the last
    :data:`QUERY_CACHE_SIZE` query embeddings are kept in memory, and also in ``cache`` (under the
    model name plus ``#query``) when ``persist_queries`` is set — for evaluations, which ask the
    same thousands of queries run after run; a server leaves it off to keep searches read-only.
    """

    def __init__(
        self, model: EmbeddingModel, cache: EmbeddingCache, *, persist_queries: bool = False
    ) -> None:
        self.model = model
        self.cache = cache
        self.persist_queries = persist_queries
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._queries_lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def dim(self) -> int:
        return self.model.dim

    def embed_documents(
        self, texts: Sequence[str], *, on_progress: ProgressCallback | None = None
    ) -> np.ndarray:
        if not texts:
            return self.model.embed_documents(texts)
        hashes = [content_hash(text) for text in texts]
        unique = dict(zip(hashes, texts, strict=True))
        vectors = self.cache.get_many(self.name, list(unique))
        misses = [h for h in unique if h not in vectors]
        total = len(texts)
        done = total - len(misses)
        # batch by batch, each stored as soon as it is made: a stopped or killed run loses at
        # most one batch, and a cancelled one stops between batches
        for start in range(0, len(misses), CACHE_BATCH):
            checkpoint()
            part = misses[start : start + CACHE_BATCH]
            texts_part = [unique[h] for h in part]
            fresh = self.model.embed_documents(texts_part, on_progress=_from(on_progress, done, total))
            new = dict(zip(part, fresh, strict=True))
            self.cache.put_many(self.name, new)
            vectors.update(new)
            done += len(part)
            if on_progress is not None:
                on_progress(done, total)
        if not misses and on_progress is not None:
            on_progress(total, total)
        return np.stack([vectors[h] for h in hashes]).astype(np.float32, copy=False)

    @property
    def holds_gil(self) -> bool:
        """Whether the model keeps the GIL while it embeds (its ``holds_gil``, if it says; a model
        that runs native code or calls a server leaves it)."""
        return bool(getattr(self.model, "holds_gil", False))

    def has_query(self, text: str) -> bool:
        """Whether ``text``'s vector is in memory, so :meth:`embed_query` only looks it up."""
        with self._queries_lock:
            return text in self._queries

    def embed_query(self, text: str) -> np.ndarray:
        with self._queries_lock:
            vector = self._queries.get(text)
            if vector is not None:
                self._queries.move_to_end(text)
                return vector.copy()
        stored = self._stored_query(text)
        vector = stored if stored is not None else self.model.embed_query(text)
        if stored is None and self.persist_queries:
            self.cache.put_many(self._query_key, {content_hash(text): vector})
        with self._queries_lock:
            self._queries[text] = vector.copy()
            if len(self._queries) > QUERY_CACHE_SIZE:
                self._queries.popitem(last=False)
        return vector

    @property
    def _query_key(self) -> str:
        return f"{self.name}#query"

    def _stored_query(self, text: str) -> np.ndarray | None:
        if not self.persist_queries:
            return None
        digest = content_hash(text)
        return self.cache.get_many(self._query_key, [digest]).get(digest)

    def warm_queries(self, texts: Sequence[str]) -> None:
        """Embed many future queries in batches (when the model can) and keep them persisted."""
        if not self.persist_queries or not texts:
            return
        digests = {content_hash(text): text for text in texts}
        known = self.cache.get_many(self._query_key, list(digests))
        missing = [digest for digest in digests if digest not in known]
        batch = getattr(self.model, "embed_queries", None)
        for start in range(0, len(missing), 256):
            part = missing[start : start + 256]
            texts_part = [digests[digest] for digest in part]
            if batch is not None:
                vectors = batch(texts_part)
            else:
                vectors = np.stack([self.model.embed_query(text) for text in texts_part])
            self.cache.put_many(self._query_key, dict(zip(part, vectors, strict=True)))


def _from(on_progress: ProgressCallback | None, before: int, total: int) -> ProgressCallback | None:
    """The model's own progress within one cache batch (one report per request to a remote
    model), counted on from the ``before`` texts already done: a document's progress moves with
    every request, not once per cache batch."""
    if on_progress is None:
        return None
    return lambda made, _in_batch: on_progress(before + made, total)
