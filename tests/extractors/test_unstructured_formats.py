from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.make_files import make_pptx
from zhiku.core.errors import ExtractionError
from zhiku.extractors.unstructured_formats import PptxExtractor


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


def test_corrupt_pptx() -> None:
    with pytest.raises(ExtractionError, match=r"x\.pptx: invalid PPTX"):
        PptxExtractor().extract(b"PK\x03\x04 broken", name="x.pptx")
