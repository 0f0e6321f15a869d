"""Rerank models (the :class:`~zhiku.providers.rerank.base.RerankModel` protocol), opened from a spec string.

A spec is ``KIND:TARGET``. Built-in kinds:

- ``cross-encoder:/models/bge-reranker-base`` — a local sequence-classification directory
  (options: ``max_length``, ``batch_size``, ``activation``); needs the ``[torch]`` extra.
- ``http:rerank-v3.5`` — a model behind a rerank API (options: ``base_url`` (required),
  ``api_key``, ``style`` = cohere | jina | tei | dashscope, ``timeout``, ``max_retries``,
  ``batch_size``).

No cross-encoder weights ship on PyPI, so no local model is built in: point ``cross-encoder:`` at
a directory. More kinds plug in through the ``rerank_models`` registry: an entry point
``rerank.KIND`` in group ``zhiku.plugins`` (or ``rerank_models.add`` in code); a factory
is called as ``factory(target, **options)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from zhiku.core.errors import ConfigError
from zhiku.core.registry import Registry
from zhiku.providers.rerank.base import RerankModel

#: The contract of the ``rerank_models`` registry: ``factory(target, **options)``, the spec's
#: TARGET and the model's options (each kind has its own).
RerankFactory = Callable[..., RerankModel]


rerank_models: Registry[RerankFactory] = Registry("rerank")

SPEC_HELP = "a rerank spec is KIND:TARGET, e.g. cross-encoder:/models/bge-reranker-base or http:rerank-v3.5"


@rerank_models.register("cross-encoder")
def _cross_encoder(target: str, **options: Any) -> RerankModel:
    from zhiku.providers.rerank.cross_encoder import CrossEncoderRerank

    if not target:
        raise ConfigError(f"cross-encoder needs a model directory; {SPEC_HELP}")
    options.setdefault("name", f"cross-encoder:{target}")
    return CrossEncoderRerank(target, **options)


@rerank_models.register("http")
def _http(target: str, **options: Any) -> RerankModel:
    from zhiku.providers.rerank.http import HttpRerank

    if not target:
        raise ConfigError(f"http rerank needs a model name; {SPEC_HELP}")
    if not options.get("base_url"):
        raise ConfigError(f"rerank model http:{target} needs the option base_url")
    options.setdefault("name", f"http:{target}")
    return HttpRerank(model=target, **options)


def open_rerank_model(spec: str, options: Mapping[str, Any] | None = None) -> RerankModel:
    """The rerank model ``spec`` names, built with ``options``.

    A built-in model's ``name`` is the spec itself (unless ``options`` give one), so a
    :class:`~zhiku.core.retrieval_config.RetrievalConfig` whose ``reranking.model`` is the spec
    matches the model opened from it. Raises ConfigError for a malformed spec or an unknown kind
    (listing the known ones), ModelUnavailable when the model cannot be loaded.
    """
    kind, _, target = spec.strip().partition(":")
    if not kind:
        raise ConfigError(f"empty rerank model kind in {spec!r}; {SPEC_HELP}")
    try:
        factory = rerank_models.factory(kind)
    except ConfigError as exc:
        raise ConfigError(f"cannot open rerank model {spec!r}: {exc}") from exc
    return factory(target, **dict(options or {}))


__all__ = ["SPEC_HELP", "open_rerank_model", "rerank_models"]
