"""Split on a separator the user chose, like Dify's "custom" segmentation rule."""

from __future__ import annotations

import re
from collections.abc import Sequence

from zhiku.core.documents import Chunk, Document
from zhiku.core.errors import ConfigError
from zhiku.splitters.base import SplitText, check_sizes, chunk_documents
from zhiku.splitters.length import LengthFunction, TiktokenLength
from zhiku.splitters.recursive import DEFAULT_SEPARATORS, RecursiveSplitter

__all__ = ["FixedSeparatorSplitter", "unescape_separator"]

_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\"}
_ESCAPE = re.compile(r"\\([nrt\\])")


def unescape_separator(separator: str) -> str:
    r"""Turn the escapes a form field carries (``\n``, ``\r``, ``\t``, ``\\``) into characters.

    Only those four are decoded, so a separator such as "。" or "***" passes unchanged.
    """
    return _ESCAPE.sub(lambda match: _ESCAPES[match.group(1)], separator)


class FixedSeparatorSplitter:
    r"""One chunk per piece between ``separator``s; a piece over ``max_tokens`` is split further.

    - ``separator`` may be given escaped, as typed in a form (``"\\n"`` means a newline). It is
      a delimiter: it is removed, not kept in either chunk.
    - Pieces are never merged across the separator, however small: the user put the boundary
      there on purpose (one FAQ entry, one record per chunk). For the same reason there is no
      overlap across it.
    - A piece longer than ``max_tokens`` goes through :class:`RecursiveSplitter` with the same
      ``max_tokens``, ``chunk_overlap``, ``length`` and ``separators``, so the limit always holds
      (see its docstring for the one exception, flagged ``oversized``).

    Raises :class:`~zhiku.core.errors.ConfigError` for an empty separator or bad sizes.
    """

    def __init__(
        self,
        separator: str = "\n\n",
        max_tokens: int = 500,
        chunk_overlap: int = 50,
        length: LengthFunction | None = None,
        separators: Sequence[str | tuple[str, ...]] = DEFAULT_SEPARATORS,
    ) -> None:
        check_sizes(max_tokens, chunk_overlap)
        self.separator = unescape_separator(separator)
        if not self.separator:
            raise ConfigError("the fixed separator must not be empty")
        self.max_tokens = max_tokens
        self.chunk_overlap = chunk_overlap
        self.length: LengthFunction = length if length is not None else TiktokenLength()
        self._recursive = RecursiveSplitter(max_tokens, chunk_overlap, separators, self.length)

    def split(self, documents: list[Document]) -> list[Chunk]:
        return chunk_documents(documents, self.split_text)

    def split_text(self, text: str) -> list[SplitText]:
        """The chunks of one text, stripped, with their real token counts."""
        chunks: list[SplitText] = []
        for part in text.split(self.separator):
            content = part.strip()
            if not content:
                continue
            count = self.length(content)
            if count <= self.max_tokens:
                chunks.append(SplitText(content, count))
            else:
                chunks.extend(self._recursive.split_text(content))
        return chunks
