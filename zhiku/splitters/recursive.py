"""Recursive splitting: paragraphs, lines, sentences (Chinese and English), clauses, words.

The text is cut at the first level of separators it contains; any piece still longer than
``max_tokens`` is cut at the next level, and so on; a run no separator splits is cut between
characters. The pieces are then merged greedily into chunks of at most ``max_tokens`` tokens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from zhiku.core.cancellation import checkpoint
from zhiku.core.documents import Chunk, Document
from zhiku.splitters.base import SplitText, check_sizes, chunk_documents
from zhiku.splitters.length import LengthFunction, TiktokenLength

__all__ = ["DEFAULT_SEPARATORS", "RecursiveSplitter"]

#: Coarsest first; a tuple is one level whose separators rank equally (any sentence end).
#: ". " keeps its space so that "3.14" and "e.g." stay whole.
DEFAULT_SEPARATORS: tuple[str | tuple[str, ...], ...] = (
    "\n\n",
    "\n",
    ("。", "！", "？", "；", "…", "!", "?", ";", ". "),
    ("，", "、", "：", ","),
    " ",
)

#: Closing quotes and brackets stay with the separator before them: 他说：“好。”|然后
_CLOSERS = "[”’」』》）)]*"

_Piece = tuple[str, int]  # text and its token count

#: Characters counted before the tokens-per-character ratio is trusted for guesses.
_RATIO_WARMUP = 256


class _Ratio:
    """Tokens per character seen so far in one text, to guess which parts are over the limit."""

    __slots__ = ("chars", "tokens")

    def __init__(self) -> None:
        self.chars = 0
        self.tokens = 0

    def observe(self, chars: int, tokens: int) -> None:
        self.chars += chars
        self.tokens += tokens

    def guess(self, chars: int) -> float | None:
        """Estimated tokens of ``chars`` characters, or None before enough was seen."""
        return chars * self.tokens / self.chars if self.chars >= _RATIO_WARMUP else None


def _level_pattern(level: str | tuple[str, ...]) -> re.Pattern[str]:
    """A run of the level's separators (and closers after it): ``……``, ``？！``, blank lines."""
    alternatives = (level,) if isinstance(level, str) else level
    return re.compile("(?:" + "|".join(re.escape(s) for s in alternatives if s) + ")+" + _CLOSERS)


def _split_keeping(text: str, pattern: re.Pattern[str]) -> list[str]:
    """Split after each separator run, which stays at the end of the piece before it.

    Whitespace-only pieces are glued to the piece before them; joining the result gives back
    ``text`` exactly.
    """
    pieces: list[str] = []
    start = 0
    for match in pattern.finditer(text):
        piece = text[start : match.end()]
        start = match.end()
        if pieces and not piece.strip():
            pieces[-1] += piece
        elif piece:
            pieces.append(piece)
    tail = text[start:]
    if pieces and not tail.strip():
        pieces[-1] += tail
    elif tail:
        pieces.append(tail)
    return pieces


class RecursiveSplitter:
    """Chunks of at most ``max_tokens`` tokens, cut at the coarsest separators that work.

    - ``max_tokens`` and ``chunk_overlap`` count tokens of ``length`` (default: tiktoken
      cl100k_base, loaded when the splitter is built).
    - ``separators`` lists levels, coarsest first; a tuple is one level of equal-rank
      alternatives. A separator stays at the end of the piece before it (with any closing quote
      after it), so Chinese sentences keep their "。"; chunks are stripped and whitespace-only
      chunks dropped. A piece that fits is kept whole, even when it could be cut finer.
    - Overlap: a chunk starts with the last whole pieces of the previous chunk that total at most
      ``chunk_overlap`` tokens (never the whole previous chunk, never pushing the chunk past
      ``max_tokens``). A last piece bigger than ``chunk_overlap`` gives no overlap.
    - Speed: each piece is counted once and merges are sized by the sum of counts; a part that
      is clearly too long (by this text's tokens per character) is cut without being counted.
      Since tokens can merge across a boundary, every chunk is then counted for real and shrunk
      if over, so ``Chunk.tokens`` is exact.
    - A chunk exceeds ``max_tokens`` only when a single character alone takes more tokens than
      ``max_tokens`` (e.g. ``max_tokens=1`` and a CJK character that is 2 tokens); that chunk is
      that one character and carries ``metadata["oversized"] = True``.

    A splitter holds no per-call state and may be shared by threads. Raises
    :class:`~zhiku.core.errors.ConfigError` for ``max_tokens < 1`` or an overlap outside
    ``[0, max_tokens)``.
    """

    def __init__(
        self,
        max_tokens: int = 500,
        chunk_overlap: int = 50,
        separators: Sequence[str | tuple[str, ...]] = DEFAULT_SEPARATORS,
        length: LengthFunction | None = None,
    ) -> None:
        check_sizes(max_tokens, chunk_overlap)
        self.max_tokens = max_tokens
        self.chunk_overlap = chunk_overlap
        self.separators = tuple(separators)
        self._patterns = [_level_pattern(level) for level in self.separators if any(level)]
        self.length: LengthFunction = length if length is not None else TiktokenLength()

    def split(self, documents: list[Document]) -> list[Chunk]:
        return chunk_documents(documents, self.split_text)

    def split_text(self, text: str) -> list[SplitText]:
        """The chunks of one text, stripped, with their real token counts."""
        ratio = _Ratio()
        return self._merge(self._pieces(text, 0, ratio), ratio)

    def _pieces(self, text: str, level: int, ratio: _Ratio) -> list[_Piece]:
        """Cut ``text`` (too long, or never counted) at separator ``level`` or finer.

        Each returned piece is at most ``max_tokens`` by its own count, or by the sum of its
        parts' counts when it was cut uncounted and then glued back whole because it fits.
        """
        limit = self.max_tokens
        for index in range(level, len(self._patterns)):
            parts = _split_keeping(text, self._patterns[index])
            if len(parts) < 2:
                continue
            pieces: list[_Piece] = []
            for part in parts:
                checkpoint()
                guess = ratio.guess(len(part))
                if guess is not None and guess > limit:
                    finer = self._pieces(part, index + 1, ratio)
                    total = sum(count for _, count in finer)
                    pieces.extend(finer if total > limit else [(part, total)])
                    continue
                count = self.length(part)
                ratio.observe(len(part), count)
                if count <= limit:
                    pieces.append((part, count))
                else:
                    pieces.extend(self._pieces(part, index + 1, ratio))
            return pieces
        return self._cut(text, ratio)

    def _cut(self, text: str, ratio: _Ratio) -> list[_Piece]:
        """Cut a run no separator splits between characters, each part counted (stripped) ≤ max.

        The longest fitting prefix is found by galloping from an estimate then bisecting, so a
        part costs about a dozen counts of at most ``2 * max_tokens`` tokens. A part is a single
        character, over the limit, only when that character alone is.
        """
        limit = self.max_tokens
        guess = ratio.guess(len(text))
        total = guess if guess is not None else self.length(text)
        step = max(1, int(limit * len(text) / max(1.0, total)))
        pieces: list[_Piece] = []
        start = 0
        while start < len(text):
            checkpoint()
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

    def _merge(self, pieces: list[_Piece], ratio: _Ratio) -> list[SplitText]:
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
            if count > limit:  # one piece, over by its real count: cut it finer
                finer = self._pieces(current[0][0], 0, ratio)  # unstripped: joins stay exact
                if len(finer) > 1:
                    pieces[index - 1 : index] = finer
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
