"""Whole-document splitting: the parents of a ``full-doc`` parent-child index.

A file's extracted documents (PDF pages, Markdown sections) are joined into one text, so the
parent is the file itself; a file longer than ``max_tokens`` becomes several parents of at most
that many tokens (cut recursively), rather than one truncated parent as Dify makes.
"""

from __future__ import annotations

from zhiku.core.documents import Chunk, Document
from zhiku.splitters.length import LengthFunction
from zhiku.splitters.recursive import RecursiveSplitter

#: Dify's limit on a full-doc parent, in tokens.
FULL_DOC_MAX_TOKENS = 10_000

#: Per-part metadata that no longer describes a joined whole.
_PART_KEYS = ("page", "headings", "section", "title")


class WholeDocumentSplitter:
    """Documents → one chunk per ``max_tokens`` tokens of their joined text."""

    def __init__(self, max_tokens: int = FULL_DOC_MAX_TOKENS, length: LengthFunction | None = None) -> None:
        self._splitter = RecursiveSplitter(max_tokens=max_tokens, chunk_overlap=0, length=length)

    def split(self, documents: list[Document]) -> list[Chunk]:
        texts = [document.text for document in documents if document.text.strip()]
        if not texts:
            return []
        metadata = {k: v for k, v in documents[0].metadata.items() if k not in _PART_KEYS}
        return self._splitter.split([Document("\n\n".join(texts), metadata)])
