from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.make_files import make_epub
from zhiku.core.errors import ExtractionError
from zhiku.extractors.epub import EpubExtractor


def test_one_document_per_chapter(tmp_path: Path) -> None:
    path = make_epub(
        tmp_path / "book.epub",
        title="山中故事",
        chapters=[
            ("第一章 开始", "<p>从前有一座山。</p><p>Once upon a time.</p>"),
            ("第二章", "<table><tr><td>山</td><td>庙</td></tr></table>"),
        ],
    )
    docs = EpubExtractor().extract(path, name="book.epub")
    assert [d.text for d in docs] == [
        "第一章 开始\n从前有一座山。\nOnce upon a time.",
        "第二章\n山 | 庙",
    ]
    assert [d.metadata for d in docs] == [
        {"source": "book.epub", "title": "山中故事", "chapter": 1, "headings": ["第一章 开始"]},
        {"source": "book.epub", "title": "山中故事", "chapter": 2, "headings": ["第二章"]},
    ]


def test_not_an_epub() -> None:
    with pytest.raises(ExtractionError, match=r"x\.epub: invalid EPUB"):
        EpubExtractor().extract(b"PK\x03\x04 broken", name="x.epub")
