"""Plain text files in any common encoding (see :mod:`zhiku.extractors.encoding`)."""

from __future__ import annotations

from pathlib import Path

from zhiku.core.documents import Document
from zhiku.extractors.base import make_document, read_bytes, require_text
from zhiku.extractors.encoding import decode_text


class TextExtractor:
    """One Document with the whole decoded text; ``\\r\\n`` and ``\\r`` become ``\\n``."""

    def extract(self, source: Path | bytes, *, name: str) -> list[Document]:
        text, _ = decode_text(read_bytes(source, name), name)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        return require_text([make_document(text, name)], name, "no text (only whitespace)")
