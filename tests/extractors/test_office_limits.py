"""DOCX and PPTX on the element budget like HTML and EPUB: what the markup holds is counted before
parsing, what the parse makes of it while it runs, and a number the file merely states (a cell's
span) is never iterated."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.fixtures.make_files import make_docx, make_paragraphs_docx, make_pptx
from tests.fixtures.office_claims import listed_slide_pptx, spanning_cell_docx
from zhiku.core.documents import Document
from zhiku.extractors.budget import ParseBudget, TooCostly, parse_budget
from zhiku.extractors.dispatch import extract


def test_a_docx_of_more_elements_than_the_limit_is_refused(tmp_path: Path) -> None:
    source = make_docx(tmp_path / "long.docx", intro=[f"第{n}段" for n in range(2000)])
    with parse_budget(ParseBudget(max_elements=5000)), pytest.raises(TooCostly) as caught:
        extract(source, "long.docx")
    assert "DOCX too costly to parse" in str(caught.value), caught.value
    assert "parse_max_elements" in str(caught.value), caught.value
    assert extract(source, "long.docx")  # the default limit reads it


def test_a_pptx_of_more_elements_than_the_limit_is_refused(tmp_path: Path) -> None:
    source = make_pptx(tmp_path / "deck.pptx", [(f"第{n}页", "正文") for n in range(100)])
    with parse_budget(ParseBudget(max_elements=3000)), pytest.raises(TooCostly) as caught:
        extract(source, "deck.pptx")
    assert "PPTX too costly to parse" in str(caught.value), caught.value
    assert "parse_max_elements" in str(caught.value), caught.value


def test_a_pptx_listing_one_slide_thousands_of_times_stops_at_the_limit(tmp_path: Path) -> None:
    """4,000 listings are 6,500 elements of markup, under the limit, but 8,000 read elements."""
    source = listed_slide_pptx(tmp_path / "listed.pptx", times=4000)
    with parse_budget(ParseBudget(max_elements=7000)), pytest.raises(TooCostly) as caught:
        extract(source, "listed.pptx")
    assert "PPTX too costly to parse" in str(caught.value), caught.value
    assert "parse_max_elements" in str(caught.value), caught.value


def test_a_docx_cell_claiming_two_billion_columns_is_read_once(tmp_path: Path) -> None:
    """python-docx's ``row.cells`` yields a cell once per column it spans, with no checkpoint in
    between: this 2 KB file kept a worker busy for hours."""
    source = spanning_cell_docx(tmp_path / "span.docx", span=2_147_483_647)
    result: list[list[Document]] = []
    reader = threading.Thread(target=lambda: result.append(extract(source, "span.docx")), daemon=True)
    reader.start()
    reader.join(timeout=120)  # generous: it takes milliseconds; before, it never ended
    assert result, "the spanning cell was still being read"
    assert result[0][0].text.count("宽单元格") == 1, result[0][0].text
    assert "宽单元格 | 第二格" in result[0][0].text


def test_vertically_merged_cells_repeat_their_text_on_each_row(tmp_path: Path) -> None:
    rows = "".join(
        f"<w:tr><w:tc><w:tcPr>{merge}</w:tcPr><w:p><w:r><w:t>{first}</w:t></w:r></w:p></w:tc>"
        f"<w:tc><w:p><w:r><w:t>{second}</w:t></w:r></w:p></w:tc></w:tr>"
        for merge, first, second in (
            ('<w:vMerge w:val="restart"/>', "乌龙", "一级"),
            ("<w:vMerge/>", "", "二级"),
            ("<w:vMerge/>", "", "三级"),
        )
    )
    source = make_paragraphs_docx(tmp_path / "merged.docx", [f"<w:tbl>{rows}</w:tbl>"])
    [document] = extract(source, "merged.docx")
    assert document.text.splitlines() == ["乌龙 | 一级", "乌龙 | 二级", "乌龙 | 三级"]
