"""The model clients a knowledge base opens once and shares: embeddings, chat and rerank models.

A query asked of many datasets is embedded once, and a chat or rerank client (a connection pool,
or weights in memory) is opened once per configuration; chat and rerank clients sit in bounded
caches, since a caller can vary what names them.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.bounded_cache import BoundedCache
from zhiku.core.config import Settings
from zhiku.core.secrets import SecretBox
from zhiku.knowledge_base import llm_options
from zhiku.knowledge_base.indexing.dataset_index import open_embedding
from zhiku.providers.embedding import CachedEmbedding
from zhiku.providers.llm import ChatModel
from zhiku.providers.rerank.base import RerankModel

#: Opened rerank and chat models kept at once (each may hold a connection pool or weights).
MODEL_CACHE_SIZE = 16


class SharedModels:
    """Opened models by name and options. ``lock`` is the knowledge base's, which also guards its
    opened indexes: an index opens its embedding with :meth:`embedding_held`."""

    def __init__(
        self, settings: Settings, sessions: sessionmaker[Session], lock: threading.Lock, secrets: SecretBox
    ) -> None:
        self._settings = settings
        self._secrets = secrets
        self._sessions = sessions
        self._lock = lock
        self._embeddings: dict[str, CachedEmbedding] = {}
        self._chats: BoundedCache[str, ChatModel] = BoundedCache(MODEL_CACHE_SIZE)
        self._reranks: BoundedCache[str, RerankModel] = BoundedCache(MODEL_CACHE_SIZE)

    def embedding(self, name: str, options: dict[str, Any]) -> CachedEmbedding:
        """One cached embedding per model and options, shared by datasets and the router, so a
        query asked of many datasets is embedded once."""
        with self._lock:
            return self.embedding_held(name, options)

    def embedding_held(self, name: str, options: dict[str, Any]) -> CachedEmbedding:
        """:meth:`embedding`, for a caller already holding the knowledge base's lock. ``options``
        as stored: an ``api_key`` sealed (see :mod:`llm_options`), opened here."""
        key = f"{name}|{sorted(options.items())}"
        if key not in self._embeddings:
            opened = llm_options.unseal(self._secrets, options) or {}
            self._embeddings[key] = open_embedding(name, opened, self._sessions)
        return self._embeddings[key]

    def chat_model(self, override: dict[str, Any] | None = None) -> ChatModel:
        """The chat model of ``ZHIKU_LLM_*`` settings, fields replaced by ``override`` (a dataset's
        own ``llm`` options); ConfigError when no endpoint or model is set."""
        # a Secret prints as *** : key the cache by its hash, so two keys never share a client
        key = json.dumps(override or {}, sort_keys=True, default=lambda value: f"{type(value)}:{hash(value)}")
        return self._chats.get(key, lambda: ChatModel.from_settings(self._settings, override))

    def rerank_model(self, spec: str | None = None) -> RerankModel | None:
        """The rerank model ``spec`` names (default ``ZHIKU_RERANK_MODEL``), or None when neither
        names one. ``spec`` is a name of the ``rerank_models`` setting (the model is then called by
        that name) or a spec ``KIND:TARGET``; ``http:`` specs use ``rerank_base_url``,
        ``rerank_api_key`` and ``rerank_style``. Opened models are kept in a bounded cache."""
        spec = spec or self._settings.rerank_model
        if spec is None:
            return None
        return self._reranks.get(spec, lambda: self._open_rerank(spec))

    def _open_rerank(self, name: str) -> RerankModel:
        from zhiku.providers.rerank import open_rerank_model

        spec = self._settings.rerank_models.get(name, name)
        options: dict[str, Any] = {}
        if spec.startswith("http:"):
            options = {
                "base_url": self._settings.rerank_base_url,
                "api_key": self._settings.rerank_api_key,
                "style": self._settings.rerank_style,
            }
        model = open_rerank_model(spec, options)
        # a retrieval config names the model as the caller did: the configured name, or the spec
        model.name = name
        return model

    def close_held(self) -> None:
        """Close the chat and rerank clients (the caller holds the lock); embeddings stay."""
        self._chats.clear()
        self._reranks.clear()
