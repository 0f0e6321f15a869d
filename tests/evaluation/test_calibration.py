"""Relevance calibration: the logistic fit, the calibration error, and the eval's and
``zhiku calibrate``'s use of other sets' questions (which a set cannot answer)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from zhiku import KnowledgeBase
from zhiku.cli import main
from zhiku.evaluation.calibration import calibration_error, fit_logistic, foreign_questions, reliability
from zhiku.evaluation.runner import evaluate
from zhiku.evaluation.sets import load_eval_set, sibling_sets
from zhiku.retrieval.relevance import Calibration, Evidence

TEA = {
    "passages": {
        "t1": "绿茶用八十度左右的水冲泡，时间两分钟。",
        "t2": "Black tea is steeped with boiling water for four minutes.",
        "t3": "乌龙茶可以反复冲泡五到七次。",
    },
    "queries": {"tq1": ("绿茶用多少度的水冲泡？", "t1"), "tq2": ("how long to steep black tea", "t2")},
}
SPACE = {
    "passages": {
        "s1": "Jupiter is the largest planet in the solar system.",
        "s2": "火星有两颗卫星：火卫一和火卫二。",
        "s3": "Saturn's rings are made of ice and rock.",
    },
    "queries": {"sq1": ("Which planet is the largest?", "s1"), "sq2": ("火星有几颗卫星？", "s2")},
}


def make_set(root: Path, content: dict) -> Path:  # type: ignore[type-arg]
    root.mkdir(parents=True)
    passages, queries = content["passages"], content["queries"]
    (root / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": p, "title": "", "text": t, "doc": p}) + "\n" for p, t in passages.items()),
        encoding="utf-8",
    )
    (root / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, (t, _) in queries.items()), encoding="utf-8"
    )
    (root / "qrels.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{p}\t1\n" for q, (_, p) in queries.items()),
        encoding="utf-8",
    )
    return root


def test_the_logistic_fit_recovers_the_weights_that_made_the_labels() -> None:
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, size=(20_000, 2))
    p = 1 / (1 + np.exp(-(-1.0 + 3.0 * x[:, 0] - 2.0 * x[:, 1])))
    labels = rng.uniform(size=len(p)) < p
    weights = fit_logistic(x, labels, l2=0.0)
    assert np.allclose(weights, [-1.0, 3.0, -2.0], atol=0.15)


def test_calibration_error_by_hand() -> None:
    # bin [0.1, 0.2): mean 0.1, none relevant → gap 0.1; bin [0.9, 1]: mean 0.9, all relevant → 0.1
    assert calibration_error([0.1, 0.1, 0.9, 0.9], [False, False, True, True]) == pytest.approx(0.1)
    assert calibration_error([0.5, 0.5], [True, False]) == pytest.approx(0.0)
    rows = reliability([0.05, 0.95, 1.0], [False, True, True])
    assert [(row["count"], row["relevant"]) for row in rows] == [(1, 0.0), (2, 1.0)]


def test_a_calibration_answers_from_the_evidence_at_hand() -> None:
    calibration = Calibration(
        "m", {"cosine+lexical": (-2.0, 1.0, 4.0, 0.0), "cosine": (-3.0, 5.0), "lexical": (-4.0, 8.0)}
    )
    both = calibration.relevance(Evidence(cosine=0.5, lexical=0.5))
    assert both == pytest.approx(1 / (1 + np.exp(-(-2.0 + 0.5 + 2.0))))
    assert calibration.relevance(Evidence(cosine=0.5)) == pytest.approx(1 / (1 + np.exp(0.5)))
    assert calibration.relevance(Evidence(lexical=0.0)) == pytest.approx(1 / (1 + np.exp(4.0)))
    assert calibration.relevance(Evidence()) is None
    again = Calibration.from_json(json.loads(json.dumps(calibration.to_json())))
    assert again.relevance(Evidence(cosine=0.2, lexical=0.1)) == calibration.relevance(
        Evidence(cosine=0.2, lexical=0.1)
    )


def test_foreign_questions_come_evenly_from_the_other_sets(tmp_path: Path) -> None:
    tea = load_eval_set(make_set(tmp_path / "tea", TEA))
    space = load_eval_set(make_set(tmp_path / "space", SPACE))
    drawn = foreign_questions(tea, [tea, space], 5)
    assert sorted(drawn) == [("space/sq1", "Which planet is the largest?"), ("space/sq2", "火星有几颗卫星？")]
    assert sibling_sets(tmp_path / "tea") == [(tmp_path / "space").resolve()]


def test_eval_reports_abstention_on_other_sets_questions(tmp_path: Path) -> None:
    tea = load_eval_set(make_set(tmp_path / "sets" / "tea", TEA))
    space = load_eval_set(make_set(tmp_path / "sets" / "space", SPACE))
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb:
        report = evaluate(kb, tea, methods=["hybrid", "semantic"], foreign=[space], foreign_count=2)
    assert report.info["foreign_questions"] == 2
    rows = report.info["reliability"]["hybrid"]  # 2 own and 2 foreign questions, at most 3 hits each
    assert rows and 4 <= sum(row["count"] for row in rows) <= 12
    assert all(0.0 <= row["mean_score"] <= 1.0 and 0.0 <= row["relevant"] <= 1.0 for row in rows)
    hybrid = report.methods["hybrid"]
    assert hybrid["abstention"] == 1.0  # no tea passage answers a question on planets
    assert report.info["abstention_by_origin"]["hybrid"] == {"space": 1.0}
    for method, scores in report.methods.items():
        assert 0.0 <= scores["abstention"] <= 1.0, method  # a cosine alone is weaker evidence
        assert scores["recall@10_at_threshold"] == scores["recall@10"] == 1.0
        assert 0.0 <= scores["ece"] <= 1.0


def test_calibrate_fits_every_kind_of_evidence_and_checks_each_set_left_out(tmp_path: Path) -> None:
    sets = [make_set(tmp_path / "sets" / "tea", TEA), make_set(tmp_path / "sets" / "space", SPACE)]
    out = tmp_path / "use.json"
    result = CliRunner().invoke(
        main,
        ["--home", str(tmp_path / "home"), "calibrate", *map(str, sets), "--embedding-model", "use",
         "--questions", "10", "--out", str(out), "--save", "--json"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    written = Calibration.from_json(json.loads(out.read_text(encoding="utf-8")))
    assert set(written.weights) == {"cosine+lexical", "cosine", "lexical"}
    assert sorted(written.fitted_on) == ["space", "tea"]
    assert set(report["held_out_ece"]) == {"space", "tea"}
    assert all(0.0 <= value <= 1.0 for errors in report["held_out_ece"].values() for value in errors.values())
    saved = tmp_path / "home" / "calibrations" / "use.json"  # where the home's searches read it
    assert report["written"] == [str(out), str(saved)]
    assert saved.read_text(encoding="utf-8") == out.read_text(encoding="utf-8")
