"""RetrievalConfig: how a dataset is searched. Stored as JSON per dataset, overridable per query.

Also accepts Dify's ``retrieval_model`` JSON shape (:meth:`RetrievalConfig.from_dify`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

SearchMethod = Literal["semantic_search", "full_text_search", "keyword_search", "hybrid_search"]
Channel = Literal["semantic", "full_text", "keyword"]
FusionMode = Literal["weighted_score", "reranking_model", "rrf", "none"]

#: Channels hybrid search fuses by default, and their weights — chosen from the evaluation sets
#: (README, "Quality"): semantic + BM25 at 0.5/0.5 was the only setting that beat every single
#: method on both the Chinese and the English sets; adding the jieba keyword channel lowered nDCG
#: on every set measured, so it is searched in hybrid only when listed in ``hybrid_methods``.
DEFAULT_HYBRID: tuple[Channel, ...] = ("semantic", "full_text")
DEFAULT_WEIGHTS: dict[Channel, float] = {"semantic": 0.5, "full_text": 0.5, "keyword": 0.1}


def _default_hybrid() -> list[Channel]:
    return list(DEFAULT_HYBRID)


CHANNEL_OF_METHOD: dict[str, Channel] = {
    "semantic_search": "semantic",
    "full_text_search": "full_text",
    "keyword_search": "keyword",
}


class RerankingConfig(BaseModel):
    """How the channels' candidates are fused into one ranking.

    ``weights`` are per channel (missing channels weigh 0 in ``weighted_score``); ``rrf_k`` is the
    RRF constant; ``model`` names a rerank model for ``reranking_model``.
    """

    model_config = ConfigDict(extra="forbid")

    mode: FusionMode = "weighted_score"
    weights: dict[Channel, float] = Field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    rrf_k: int = Field(60, ge=1)
    model: str | None = None


class RetrievalConfig(BaseModel):
    """Search method, fusion and cut-offs.

    ``recall_k`` is how many candidates each channel recalls (default ``max(50, 4 * top_k)``);
    ``top_k`` is how many hits are returned; ``score_threshold`` drops hits whose final score is
    below it (see the README for what the final score means in each fusion mode).
    """

    model_config = ConfigDict(extra="forbid")

    search_method: SearchMethod = "hybrid_search"
    hybrid_methods: list[Channel] = Field(default_factory=_default_hybrid)
    top_k: int = Field(4, ge=1, le=1000)
    recall_k: int | None = Field(None, ge=1, le=10000)
    score_threshold: float | None = None
    reranking: RerankingConfig = Field(default_factory=RerankingConfig)
    reorder: bool = False

    @field_validator("hybrid_methods")
    @classmethod
    def _non_empty_unique(cls, value: list[Channel]) -> list[Channel]:
        if not value:
            raise ValueError("hybrid_methods needs at least one channel")
        return list(dict.fromkeys(value))

    @property
    def effective_recall_k(self) -> int:
        return self.recall_k if self.recall_k is not None else max(50, 4 * self.top_k)

    @property
    def channels(self) -> list[Channel]:
        """The channels this config searches."""
        if self.search_method == "hybrid_search":
            return list(self.hybrid_methods)
        return [CHANNEL_OF_METHOD[self.search_method]]

    def merged(self, override: dict[str, Any] | None) -> RetrievalConfig:
        """This config with the fields of ``override`` (zhiku or Dify shape) replaced."""
        if not override:
            return self
        if _looks_like_dify(override):
            return RetrievalConfig.from_dify(override, base=self)
        data = self.model_dump()
        for key, value in override.items():
            if key == "reranking" and isinstance(value, dict):
                data["reranking"] = {**data["reranking"], **value}
            else:
                data[key] = value
        return RetrievalConfig.model_validate(data)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RetrievalConfig:
        """Accepts zhiku's shape or Dify's ``retrieval_model`` shape."""
        if _looks_like_dify(data):
            return cls.from_dify(data)
        return cls.model_validate(data)

    @classmethod
    def from_dify(cls, data: dict[str, Any], base: RetrievalConfig | None = None) -> RetrievalConfig:
        """Translate Dify's ``retrieval_model`` (``reranking_enable``, ``weights``, ...)."""
        config = (base or cls()).model_dump()
        if "search_method" in data:
            config["search_method"] = data["search_method"]
        if data.get("top_k") is not None:
            config["top_k"] = data["top_k"]
        if "score_threshold_enabled" in data:
            config["score_threshold"] = (
                data.get("score_threshold") if data["score_threshold_enabled"] else None
            )
        reranking = dict(config["reranking"])
        mode = data.get("reranking_mode")
        if data.get("reranking_enable") and mode in (None, "reranking_model"):
            reranking["mode"] = "reranking_model"
            model = data.get("reranking_model") or {}
            reranking["model"] = model.get("reranking_model_name") or reranking.get("model")
        elif mode in ("weighted_score", "rrf"):
            reranking["mode"] = mode
        weights = data.get("weights") or {}
        if weights:
            vector = float((weights.get("vector_setting") or {}).get("vector_weight", 0.7))
            keyword = float((weights.get("keyword_setting") or {}).get("keyword_weight", 0.3))
            # Dify's "keyword" side of hybrid search is its full-text (BM25) search.
            reranking["weights"] = {**reranking["weights"], "semantic": vector, "full_text": keyword}
        config["reranking"] = reranking
        return cls.model_validate(config)

    def to_dify(self) -> dict[str, Any]:
        """This config in Dify's ``retrieval_model`` shape (for Dify-compatible API answers)."""
        weights = self.reranking.weights
        return {
            "search_method": self.search_method,
            "reranking_enable": self.reranking.mode == "reranking_model",
            "reranking_mode": self.reranking.mode,
            "reranking_model": {
                "reranking_provider_name": "",
                "reranking_model_name": self.reranking.model or "",
            },
            "weights": {
                "weight_type": "customized",
                "vector_setting": {"vector_weight": weights.get("semantic", 0.0)},
                "keyword_setting": {"keyword_weight": weights.get("full_text", 0.0)},
            },
            "top_k": self.top_k,
            "score_threshold_enabled": self.score_threshold is not None,
            "score_threshold": self.score_threshold,
        }


def _looks_like_dify(data: dict[str, Any]) -> bool:
    return any(
        key in data for key in ("reranking_enable", "score_threshold_enabled", "reranking_mode", "weights")
    )
