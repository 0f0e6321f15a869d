"""The splitter contract and the step every splitter shares: texts → numbered chunks."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple, Protocol

from zhiku.core.documents import Chunk, Document
from zhiku.core.errors import ConfigError
from zhiku.core.sections import SECTION_KEY, section_path

__all__ = ["SplitText", "TextSplitter", "chunk_documents", "check_sizes"]


class TextSplitter(Protocol):
    """Cuts documents into chunks of at most a number of tokens."""

    def split(self, documents: list[Document]) -> list[Chunk]:
        """Chunks of all ``documents`` in order.

        ``Chunk.position`` is 0-based across the whole list; ``Chunk.metadata`` is a copy of its
        document's metadata, with ``section`` (the heading path) when the document has
        ``headings``; ``Chunk.tokens`` is the splitter's length function on the content.
        """
        ...


class SplitText(NamedTuple):
    """One chunk's text before it is numbered: stripped content and its real token count."""

    content: str
    tokens: int
    oversized: bool = False


def chunk_documents(documents: list[Document], split_text: Callable[[str], list[SplitText]]) -> list[Chunk]:
    """Number the pieces ``split_text`` makes of each document and give them its metadata.

    A piece flagged ``oversized`` gets ``metadata["oversized"] = True``; a document with
    ``headings`` gives its pieces ``metadata["section"]``, the headings joined into one path,
    which search can be restricted to (:mod:`zhiku.core.sections`).
    """
    chunks: list[Chunk] = []
    for document in documents:
        section = section_path(document.metadata.get("headings"))
        for piece in split_text(document.text):
            metadata = dict(document.metadata)
            if section is not None:
                metadata[SECTION_KEY] = section
            if piece.oversized:
                metadata["oversized"] = True
            chunks.append(
                Chunk(content=piece.content, position=len(chunks), tokens=piece.tokens, metadata=metadata)
            )
    return chunks


def check_sizes(max_tokens: int, chunk_overlap: int) -> None:
    """Raise :class:`ConfigError` unless ``1 <= max_tokens`` and ``0 <= chunk_overlap < max_tokens``."""
    if max_tokens < 1:
        raise ConfigError(f"max_tokens must be at least 1, got {max_tokens}")
    if not 0 <= chunk_overlap < max_tokens:
        raise ConfigError(
            f"chunk_overlap must be in [0, max_tokens), got {chunk_overlap} with max_tokens={max_tokens}"
        )
