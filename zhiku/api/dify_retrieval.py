"""Dify's ``retrieval_model`` JSON shape, translated to and from zhiku's :class:`RetrievalConfig`.

Dify clients send ``reranking_enable``, ``reranking_mode``, ``weights`` (vector/keyword) and
``score_threshold_enabled``; zhiku's own shape names channels and fusion directly. Requests may
use either; answers carry both (``retrieval_model_dict`` for Dify clients).
"""

from __future__ import annotations

from typing import Any

from zhiku.core.retrieval_config import RetrievalConfig

#: Fields only Dify's shape has: a body with any of them is read as Dify's.
DIFY_FLAGS = ("reranking_enable", "score_threshold_enabled", "reranking_mode", "weights")
#: zhiku's fields that Dify's shape has no word for: in a Dify-shaped body they mean what they
#: mean in zhiku's.
ZHIKU_EXTENSIONS = ("hybrid_methods", "recall_k", "reorder", "search_in", "section")


def looks_like_dify(data: dict[str, Any]) -> bool:
    return any(key in data for key in DIFY_FLAGS)


def parse_retrieval(data: dict[str, Any], base: RetrievalConfig | None = None) -> RetrievalConfig:
    """``base`` (default: the defaults) with the fields of ``data``, in zhiku's or Dify's shape."""
    base = base or RetrievalConfig()
    return from_dify(data, base) if looks_like_dify(data) else base.merged(data)


def from_dify(data: dict[str, Any], base: RetrievalConfig | None = None) -> RetrievalConfig:
    """Translate Dify's ``retrieval_model`` (``reranking_enable``, ``weights``, ...)."""
    config = (base or RetrievalConfig()).model_dump()
    config.update((key, data[key]) for key in ZHIKU_EXTENSIONS if data.get(key) is not None)
    if "search_method" in data:
        config["search_method"] = data["search_method"]
    if data.get("top_k") is not None:
        config["top_k"] = data["top_k"]
    if "score_threshold_enabled" in data:
        config["score_threshold"] = data.get("score_threshold") if data["score_threshold_enabled"] else None
    reranking = dict(config["reranking"])
    mode = data.get("reranking_mode")
    if data.get("reranking_enable") and mode in (None, "reranking_model"):
        reranking["mode"] = "reranking_model"
        model = data.get("reranking_model") or {}
        reranking["model"] = model.get("reranking_model_name") or reranking.get("model")
    elif mode is not None and mode != "reranking_model":  # a fusion's name, checked at the API
        reranking["mode"] = mode
    weights = data.get("weights") or {}
    if weights:
        vector = float((weights.get("vector_setting") or {}).get("vector_weight", 0.7))
        keyword = float((weights.get("keyword_setting") or {}).get("keyword_weight", 0.3))
        # Dify's "keyword" side of hybrid search is its full-text (BM25) search.
        reranking["weights"] = {**reranking["weights"], "semantic": vector, "full_text": keyword}
    config["reranking"] = reranking
    if data.get("metadata_filtering_conditions") is not None:
        config["metadata_filter"] = data["metadata_filtering_conditions"]
    mode = data.get("metadata_filtering_mode")
    if mode == "disabled":
        config["metadata_filter"] = None
    if mode is not None:
        config["metadata_filtering_mode"] = "automatic" if mode == "automatic" else "manual"
    return RetrievalConfig.model_validate(config)


def to_dify(config: RetrievalConfig) -> dict[str, Any]:
    """``config`` in Dify's ``retrieval_model`` shape (for Dify-compatible answers)."""
    weights = config.reranking.weights
    return {
        "search_method": config.search_method,
        "reranking_enable": config.reranking.mode == "reranking_model",
        "reranking_mode": config.reranking.mode,
        "reranking_model": {
            "reranking_provider_name": "",
            "reranking_model_name": config.reranking.model or "",
        },
        "weights": {
            "weight_type": "customized",
            "vector_setting": {"vector_weight": weights.get("semantic", 0.0)},
            "keyword_setting": {"keyword_weight": weights.get("full_text", 0.0)},
        },
        "top_k": config.top_k,
        "score_threshold_enabled": config.score_threshold is not None,
        "score_threshold": config.score_threshold,
        "metadata_filtering_conditions": (
            config.metadata_filter.model_dump() if config.metadata_filter is not None else None
        ),
        "metadata_filtering_mode": config.metadata_filtering_mode,
    }
