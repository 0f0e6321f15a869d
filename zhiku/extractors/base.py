"""The extractor contract and the small helpers every extractor shares.

An extractor turns one file into one or more :class:`~zhiku.core.documents.Document`.
Metadata keys used across formats: ``source`` (the file name, always), ``page`` (1-based),
``title``, ``sheet``, ``row`` (1-based, as a spreadsheet program shows it) and ``headings``
(the heading path of a section, outermost first).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from zhiku.core.documents import Document
from zhiku.core.errors import ExtractionError, ZhikuError


@runtime_checkable
class Extractor(Protocol):
    """Reads one file. Raises :class:`ExtractionError` naming the file and the reason."""

    def extract(self, source: Path | bytes, *, name: str) -> list[Document]:
        """``source`` is a path or the file's bytes; ``name`` is the file name shown to users."""
        ...


def read_bytes(source: Path | bytes, name: str) -> bytes:
    """The file's bytes; an unreadable path becomes an :class:`ExtractionError`."""
    if isinstance(source, bytes | bytearray | memoryview):
        return bytes(source)
    try:
        return Path(os.fspath(source)).read_bytes()
    except OSError as exc:
        raise ExtractionError(name, f"cannot read file: {exc.strerror or exc}") from exc


@contextmanager
def parser_errors(name: str, what: str) -> Iterator[None]:
    """Turn a parser's own exception into an ExtractionError that says which file and why.

    ``what`` names the format ("PDF", "DOCX") so the reason reads "invalid DOCX: ...".
    Typed zhiku errors pass through unchanged.
    """
    try:
        yield
    except ZhikuError:
        raise
    except Exception as exc:  # parsers of untrusted files raise anything; keep the reason
        detail = str(exc) or type(exc).__name__
        raise ExtractionError(name, f"invalid {what}: {detail}") from exc


def make_document(text: str, name: str, **metadata: Any) -> Document:
    """A Document with ``source`` set and ``None`` metadata values left out."""
    meta: dict[str, Any] = {"source": name}
    meta.update({k: v for k, v in metadata.items() if v is not None})
    return Document(text=text, metadata=meta)


def require_text(documents: list[Document], name: str, reason: str = "no text found") -> list[Document]:
    """Drop documents without text; raise if none is left (a silent empty result hides bugs)."""
    kept = [d for d in documents if d.text.strip()]
    if not kept:
        raise ExtractionError(name, reason)
    return kept
