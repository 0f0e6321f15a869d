from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fixtures.make_files import make_docx, make_pdf, make_text, make_xls, make_xlsx
from zhiku.core.documents import Document
from zhiku.core.errors import ExtractionError, UnsupportedFileType
from zhiku.extractors import Extractor, extract, extractor_for, extractors
from zhiku.extractors.docx import DocxExtractor
from zhiku.extractors.eml import EmlExtractor
from zhiku.extractors.html import HtmlExtractor
from zhiku.extractors.markdown import MarkdownExtractor
from zhiku.extractors.spreadsheet import CsvExtractor, XlsExtractor, XlsxExtractor
from zhiku.extractors.txt import TextExtractor


def test_pdf_named_txt_is_read_as_pdf(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "report.txt", ["伪装成文本的 PDF"])
    [doc] = extract(path, "report.txt")
    assert doc.text == "伪装成文本的 PDF"
    assert doc.metadata["page"] == 1


def test_pdf_header_after_junk_is_trusted_with_pdf_suffix(tmp_path: Path) -> None:
    data = b"garbage-before-header\n" + make_pdf(tmp_path / "a.pdf", ["前置垃圾之后的 PDF"]).read_bytes()
    assert extract(data, "junk.pdf")[0].text == "前置垃圾之后的 PDF"


def test_text_named_pdf_is_read_as_text() -> None:
    [doc] = extract("其实是纯文本。".encode("gbk"), "fake.pdf")
    assert doc.text == "其实是纯文本。"


def test_office_formats_by_content_whatever_the_name(tmp_path: Path) -> None:
    docx = make_docx(tmp_path / "a.docx", sections=[("标题", ["正文"])]).read_bytes()
    xlsx = make_xlsx(tmp_path / "a.xlsx", {"s": [["h"], ["v"]]}).read_bytes()
    xls = make_xls(tmp_path / "a.xls", {"s": [["h"], ["v"]]}).read_bytes()
    assert isinstance(extractor_for("upload.bin", docx), DocxExtractor)
    assert isinstance(extractor_for("upload", xlsx), XlsxExtractor)
    assert isinstance(extractor_for("upload.dat", xls), XlsExtractor)
    # the first kilobytes of a zip are enough: member names sit in the local headers
    assert isinstance(extractor_for("upload", docx[:4096]), DocxExtractor)


@pytest.mark.parametrize(
    ("name", "head", "expected"),
    [
        ("page", b"<!DOCTYPE html><html><p>x</p></html>", HtmlExtractor),
        ("notes.md", "# 标题".encode(), MarkdownExtractor),
        ("data.csv", b"a,b\n1,2\n", CsvExtractor),
        ("readme", "说明文字".encode("gbk"), TextExtractor),
        ("config.json", b'{"a": 1}', TextExtractor),
        ("pdf-notes.md", "# 格式\n\n文件以 %PDF-1.7 开头。".encode(), MarkdownExtractor),
        ("message", b"From: a@example.com\nTo: b@example.com\nSubject: hi\n\nbody", EmlExtractor),
    ],
)
def test_text_formats(name: str, head: bytes, expected: type) -> None:
    assert isinstance(extractor_for(name, head), expected)


def test_zero_byte_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.pdf"
    path.write_bytes(b"")
    with pytest.raises(ExtractionError, match=r"empty\.pdf: empty file"):
        extract(path, "empty.pdf")


def test_unknown_extension_with_binary_content() -> None:
    with pytest.raises(UnsupportedFileType, match=r"image\.xyz"):
        extract(bytes(range(256)) * 16, "image.xyz")


def test_unknown_zip_is_unsupported(tmp_path: Path) -> None:
    import zipfile

    path = tmp_path / "archive.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data/file.bin", b"\x00\x01")
    with pytest.raises(UnsupportedFileType, match=r"archive\.zip"):
        extract(path, "archive.zip")


def test_binary_garbage_named_txt_reports_not_text() -> None:
    with pytest.raises(ExtractionError, match=r"noise\.txt: not text"):
        extract(os.urandom(2048), "noise.txt")


def test_utf16_text_without_suffix(tmp_path: Path) -> None:
    path = make_text(tmp_path / "notes", "UTF-16 文本，没有字节顺序标记。", encoding="utf-16-le")
    assert extract(path, "notes")[0].text == "UTF-16 文本，没有字节顺序标记。"


def test_registry_holds_every_format_and_accepts_replacements() -> None:
    assert set(extractors.names()) >= {
        "txt",
        "markdown",
        "html",
        "pdf",
        "docx",
        "csv",
        "xlsx",
        "xls",
        "pptx",
        "eml",
        "epub",
    }
    assert all(isinstance(extractors.factory(n)(), Extractor) for n in ("txt", "pdf", "csv"))

    class Shouting:
        suffixes = (".txt",)

        @staticmethod
        def accepts(head: bytes) -> bool:
            return True

        def extract(self, source: Path | bytes, *, name: str) -> list[Document]:
            return [Document(text="LOUD", metadata={"source": name})]

    original = extractors.factory("txt")
    extractors.add("txt", Shouting)
    try:
        assert extract(b"quiet", "a.txt")[0].text == "LOUD"
    finally:
        extractors.add("txt", original)


def test_a_registered_format_is_chosen_by_its_suffix_when_its_content_check_accepts() -> None:
    class Restructured:
        """Reads ``.rst`` files whose first line is not blank."""

        suffixes = (".rst", ".rest")

        @staticmethod
        def accepts(head: bytes) -> bool:
            return not head.startswith(b"\n")

        def extract(self, source: Path | bytes, *, name: str) -> list[Document]:
            return [Document(text="rst", metadata={"source": name})]

    extractors.add("rst", Restructured)
    try:
        assert extract(b"Title\n=====\n", "guide.rst")[0].text == "rst"
        assert extract(b"Title\n=====\n", "GUIDE.REST")[0].text == "rst"
        # refused by its check: the text reader reads it
        assert extract(b"\nplain words", "guide.rst")[0].text.strip() == "plain words"
    finally:
        extractors._factories.pop("rst")


def test_importing_the_package_loads_no_parser() -> None:
    import subprocess
    import sys

    code = (
        "import sys, zhiku.extractors, zhiku.cleaners;"
        "heavy = ('pypdfium2', 'docx', 'openpyxl', 'xlrd', 'bs4', 'unstructured', 'ebooklib',"
        " 'charset_normalizer', 'markdown_it');"
        "print([m for m in heavy if m in sys.modules])"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=True)
    assert out.stdout.strip() == "[]"
