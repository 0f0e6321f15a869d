from __future__ import annotations

import io
import random
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.bounded import CountingToken, bounded
from tests.fixtures.make_files import make_epub
from zhiku.core.cancellation import cancellable
from zhiku.core.errors import Cancelled, ExtractionError
from zhiku.extractors.budget import TooCostly
from zhiku.extractors.dispatch import extract
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


def _epub(chapter_body: str, padding: int = 0) -> bytes:
    """A minimal EPUB (container, package, one chapter) written by hand; ``padding`` bytes of
    random data in a member nobody reads keep a repetitive chapter under the zip-bomb ratio."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        archive.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" '
            'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        archive.writestr(
            "content.opf",
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" '
            'unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
            '<dc:identifier id="id">bomb</dc:identifier><dc:title>空</dc:title>'
            "<dc:language>zh</dc:language></metadata><manifest>"
            '<item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/>'
            '<item id="pad" href="pad.bin" media-type="application/octet-stream"/>'
            '</manifest><spine><itemref idref="c1"/></spine></package>',
        )
        archive.writestr(
            "c1.xhtml",
            '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
            f"<head><title>c</title></head><body>{chapter_body}</body></html>",
        )
        archive.writestr("pad.bin", random.Random(7).randbytes(padding))
    return buffer.getvalue()


def test_a_chapter_of_many_empty_paragraphs_is_read_in_linear_time() -> None:
    """Marking lines by inserting beside each element cost bs4 a scan of its siblings: 20,000
    empty ``<p/>`` took a minute and a half, a million ran for hours."""
    data = _epub("<p>茶</p>" + "<p/>" * 100_000 + "<p>水</p>")
    docs = bounded(lambda: EpubExtractor().extract(data, name="empty.epub"))
    assert [d.text for d in docs] == ["茶\n水"]


def test_a_million_empty_paragraphs_are_refused_naming_the_limit() -> None:
    """The reported file: 65 KB, a million ``<p/>``, under the zip-bomb ratio."""
    data = _epub("<p>茶</p>" + "<p/>" * 1_000_000, padding=60_000)
    assert len(data) < 70_000
    with pytest.raises(TooCostly) as caught:
        bounded(lambda: extract(data, "empty.epub"))
    message = str(caught.value)
    assert "EPUB too costly to parse" in message and "parse_max_elements" in message, message


def test_the_chapter_walk_reaches_checkpoints() -> None:
    data = _epub("<p>茶</p>" * 20_000)
    token = CountingToken(after=5)
    with cancellable(token), pytest.raises(Cancelled):
        EpubExtractor().extract(data, name="long.epub")
    assert token.checks == 5
