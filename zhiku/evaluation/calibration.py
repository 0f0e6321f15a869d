"""Fitting and checking relevance calibrations on judged sets.

A calibration (:class:`zhiku.retrieval.relevance.Calibration`) is fitted on *samples*: the hits a
search returns for a set's own judged questions (relevant when the qrels say so) and for questions
taken from other sets (never relevant: those sets' questions have no passage here). Each kind of
evidence at hand gets its own logistic model; :func:`calibration_error` and :func:`leave_one_out`
check that the scores mean what they say on sets a model was not fitted on.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from zhiku.core.documents import Hit
from zhiku.core.errors import InvalidInput
from zhiku.evaluation.sets import EvalSet
from zhiku.retrieval.relevance import EVIDENCE, Calibration, Evidence, feature_vector

#: Hits per question that the samples hold: the ten a person reads and ten below them.
SAMPLE_TOP_K = 20
#: L2 penalty of the logistic fit (on the weights, not the intercept): keeps a set with few
#: relevant hits from pushing a weight to extremes.
L2 = 1e-5
#: Bins of the expected calibration error (equal width over [0, 1]).
ECE_BINS = 10


@dataclass(frozen=True)
class Sample:
    """One hit of one question: its evidence, its relevance as scored, and the judgement."""

    set: str
    question: str
    foreign: bool
    evidence: Mapping[str, float]
    score: float
    relevant: bool


def foreign_questions(
    eval_set: EvalSet, others: Iterable[EvalSet], count: int, seed: int = 7
) -> list[tuple[str, str]]:
    """``count`` judged questions drawn evenly from the ``others`` sets (the same for a seed), as
    ``(origin set/question id, text)``: asked of ``eval_set`` they have no relevant passage."""
    pools = [
        [(f"{other.name}/{qid}", text) for qid, text in other.queries.items() if other.qrels.get(qid)]
        for other in others
        if other.name != eval_set.name
    ]
    pools = [pool for pool in pools if pool]
    if not pools or count <= 0:
        return []
    rng = random.Random(seed)
    share, extra = divmod(count, len(pools))
    drawn: list[tuple[str, str]] = []
    for i, pool in enumerate(pools):
        drawn += rng.sample(pool, min(len(pool), share + (1 if i < extra else 0)))
    return drawn


def samples_of(
    eval_set: EvalSet,
    own: Mapping[str, Sequence[Hit]],
    foreign: Mapping[str, Sequence[Hit]],
    judged_id: Callable[[Hit], str],
) -> list[Sample]:
    """The samples of a set's searches: ``own`` maps its question ids to their hits, ``foreign``
    other sets' questions to theirs; ``judged_id`` names a hit as the qrels do."""
    samples = []
    for qid, hits in own.items():
        relevant = eval_set.qrels.get(qid, set())
        for hit in hits:
            judged = judged_id(hit) in relevant
            samples.append(Sample(eval_set.name, qid, False, hit.evidence, hit.score, judged))
    for qid, hits in foreign.items():
        for hit in hits:
            samples.append(Sample(eval_set.name, qid, True, hit.evidence, hit.score, False))
    return samples


def fit_logistic(features: np.ndarray, labels: np.ndarray, l2: float = L2) -> np.ndarray:
    """Weights ``[intercept, w...]`` maximising the penalised log-likelihood (Newton's method)."""
    x = np.hstack([np.ones((features.shape[0], 1)), features])
    y = labels.astype(np.float64)
    w = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2 * len(y))
    penalty[0] = 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -35, 35)))
        gradient = x.T @ (p - y) + penalty * w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty) + 1e-9 * np.eye(x.shape[1])
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return w


def kinds_of(samples: Sequence[Sample]) -> list[str]:
    """The evidence kinds every sample holds, in :data:`EVIDENCE` order."""
    return [kind for kind in EVIDENCE if all(kind in s.evidence for s in samples)]


def fit(samples: Sequence[Sample], embedding_model: str) -> Calibration:
    """One logistic model per subset of the evidence the samples hold (both, each alone)."""
    kinds = kinds_of(samples)
    if not kinds:
        raise InvalidInput("the samples hold no evidence to fit")
    labels = np.array([s.relevant for s in samples])
    if labels.all() or not labels.any():
        raise InvalidInput("fitting needs relevant and irrelevant samples")
    subsets = [kinds] + ([[kind] for kind in kinds] if len(kinds) > 1 else [])
    weights = {}
    for subset in subsets:
        features = np.array([feature_vector(subset, _evidence(s, subset)) for s in samples])
        weights["+".join(subset)] = tuple(round(float(w), 6) for w in fit_logistic(features, labels))
    return Calibration(embedding_model, weights, tuple(sorted({s.set for s in samples})))


def _evidence(sample: Sample, kinds: Sequence[str]) -> Evidence:
    return Evidence(**{kind: sample.evidence[kind] for kind in kinds})


def rescore(
    samples: Sequence[Sample], calibration: Calibration, kinds: Sequence[str] | None = None
) -> list[float]:
    """Each sample's relevance under ``calibration`` (from ``kinds`` of its evidence, default all)."""
    scores = []
    for sample in samples:
        chosen = kinds if kinds is not None else [k for k in EVIDENCE if k in sample.evidence]
        score = calibration.relevance(_evidence(sample, chosen))
        scores.append(score if score is not None else 0.0)
    return scores


def calibration_error(scores: Sequence[float], labels: Sequence[bool], bins: int = ECE_BINS) -> float:
    """Expected calibration error: over equal-width score bins, the share of samples in a bin
    times the gap between its mean score and its share of relevant samples."""
    if not scores:
        return 0.0
    total = 0.0
    for row in reliability(scores, labels, bins):
        total += row["count"] * abs(row["mean_score"] - row["relevant"])
    return total / len(scores)


def reliability(
    scores: Sequence[float], labels: Sequence[bool], bins: int = ECE_BINS
) -> list[dict[str, float]]:
    """The reliability diagram as rows: per non-empty bin, its range, count, mean score and share
    of relevant samples (a calibrated score has the two equal)."""
    rows = []
    for b in range(bins):
        low, high = b / bins, (b + 1) / bins
        members = [i for i, s in enumerate(scores) if low <= s < high or (b == bins - 1 and s == 1.0)]
        if not members:
            continue
        rows.append(
            {
                "from": low,
                "to": high,
                "count": len(members),
                "mean_score": round(math.fsum(scores[i] for i in members) / len(members), 4),
                "relevant": round(sum(bool(labels[i]) for i in members) / len(members), 4),
            }
        )
    return rows


def leave_one_out(
    by_set: Mapping[str, Sequence[Sample]], embedding_model: str
) -> dict[str, dict[str, float]]:
    """For each set: the calibration error of a model fitted on the *other* sets, per evidence
    subset (``cosine+lexical``, ``cosine``, ``lexical``)."""
    report: dict[str, dict[str, float]] = {}
    for name, held_out in by_set.items():
        rest = [s for other, samples in by_set.items() if other != name for s in samples]
        calibration = fit(rest, embedding_model)
        labels = [s.relevant for s in held_out]
        report[name] = {
            subset: round(calibration_error(rescore(held_out, calibration, subset.split("+")), labels), 4)
            for subset in calibration.weights
        }
    return report
