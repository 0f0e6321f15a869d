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
from zhiku.extractors.budget import TREE_FORMATS, check_archive, check_elements, check_text, parsing
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
    """Read a file (a path or its bytes) into Documents; ``name`` is what errors and metadata show.

    The parse runs on the current :class:`~zhiku.extractors.budget.ParseBudget`: a file that
    would cost more raises :class:`~zhiku.extractors.budget.TooCostly` (or the zip-bomb
    ExtractionError), before parsing when the cost shows in the bytes, else when time runs out.
    """
    data = read_bytes(source, name)
    fmt = _format(name, data)  # once: sniffing reads up to 64 KB of the file
    with parsing(name, fmt) as budget:
        if fmt in ZIP_FORMATS:
            check_zip(data, name, budget.max_bytes)
            check_archive(data, name, fmt, budget)
        elif fmt in TREE_FORMATS:
            check_elements(data, name, fmt, budget)
        documents = extractors.create(fmt, prefer_installed=True).extract(data, name=name)
    return check_text(documents, name, fmt, budget)


def _format(name: str, head: bytes) -> str:
    if not head:
        raise ExtractionError(name, "empty file")
    fmt = detect_format(name, head)
    if fmt is None:
        raise UnsupportedFileType(name)
    return fmt
