"""Sections: segments carry their heading path, datasets list them, and a search restricted to one
(and the sections under it) is answered inside every channel, before its top-k."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.make_files import make_docx
from zhiku import KnowledgeBase
from zhiku.core.errors import InvalidInput
from zhiku.extractors.markdown import MarkdownExtractor
from zhiku.knowledge_base.dataset import Dataset

CHANNELS = ["semantic_search", "full_text_search", "keyword_search", "hybrid_search"]
FILLER = "Every worker on the estate drinks green tea at the morning break and after lunch."

#: These tests look at what a search may return (sections, filters, terms), not at relevance:
#: their datasets keep every hit.
KEEP_ALL = {"score_threshold": None}


def _handbook() -> str:
    """Three levels of headings; every body mentions green tea, so any section may answer."""
    parts = ["# Handbook", "Green tea is served to every visitor of the handbook office."]
    for topic in ("Leave", "Pay", "Safety"):
        parts += [f"## {topic}", f"{topic} rules mention green tea breaks. {FILLER}"]
        for sub in ("Annual", "Special"):
            parts += [f"### {sub} {topic.lower()}", f"{sub} {topic.lower()}: green tea. {FILLER}"]
    return "\n\n".join(parts) + "\n"


#: Green tea everywhere in another document: without the restriction it competes for every place.
NOISE = "\n\n".join(
    f"# Tea garden {i}\n\nGreen tea green tea leaves, green tea garden {i}, green tea picked at dawn."
    for i in range(12)
)


def _deep(ds: Dataset) -> Any:
    """The dataset's pipeline, with Markdown cut at every heading down to level 3."""
    return dataclasses.replace(ds.pipeline(), extractor=MarkdownExtractor(split_level=3))


@pytest.fixture(scope="module")
def handbook_kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    knowledge_base = KnowledgeBase.open(tmp_path_factory.mktemp("sections") / "home", embedding_model="use")
    ds = knowledge_base.create_dataset("handbook", retrieval=KEEP_ALL)
    for name, text in (("handbook.md", _handbook()), ("gardens.md", NOISE)):
        doc = ds.add_text(name, text, pipeline=_deep(ds))
        assert doc.status == "completed", doc.error
    yield knowledge_base
    knowledge_base.close()


@pytest.fixture
def handbook(handbook_kb: KnowledgeBase) -> Dataset:
    """Read-only: the handbook (three levels) and twelve tea gardens (one level each)."""
    return handbook_kb.dataset("handbook")


def _sections(hits: list[Any]) -> list[str | None]:
    return [hit.metadata.get("section") for hit in hits]


def test_segments_carry_their_heading_path(handbook: Dataset) -> None:
    by_content = {s.content.splitlines()[0]: s.metadata.get("section") for s in handbook.segments()}
    assert by_content["# Handbook"] == "Handbook"
    assert by_content["## Leave"] == "Handbook > Leave"
    assert by_content["### Annual leave"] == "Handbook > Leave > Annual leave"
    assert by_content["### Special safety"] == "Handbook > Safety > Special safety"
    assert by_content["# Tea garden 3"] == "Tea garden 3"


def test_a_segment_without_headings_has_no_section(kb: KnowledgeBase) -> None:
    ds = kb.create_dataset("plain", retrieval=KEEP_ALL)
    ds.add_text("notes.txt", "Green tea is picked in spring.\n\nOolong is rolled and roasted.")
    ds.add_text("intro.md", "Text before any heading.\n\n# Later\n\nUnder a heading.\n")
    sections = {s.content: s.metadata.get("section") for s in ds.segments()}
    assert sections["Green tea is picked in spring.\n\nOolong is rolled and roasted."] is None
    assert sections["Text before any heading."] is None
    assert sections["# Later\n\nUnder a heading."] == "Later"
    assert [s.name for s in ds.sections()] == ["Later"]


def test_docx_headings_become_sections(kb: KnowledgeBase, tmp_path: Path) -> None:
    path = make_docx(
        tmp_path / "rules.docx",
        sections=[("Shipping", ["Orders ship the same day."]), ("Returns", ["Returns take a week."])],
    )
    ds = kb.create_dataset("rules", retrieval=KEEP_ALL)
    (doc,) = ds.add_files([path])
    assert doc.status == "completed", doc.error
    assert {s.name: s.segment_count for s in ds.sections()} == {"Returns": 1, "Shipping": 1}
    hits = ds.search("how long does it take", section="Returns")
    assert [h.content for h in hits] == ["# Returns\n\nReturns take a week."]


def test_the_dataset_lists_its_sections_with_counts(handbook: Dataset) -> None:
    listed = {s.name: s.segment_count for s in handbook.sections()}
    assert len(listed) == 1 + 3 + 6 + 12
    assert listed["Handbook > Leave > Annual leave"] == 1
    assert listed["Tea garden 0"] == 1
    assert [s.name for s in handbook.sections()] == sorted(listed)
    assert sum(listed.values()) == len(handbook.segments())


