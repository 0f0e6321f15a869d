from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.make_files import make_pdf, make_scanned_pdf, make_truncated_pdf
from zhiku.core.errors import ExtractionError
from zhiku.extractors.pdf import PdfExtractor

PAGES = ["第一页：知识库检索\nKnowledge base retrieval", "第二页：向量数据库 vector store"]


def test_one_document_per_page_with_chinese(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "two.pdf", PAGES, title="测试文档")
    docs = PdfExtractor().extract(path, name="two.pdf")
    assert [d.text for d in docs] == PAGES
    assert [d.metadata for d in docs] == [
        {"source": "two.pdf", "page": 1, "title": "测试文档"},
        {"source": "two.pdf", "page": 2, "title": "测试文档"},
    ]


def test_blank_page_is_skipped_but_numbering_kept(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "gap.pdf", ["第一页内容", "", "第三页内容"])
    docs = PdfExtractor().extract(path.read_bytes(), name="gap.pdf")
    assert [(d.metadata["page"], d.text) for d in docs] == [(1, "第一页内容"), (3, "第三页内容")]


def test_encrypted(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "secret.pdf", PAGES, password="s3cret")
    with pytest.raises(ExtractionError, match=r"secret\.pdf: .*encrypted") as info:
        PdfExtractor().extract(path, name="secret.pdf")
    assert info.value.source == "secret.pdf"


def test_truncated(tmp_path: Path) -> None:
    path = make_truncated_pdf(tmp_path / "cut.pdf", PAGES)
    with pytest.raises(ExtractionError, match=r"cut\.pdf: corrupt or truncated PDF"):
        PdfExtractor().extract(path, name="cut.pdf")


def test_no_text_layer(tmp_path: Path) -> None:
    path = make_scanned_pdf(tmp_path / "scan.pdf")
    with pytest.raises(ExtractionError, match=r"scan\.pdf: no text layer \(scanned\?\)"):
        PdfExtractor().extract(path, name="scan.pdf")


def test_line_wraps_inside_chinese_sentences_are_joined() -> None:
    from zhiku.extractors.pdf import join_wrapped_cjk_lines

    text = "定制礼盒和特价商品不支\n持无理由退货。\n第二段从这里开始。\nEnglish line\nstays apart."
    assert join_wrapped_cjk_lines(text) == (
        "定制礼盒和特价商品不支持无理由退货。\n第二段从这里开始。\nEnglish line\nstays apart."
    )
