"""Every parse on a budget: archives checked for ratio and total at any size, trees of markup
estimated before they are built, and a parse past its seconds ended as "too costly"."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.fixtures.make_files import make_docx, make_empty_paragraphs_docx, make_noise_docx
from zhiku.core.documents import Document
from zhiku.core.errors import ExtractionError
from zhiku.extractors.budget import ParseBudget, TooCostly, check_text, parse_budget
from zhiku.extractors.dispatch import extract
from zhiku.extractors.docx import DocxExtractor
from zhiku.extractors.zip_guard import check_zip


def test_a_small_zip_with_a_bomb_ratio_is_refused(tmp_path: Path) -> None:
    """4 KB inflating to 2.4 MB was waved through: the ratio was checked above 10 MB only."""
    bomb = make_empty_paragraphs_docx(tmp_path / "empty.docx", 400_000)
    assert bomb.stat().st_size < 10_000
    with pytest.raises(ExtractionError, match="zip bomb"):
        extract(bomb, "empty.docx")


def test_the_inflated_total_follows_the_budget(tmp_path: Path) -> None:
    data = make_docx(tmp_path / "ok.docx", intro=["正常的文档"]).read_bytes()
    check_zip(data, "ok.docx")
    with pytest.raises(ExtractionError, match="zip bomb"):
        check_zip(data, "ok.docx", max_bytes=1000)


def test_markup_of_millions_of_elements_is_refused_before_it_is_parsed() -> None:
    html = b"<html><body>" + b"<i>" * 2_000_000 + b"tea</body></html>"
    started = time.monotonic()
    with pytest.raises(TooCostly, match="HTML too costly to parse .*parse_max_mb"):
        extract(html, "elements.html")
    assert time.monotonic() - started < 5


def test_an_ordinary_document_fits_the_default_budget(tmp_path: Path) -> None:
    documents = extract(make_docx(tmp_path / "a.docx", intro=["普洱茶的存放"]), "a.docx")
    assert "普洱茶" in documents[0].text


def test_a_parse_past_its_seconds_ends_too_costly(tmp_path: Path) -> None:
    """Random text compresses like a real document (no bomb ratio) and takes ~15 s to parse
    (its 600,000 elements are over the default ``max_elements``, raised here)."""
    source = make_noise_docx(tmp_path / "noise.docx", 200_000)
    started = time.monotonic()
    budget = ParseBudget(seconds=1.0, max_elements=10_000_000)
    with parse_budget(budget), pytest.raises(TooCostly) as caught:
        extract(source, "noise.docx")
    elapsed = time.monotonic() - started
    assert "DOCX too costly to parse" in str(caught.value) and "parse_time_limit" in str(caught.value)
    assert elapsed < 8, elapsed  # lxml builds the tree in one call; the paragraph loop stops


def test_extracted_text_over_the_budget_is_refused() -> None:
    documents = [Document(text="茶" * 2048, metadata={})]
    with pytest.raises(TooCostly, match="TXT too costly"):
        check_text(documents, "big.txt", "txt", ParseBudget(max_mb=0.001))


def test_docx_style_lookups_do_not_grow_with_the_paragraphs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """python-docx's ``Paragraph.style`` searches the styles part each time (~200 µs a
    paragraph: 400,000 empty ones took minutes); the extractor maps style ids once instead."""
    from docx.text.paragraph import Paragraph

    source = make_docx(tmp_path / "h.docx", intro=["引言"], sections=[("冲泡", ["水温九十度"])])

    def no_lookup(_: Paragraph) -> None:
        raise AssertionError("per-paragraph style lookup")

    monkeypatch.setattr(Paragraph, "style", property(no_lookup))
    documents = DocxExtractor().extract(source, name="h.docx")
    assert any(document.metadata.get("headings") == ["冲泡"] for document in documents), documents
