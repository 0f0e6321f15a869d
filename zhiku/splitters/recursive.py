"""Recursive splitting: paragraphs, then lines, then sentences (Chinese and English), then words.

The text is cut at the first separator it contains; any piece still longer than ``max_tokens`` is
cut at the next separator, and so on; a run no separator splits is cut between characters. The
pieces are then merged greedily into chunks of at most ``max_tokens`` tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

from zhiku.core.documents import Chunk, Document
from zhiku.splitters.base import SplitText, check_sizes, chunk_documents
from zhiku.splitters.length import LengthFunction, TiktokenLength

__all__ = ["DEFAULT_SEPARATORS", "RecursiveSplitter"]

#: Coarsest first. Sentence ends come before clause marks; ". " (with its space) so that
#: "3.14" and "e.g." inside a word stay whole.
DEFAULT_SEPARATORS: tuple[str, ...] = (
    "\n\n",
    "\n",
    "。",
    "！",
    "？",
    "；",
    "…",
    "!",
    "?",
    ";",
    ". ",
    "，",
    "、",
    "：",
    ",",
    " ",
)

_Piece = tuple[str, int]  # text and its token count


def _split_keeping(text: str, separator: str) -> list[str]:
    """Split after each ``separator``, which stays at the end of the piece before it.

    Whitespace-only pieces (runs of blank lines) are glued to the piece before them, so that
    joining the result gives back ``text`` exactly.
    """
    parts = text.split(separator)
    pieces: list[str] = []
    for index, part in enumerate(parts):
        piece = part + separator if index < len(parts) - 1 else part
        if not piece:
            continue
        if pieces and not piece.strip():
            pieces[-1] += piece
        else:
            pieces.append(piece)
    return pieces


class RecursiveSplitter:
    """Chunks of at most ``max_tokens`` tokens, cut at the coarsest separator that works.

    - ``max_tokens`` and ``chunk_overlap`` count tokens of ``length`` (default: tiktoken
      cl100k_base, loaded when the splitter is built).
    - A separator stays attached to the end of the piece before it, so Chinese sentences keep
      their "。"; chunks are stripped and whitespace-only chunks dropped.
    - Overlap: a chunk starts with the last whole pieces of the previous chunk that total at most
      ``chunk_overlap`` tokens (never the whole previous chunk, never pushing the chunk past
      ``max_tokens``). Pieces bigger than ``chunk_overlap`` give no overlap.
    - Each piece is counted once and merges are sized by the sum of counts; since tokens can merge
      across a boundary, every chunk is then counted for real and shrunk if over.
    - A chunk exceeds ``max_tokens`` only when a single character alone takes more tokens than
      ``max_tokens`` (e.g. ``max_tokens=1`` and a CJK character that is 2 tokens); that chunk is
      that one character and carries ``metadata["oversized"] = True``.

    Raises :class:`~zhiku.core.errors.ConfigError` for ``max_tokens < 1`` or an overlap outside
    ``[0, max_tokens)``.
    """

    def __init__(
        self,
        max_tokens: int = 500,
        chunk_overlap: int = 50,
        separators: Sequence[str] = DEFAULT_SEPARATORS,
        length: LengthFunction | None = None,
    ) -> None:
        check_sizes(max_tokens, chunk_overlap)
        self.max_tokens = max_tokens
        self.chunk_overlap = chunk_overlap
        self.separators = tuple(s for s in separators if s)
        self.length: LengthFunction = length if length is not None else TiktokenLength()

    def split(self, documents: list[Document]) -> list[Chunk]:
        return chunk_documents(documents, self.split_text)

    def split_text(self, text: str) -> list[SplitText]:
        """The chunks of one text, stripped, with their real token counts."""
        return self._merge(self._pieces(text, 0, None))

    def _pieces(self, text: str, level: int, tokens: int | None) -> list[_Piece]:
        """Pieces of ``text`` of at most ``max_tokens`` each (by their own count), in order."""
        for index in range(level, len(self.separators)):
            separator = self.separators[index]
            if separator not in text:
                continue
            pieces: list[_Piece] = []
            for part in _split_keeping(text, separator):
                count = self.length(part)
                if count <= self.max_tokens:
                    pieces.append((part, count))
                else:
                    pieces.extend(self._pieces(part, index + 1, count))
            return pieces
        return self._cut(text, tokens)

    def _cut(self, text: str, tokens: int | None) -> list[_Piece]:
        """Cut a run no separator splits between characters, each part counted (stripped) ≤ max.

        The longest fitting prefix is found by galloping from an estimate then bisecting, so a
        part costs about a dozen counts of at most ``2 * max_tokens`` tokens. A part is a single
        character, over the limit, only when that character alone is.
        """
        limit = self.max_tokens
        total = tokens if tokens is not None else self.length(text)
        step = max(1, limit * len(text) // max(1, total))
        pieces: list[_Piece] = []
        start = 0
        while start < len(text):
            remaining = len(text) - start
            fits, fits_count, over = 0, 0, remaining + 1
            probe = min(step, remaining)
            while True:  # gallop: find a size that is over, or the end of the text
                count = self.length(text[start : start + probe].strip())
                if count > limit:
                    over = probe
                    break
                fits, fits_count = probe, count
                if probe == remaining:
                    break
                probe = min(remaining, probe + max(1, probe // 4))
            while over - fits > 1 and fits < remaining:
                middle = (fits + over) // 2
                count = self.length(text[start : start + middle].strip())
                if count > limit:
                    over = middle
                else:
                    fits, fits_count = middle, count
            if fits == 0:  # one character alone is over the limit
                fits, fits_count = 1, self.length(text[start : start + 1].strip())
            pieces.append((text[start : start + fits], fits_count))
            start += fits
        return pieces

    def _merge(self, pieces: list[_Piece]) -> list[SplitText]:
        """Greedy merge with overlap; every chunk is verified with one real count."""
        limit = self.max_tokens
        chunks: list[SplitText] = []
        overlap: list[_Piece] = []
        index = 0
        while index < len(pieces):
            current = list(overlap)
            total = sum(count for _, count in current)
            while current and total + pieces[index][1] > limit:
                total -= current.pop(0)[1]
            kept = len(current)
            current.append(pieces[index])  # at least one new piece per chunk
            total += pieces[index][1]
            index += 1
            while index < len(pieces) and total + pieces[index][1] <= limit:
                current.append(pieces[index])
                total += pieces[index][1]
                index += 1
            content = "".join(text for text, _ in current).strip()
            count = self.length(content)
            while count > limit and len(current) > 1:
                if kept:  # drop overlap first
                    current.pop(0)
                    kept -= 1
                else:  # hand the last piece to the next chunk
                    current.pop()
                    index -= 1
                content = "".join(text for text, _ in current).strip()
                count = self.length(content)
            if count > limit:
                parts = self._cut(content, count)
                if len(parts) > 1:  # its own count fitted but the stripped text does not
                    pieces[index - 1 : index] = parts
                    index -= 1
                    overlap = []
                    continue
            if content:
                chunks.append(SplitText(content, count, count > limit))
            overlap = self._overlap(current)
        return chunks

    def _overlap(self, chunk: list[_Piece]) -> list[_Piece]:
        """The last pieces of ``chunk`` (not all of it) totalling at most ``chunk_overlap``."""
        total = 0
        start = len(chunk)
        while start > 1 and total + chunk[start - 1][1] <= self.chunk_overlap:
            start -= 1
            total += chunk[start][1]
        return chunk[start:]
