"""Pick the extractor for a file and run it.

Formats are registered in the ``extractors`` registry under the names used by
:mod:`zhiku.extractors.sniff`; registering another factory under a name (or adding a plugin
through the ``zhiku.plugins`` entry point group as ``extractors.<name>``) replaces the built-in.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

from zhiku.core.documents import Document
from zhiku.core.errors import ExtractionError, UnsupportedFileType
from zhiku.core.registry import Registry
from zhiku.extractors.base import Extractor, read_bytes
from zhiku.extractors.sniff import detect_format
from zhiku.extractors.zip_guard import ZIP_FORMATS, check_zip

extractors: Registry[Extractor] = Registry("extractors")


def _lazy(module: str, cls: str) -> Callable[..., Extractor]:
    """A factory that imports the extractor's module only when it is first used."""

    def create(**options: object) -> Extractor:
        factory: Callable[..., Extractor] = getattr(
            importlib.import_module(f"zhiku.extractors.{module}"), cls
        )
        return factory(**options)

    create.__qualname__ = cls
    return create


for _name, _module, _cls in (
    ("txt", "txt", "TextExtractor"),
    ("markdown", "markdown", "MarkdownExtractor"),
    ("html", "html", "HtmlExtractor"),
    ("pdf", "pdf", "PdfExtractor"),
    ("docx", "docx", "DocxExtractor"),
    ("csv", "spreadsheet", "CsvExtractor"),
    ("xlsx", "spreadsheet", "XlsxExtractor"),
    ("xls", "spreadsheet", "XlsExtractor"),
    ("pptx", "unstructured_formats", "PptxExtractor"),
    ("eml", "unstructured_formats", "EmlExtractor"),
    ("epub", "epub", "EpubExtractor"),
):
    extractors.add(_name, _lazy(_module, _cls))


def extractor_for(name: str, head: bytes) -> Extractor:
    """The extractor for a file, chosen by its suffix and its first bytes (or whole content).

    Raises ExtractionError(name, "empty file") for no bytes and UnsupportedFileType(name) when
    neither the suffix nor the content is a known format.
    """
    return extractors.create(_format(name, head), prefer_installed=True)


def extract(source: Path | bytes, name: str) -> list[Document]:
    """Read a file (a path or its bytes) into Documents; ``name`` is what errors and metadata show."""
    data = read_bytes(source, name)
    fmt = _format(name, data)  # once: sniffing reads up to 64 KB of the file
    if fmt in ZIP_FORMATS:
        check_zip(data, name)
    return extractors.create(fmt, prefer_installed=True).extract(data, name=name)


def _format(name: str, head: bytes) -> str:
    if not head:
        raise ExtractionError(name, "empty file")
    fmt = detect_format(name, head)
    if fmt is None:
        raise UnsupportedFileType(name)
    return fmt
