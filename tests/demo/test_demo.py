"""The demo with the real default embedding model: every bundled question finds its passage."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from zhiku import KnowledgeBase
from zhiku.demo import load_questions, run_demo
from zhiku.demo.runner import OFF_TOPIC

README = Path(__file__).parents[2] / "README.md"


@pytest.fixture(scope="module")
def demo_kb(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    with KnowledgeBase.open(tmp_path_factory.mktemp("demo")) as kb:
        lines: list[str] = []
        dataset = run_demo(kb, echo=lines.append)
        yield kb, dataset, lines


def test_demo_ingests_every_format(demo_kb) -> None:  # type: ignore[no-untyped-def]
    _kb, dataset, lines = demo_kb
    documents = {doc.name: doc for doc in dataset.documents()}
    assert {Path(name).suffix for name in documents} >= {".md", ".html", ".pdf", ".docx", ".csv"}
    assert all(doc.status == "completed" for doc in documents.values()), lines
    assert any("hybrid_search" in line for line in lines)


@pytest.mark.parametrize("item", load_questions(), ids=lambda item: item["question"][:20])
def test_each_question_finds_its_passage_in_top_3(demo_kb, item) -> None:  # type: ignore[no-untyped-def]
    _kb, dataset, _lines = demo_kb
    hits = dataset.search(item["question"], search_method="hybrid_search", top_k=3)
    normalise = lambda text: re.sub(r"\s+", "", text)  # noqa: E731 - PDF lines wrap mid-sentence
    assert any(
        hit.document_name == item["expected_file"]
        and normalise(item["expected_text"]) in normalise(hit.content)
        for hit in hits
    ), [(hit.document_name, hit.content[:60]) for hit in hits]


@pytest.mark.parametrize("question", OFF_TOPIC)
def test_an_off_topic_question_finds_nothing(demo_kb, question: str) -> None:  # type: ignore[no-untyped-def]
    """The default (hybrid) search abstains; one kind of evidence alone is weaker, so a
    single-method search may still show its best hits, scored low."""
    _kb, dataset, lines = demo_kb
    assert dataset.search(question) == []
    for method in ("semantic_search", "full_text_search", "keyword_search"):
        assert all(hit.score < 0.02 for hit in dataset.search(question, search_method=method)), method
    shown = lines[lines.index(f"Q: {question}") :][:20]
    assert shown[shown.index("  hybrid_search:") + 1] == "    (nothing relevant found)"


def test_readme_python_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    text = README.read_text(encoding="utf-8")
    example = re.search(r"### In Python\n\n```python\n(.*?)```", text, re.S)
    assert example, "README has no Python example"
    exec(compile(example.group(1), "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "completed" in out
    assert "## 会员计划" in out.splitlines()[1] and "茶艺课" in out
    assert out.splitlines()[-1] == "[]"  # the off-topic question finds nothing
