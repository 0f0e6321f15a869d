"""What a dataset needs from its knowledge base, handed to it instead of the knowledge base itself."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.config import Settings
from zhiku.core.secrets import SecretBox
from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex
from zhiku.knowledge_base.indexing.document_states import DocumentStates
from zhiku.providers.embedding import CachedEmbedding
from zhiku.providers.llm import ChatModel
from zhiku.providers.rerank.base import RerankModel


@dataclass(frozen=True)
class DatasetContext:
    """Sessions, settings, and the opened resources shared by all datasets of a knowledge base.

    ``index(dataset_id)`` opens (once) a dataset's stores, or raises ``StoreBusy`` in a process
    that does not own the embedded stores; ``embedding(dataset_id)`` is the dataset's cached
    embedding model, which any process may use; ``chat_model(options)`` and ``rerank_model(spec)``
    give the shared, cached model clients; ``secrets`` seals the keys datasets store;
    ``metadata_changed(dataset_id)`` brings the stores' payload in step after a change of
    metadata values (see :mod:`zhiku.knowledge_base.metadata_points`).
    """

    settings: Settings
    sessions: sessionmaker[Session]
    states: DocumentStates
    secrets: SecretBox
    index: Callable[[str], DatasetIndex]
    embedding: Callable[[str], CachedEmbedding]
    chat_model: Callable[[dict[str, Any] | None], ChatModel]
    rerank_model: Callable[[str | None], RerankModel | None]
    metadata_changed: Callable[[str], None]
