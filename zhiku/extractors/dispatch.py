"""Pick the extractor for a file and run it.

Every extractor is registered in the ``extractors`` registry under its format's name and
declares the file suffixes of that format and a content check (:class:`ExtractorFactory`). A
file goes to the extractor its suffix names when that extractor accepts its first bytes;
otherwise the built-in content sniffing (:mod:`zhiku.extractors.sniff`) decides. An installed
entry point ``extractors.<name>`` replaces the built-in extractor of that name, and one of a new
name adds a format (``extractors.rst`` with ``suffixes = (".rst",)``).
"""

from __future__ import annotations

import importlib
from pathlib import Path, PurePath
from typing import Protocol

from zhiku.core.documents import Document
from zhiku.core.errors import ConfigError, ExtractionError, UnsupportedFileType
from zhiku.core.registry import Registry
from zhiku.extractors.base import Extractor, read_bytes
from zhiku.extractors.budget import TREE_FORMATS, check_archive, check_elements, check_text, parsing
from zhiku.extractors.sniff import detect_format
from zhiku.extractors.zip_guard import ZIP_FORMATS, check_zip


class ExtractorFactory(Protocol):
    """The contract of the ``extractors`` registry, met by an extractor class: its file
    ``suffixes`` (lower case, with the dot), ``accepts(head)`` saying whether the first bytes
    (up to 64 KB, or the whole file) can be of this format, and a constructor taking nothing."""

    suffixes: tuple[str, ...]

    def accepts(self, head: bytes, /) -> bool: ...

    def __call__(self) -> Extractor: ...


extractors: Registry[ExtractorFactory] = Registry("extractors")


class _Builtin:
    """A built-in extractor, its module imported only when a file of its format is read."""

    def __init__(self, name: str, module: str, cls: str, suffixes: tuple[str, ...]) -> None:
        self._name, self._module, self._cls = name, module, cls
        self.suffixes = suffixes

    def accepts(self, head: bytes, /) -> bool:
        """Whether the built-in sniffing reads a file of this format's suffix as this format."""
        return detect_format(self._name, head) == self._name

    def __call__(self) -> Extractor:
        module = importlib.import_module(f"zhiku.extractors.{self._module}")
        extractor: Extractor = getattr(module, self._cls)()
        return extractor


for _name, _module, _cls, _suffixes in (
    ("txt", "txt", "TextExtractor", (".txt", ".text", ".log")),
    ("markdown", "markdown", "MarkdownExtractor", (".md", ".markdown")),
    ("html", "html", "HtmlExtractor", (".html", ".htm", ".xhtml")),
    ("pdf", "pdf", "PdfExtractor", (".pdf",)),
    ("docx", "docx", "DocxExtractor", (".docx",)),
    ("csv", "spreadsheet", "CsvExtractor", (".csv", ".tsv")),
    ("xlsx", "spreadsheet", "XlsxExtractor", (".xlsx", ".xlsm")),
    ("xls", "spreadsheet", "XlsExtractor", (".xls",)),
    ("pptx", "unstructured_formats", "PptxExtractor", (".pptx",)),
    ("eml", "eml", "EmlExtractor", (".eml",)),
    ("epub", "epub", "EpubExtractor", (".epub",)),
):
    extractors.add(_name, _Builtin(_name, _module, _cls, _suffixes))

BUILTIN_FORMATS = frozenset(extractors.names())


def _factory(fmt: str) -> ExtractorFactory:
    return extractors.factory(fmt, prefer_installed=True)


def only_builtin_or_installed() -> bool:
    """Whether every extractor registered in code is a built-in one (a process started afresh
    finds the same extractors: the built-ins and the installed entry points)."""
    return all(isinstance(extractors.factory(name), _Builtin) for name in extractors.names())


def suffix_formats() -> dict[str, str]:
    """Suffix → format name, from what each available extractor declares (an installed one
    replacing a built-in of its name declares its suffixes anew)."""
    table: dict[str, str] = {}
    for fmt in extractors.available():
        factory = _factory(fmt)
        suffixes = getattr(factory, "suffixes", None)
        if not isinstance(suffixes, tuple) or not all(isinstance(s, str) for s in suffixes):
            raise ConfigError(f"extractor {fmt!r} declares no suffixes (a tuple such as ('.rst',))")
        if not callable(getattr(factory, "accepts", None)):
            raise ConfigError(f"extractor {fmt!r} declares no content check (accepts(head) -> bool)")
        for suffix in suffixes:
            table.setdefault(suffix.lower(), fmt)
    return table


def file_format(name: str, head: bytes) -> str | None:
    """The format to read a file as (its suffix's, if that extractor accepts the bytes, else
    the built-in sniffing's choice), or None when no extractor can read it."""
    by_suffix = suffix_formats().get(PurePath(name).suffix.lower())
    if by_suffix is not None and _factory(by_suffix).accepts(head):
        return by_suffix
    return detect_format(by_suffix if by_suffix in BUILTIN_FORMATS else None, head)


def extractor_for(name: str, head: bytes) -> Extractor:
    """The extractor for a file, chosen by its suffix and its first bytes (or whole content).

    Raises ExtractionError(name, "empty file") for no bytes and UnsupportedFileType(name) when
    neither the suffix nor the content is a known format.
    """
    return _factory(_format(name, head))()


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
        documents = _factory(fmt)().extract(data, name=name)
    return check_text(documents, name, fmt, budget)


def _format(name: str, head: bytes) -> str:
    if not head:
        raise ExtractionError(name, "empty file")
    fmt = file_format(name, head)
    if fmt is None:
        raise UnsupportedFileType(name)
    return fmt
