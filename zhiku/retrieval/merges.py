"""Multi-path merges by name: the ``merges`` registry a multi-dataset query's ``merge`` names.

A merge is ``merge(per_dataset, inputs)`` (:class:`Merge`): each dataset's hits, best first, in
the datasets' order → one ranking. What only some merges need comes lazily in
:class:`MergeInputs` — the datasets' fit to the query, a rerank model — so a merge that does not
ask costs nothing and needs nothing configured. Built-ins: ``relevance`` (default), ``weighted``,
``rrf``, ``reranking_model`` (see :mod:`zhiku.retrieval.multi_path`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from zhiku.core.documents import Hit
from zhiku.core.registry import Registry
from zhiku.providers.rerank.base import RerankModel
from zhiku.retrieval.multi_path import merge_by_relevance, merge_reranked, merge_rrf, merge_weighted


@dataclass(frozen=True)
class MergeInputs:
    """``dataset_weights()``: each dataset's fit to the query in ``(0, 1]``, the best at 1;
    ``rerank_model()``: the configured rerank model (ConfigError when none is);
    ``score_threshold``: the relevance the datasets' hits were cut at, for a merge that replaces
    their scores and must cut again."""

    query: str
    dataset_weights: Callable[[], Mapping[str, float]]
    rerank_model: Callable[[], RerankModel]
    score_threshold: float


class Merge(Protocol):
    """The contract of the ``merges`` registry: the merged hits, best first (``top_k`` is cut after)."""

    def __call__(self, per_dataset: Mapping[str, Sequence[Hit]], inputs: MergeInputs, /) -> list[Hit]: ...


merges: Registry[Merge] = Registry("merges")


@merges.register("relevance")
def _relevance(per_dataset: Mapping[str, Sequence[Hit]], inputs: MergeInputs, /) -> list[Hit]:
    return merge_by_relevance(per_dataset)


@merges.register("weighted")
def _weighted(per_dataset: Mapping[str, Sequence[Hit]], inputs: MergeInputs, /) -> list[Hit]:
    weights = inputs.dataset_weights() if len(per_dataset) > 1 else {}
    return merge_weighted(per_dataset, weights)


@merges.register("rrf")
def _rrf(per_dataset: Mapping[str, Sequence[Hit]], inputs: MergeInputs, /) -> list[Hit]:
    return merge_rrf(per_dataset)


@merges.register("reranking_model")
def _reranked(per_dataset: Mapping[str, Sequence[Hit]], inputs: MergeInputs, /) -> list[Hit]:
    """The model's scores replace the datasets' relevance, so they are cut at the threshold again."""
    hits = merge_reranked(inputs.query, per_dataset, inputs.rerank_model())
    return [hit for hit in hits if hit.score >= inputs.score_threshold]