@pytest.mark.parametrize("method", CHANNELS)
def test_a_restricted_search_still_fills_top_k_in_every_channel(handbook: Dataset, method: str) -> None:
    # recall_k = top_k: a restriction applied after recall would keep only what the first 3 hold,
    # and the twelve gardens say "green tea" far more often than the handbook does
    hits = handbook.search("green tea garden", search_method=method, top_k=3, recall_k=3, section="Handbook")
    assert len(hits) == 3
    assert all(s is not None and s.startswith("Handbook") for s in _sections(hits))
    unrestricted = handbook.search("green tea garden", search_method=method, top_k=3, recall_k=3)
    assert any(s is not None and s.startswith("Tea garden") for s in _sections(unrestricted))


@pytest.mark.parametrize("method", CHANNELS)
def test_a_restriction_includes_the_sections_under_it_and_only_them(handbook: Dataset, method: str) -> None:
    hits = handbook.search("green tea", search_method=method, top_k=10, section="Handbook > Leave")
    assert sorted(_sections(hits)) == [
        "Handbook > Leave",
        "Handbook > Leave > Annual leave",
        "Handbook > Leave > Special leave",
    ]
    # whole steps only: "Tea garden 1" does not hold "Tea garden 10"
    one = handbook.search("green tea", search_method=method, top_k=10, section="Tea garden 1")
    assert _sections(one) == ["Tea garden 1"]
    assert handbook.search("green tea", search_method=method, section="Handbook > Lea") == []


def test_restrictions_are_normalized_and_checked(handbook: Dataset) -> None:
    hits = handbook.search("green tea", top_k=10, section="  Handbook>Pay >  Annual pay ")
    assert _sections(hits) == ["Handbook > Pay > Annual pay"]
    for bad in ("", " > ", 7):
        with pytest.raises((InvalidInput, ValueError), match="section"):
            handbook.search("green tea", section=bad)


def test_a_section_and_a_metadata_filter_both_apply(handbook: Dataset) -> None:
    where = {"conditions": [{"name": "document_name", "comparison_operator": "is", "value": "gardens.md"}]}
    handbook.metadata.set_builtin(True)
    try:
        assert handbook.search("green tea", section="Handbook", filter=where) == []
        hits = handbook.search("green tea", section="Tea garden 4", filter=where)
        assert _sections(hits) == ["Tea garden 4"]
    finally:
        handbook.metadata.set_builtin(False)


def test_descriptions_are_listed_with_the_sections(kb: KnowledgeBase) -> None:
    ds = kb.create_dataset("described", retrieval=KEEP_ALL)
    ds.add_text("guide.md", "# Guide\n\nRead me.\n\n## Install\n\nRun the installer.\n")
    described = ds.describe_section("Guide>Install", "  How to install the product. ")
    assert (described.name, described.segment_count) == ("Guide > Install", 1)
    assert described.description == "How to install the product."
    ds.describe_section("Upcoming", "Nothing indexed yet")
    listed = {s.name: (s.segment_count, s.description) for s in ds.sections()}
    assert listed == {
        "Guide": (1, None),
        "Guide > Install": (1, "How to install the product."),
        "Upcoming": (0, "Nothing indexed yet"),
    }
    ds.describe_section("Upcoming", None)
    ds.describe_section("Guide > Install", "")
    assert {s.name: s.description for s in ds.sections()} == {"Guide": None, "Guide > Install": None}
    with pytest.raises(InvalidInput, match="^name"):
        ds.describe_section(" ", "x")
    with pytest.raises(InvalidInput, match="^description"):
        ds.describe_section("Guide", "x" * 5000)


@pytest.mark.parametrize("method", CHANNELS)
def test_a_parent_child_dataset_restricts_its_children(kb: KnowledgeBase, method: str) -> None:
    rule = {"doc_form": "hierarchical_model", "max_tokens": 60, "chunk_overlap": 0, "child_max_tokens": 16}
    ds = kb.create_dataset("pc", process_rule=rule, retrieval=KEEP_ALL)
    ds.add_text("handbook.md", _handbook(), pipeline=_deep(ds))
    ds.add_text("gardens.md", NOISE, pipeline=_deep(ds))
    assert all(s.children for s in ds.segments(with_children=True))
    hits = ds.search("green tea garden", search_method=method, top_k=3, recall_k=3, section="Handbook > Pay")
    assert len(hits) == 3
    assert {s for s in _sections(hits)} <= {
        "Handbook > Pay",
        "Handbook > Pay > Annual pay",
        "Handbook > Pay > Special pay",
    }


def test_an_intents_section_restricts_the_answers_sources(handbook_kb: KnowledgeBase) -> None:
    config = {
        "answerer": "extractive",
        "condense": False,
        "intents": [{"name": "pay", "description": "Questions about pay", "section": "Handbook > Pay"}],
    }
    question = "When is green tea served?"
    answer = handbook_kb.ask(question, datasets=["handbook"], config=config, remember=False)
    assert answer.plan is not None and answer.plan.section == "Handbook > Pay"
    assert answer.sources
    assert all(s.metadata.get("section", "").startswith("Handbook > Pay") for s in answer.sources)
    unrestricted = handbook_kb.ask(
        question, datasets=["handbook"], config={"answerer": "extractive"}, remember=False
    )
    assert any(not s.metadata.get("section", "").startswith("Handbook > Pay") for s in unrestricted.sources)
