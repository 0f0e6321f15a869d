"""``zhiku eval-answers`` asks real questions of a real index and scores the answers."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import Run
from tests.evaluation.test_runner import make_set


def test_eval_answers_on_a_tiny_set(run: Run, tmp_path: Path) -> None:
    root = make_set(tmp_path / "tiny")
    (root / "answers.jsonl").write_text(
        json.dumps({"_id": "q1", "answers": ["八十度"], "doc": "p1"}, ensure_ascii=False)
        + "\n"
        + json.dumps({"_id": "q2", "answers": ["four minutes"], "doc": "p2"})
        + "\n",
        encoding="utf-8",
    )
    report = json.loads(run("eval-answers", str(root), "--json").stdout)
    assert report["set"] == "tiny" and report["queries"] == 2 and report["answerer"] == "extractive"
    assert report["answer_contains"] == 1.0
    assert report["citation_precision"] == 1.0 and report["citation_recall"] == 1.0
