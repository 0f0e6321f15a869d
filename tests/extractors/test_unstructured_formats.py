from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.make_files import make_eml, make_pptx
from zhiku.core.errors import ExtractionError
from zhiku.extractors.unstructured_formats import EmlExtractor, PptxExtractor


def test_pptx_one_document_per_slide_with_notes(tmp_path: Path) -> None:
    path = make_pptx(
        tmp_path / "deck.pptx",
        [
            ("季度报告 Quarterly report", "收入增长了百分之二十。Revenue grew by twenty percent."),
            ("下一步计划", "扩大市场。"),
        ],
        notes={2: "讲者备注：强调市场。"},
    )
    docs = PptxExtractor().extract(path, name="deck.pptx")
    assert [d.metadata for d in docs] == [
        {"source": "deck.pptx", "page": 1, "title": "季度报告 Quarterly report"},
        {"source": "deck.pptx", "page": 2, "title": "下一步计划"},
    ]
    assert docs[0].text == (
        "季度报告 Quarterly report\n\n收入增长了百分之二十。Revenue grew by twenty percent."
    )
    assert "扩大市场。" in docs[1].text and "讲者备注：强调市场。" in docs[1].text


def test_eml_subject_and_html_body(tmp_path: Path) -> None:
    path = make_eml(
        tmp_path / "notice.eml",
        subject="会议通知 Meeting",
        text="大家好，明天上午十点开会。",
        html="<html><body><p>大家好，明天上午十点开会。</p><table><tr><td>地点</td><td>三楼</td></tr>"
        "</table></body></html>",
    )
    [doc] = EmlExtractor().extract(path, name="notice.eml")
    assert doc.text.startswith("会议通知 Meeting\n\n大家好，明天上午十点开会。")
    assert "地点 | 三楼" in doc.text
    assert doc.metadata == {
        "source": "notice.eml",
        "title": "会议通知 Meeting",
        "sent_from": ["alice@example.com"],
        "sent_to": ["bob@example.com"],
    }


def test_eml_plain_only(tmp_path: Path) -> None:
    path = make_eml(tmp_path / "p.eml", subject="纯文本", text="只有纯文本正文。\n第二行。")
    [doc] = EmlExtractor().extract(path, name="p.eml")
    assert "只有纯文本正文。" in doc.text and "第二行。" in doc.text


def test_corrupt_pptx() -> None:
    with pytest.raises(ExtractionError, match=r"x\.pptx: invalid PPTX"):
        PptxExtractor().extract(b"PK\x03\x04 broken", name="x.pptx")
