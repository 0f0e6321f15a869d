"""Sentences of Chinese and English text, with their offsets.

Answers are built from, and cited by, sentences: the extractive answerer picks them, citation
repair compares them with sources. A sentence ends at 。！？；!? (and a closing quote or bracket
after it), at ``.`` followed by whitespace, or at a line break; the cut keeps the ending mark.

A line break where text extracted from a PDF or hard-wrapped markdown was merely wrapped (see
:func:`soft_breaks`) ends nothing: cutting there would split a sentence in two halves that each
answer nothing.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_END = re.compile(r"[。！？；!?;]+[”’」』）)\]]*|\.(?=\s)|\n+")
#: What a line that ends its sentence (or introduces what follows) ends with.
_CLOSED = re.compile(r"[。！？；!?;.:：…”’」』）)\]】]\s*$")
#: A line opening a block of its own: list item, heading, table row, quotation, numbered clause
#: (``一、``), or a ``key: value`` field.
_OPENS_BLOCK = re.compile(
    r"^\s*(?:[-*+•>#|]|\d+[.)、]|[（(]?[一二三四五六七八九十]+[、)）]|[^\s:：。，,.!?！？]{1,24}[:：])"
)
_CJK = r"\u3400-\u9fff\uf900-\ufaff"
#: A wrapped line ends inside a word or a clause: a CJK character or a comma-like mark, or (Latin
#: text) a letter, digit, comma or hyphen.
_OPEN_CJK_END = re.compile(rf"[{_CJK}0-9a-zA-Z，、“‘（《]$")
_OPEN_LATIN_END = re.compile(r"[A-Za-z0-9,\-–(]$")
#: ... and the next line carries on: CJK text, or Latin text starting in lower case or a digit.
_CJK_START = re.compile(rf"^[{_CJK}0-9，、。”’）》]")
_LATIN_START = re.compile(r"^[a-z0-9(]")
#: A line shorter than this share of the text's longest line is not filled to the wrap width:
#: it is a title or the last line of a paragraph, and its break is real.
WRAP_FILL = 0.7


@dataclass(frozen=True)
class Sentence:
    text: str
    start: int  # offset of ``text`` in the source string
    end: int


def split_sentences(text: str) -> list[Sentence]:
    """The non-blank sentences of ``text`` in order, stripped, with offsets into ``text``; a
    sentence wrapped over lines keeps its line breaks in ``text`` (see :func:`unwrap`)."""
    soft = soft_breaks(text)
    out: list[Sentence] = []
    start = 0
    for match in _END.finditer(text):
        if match.group() == "\n" and match.start() in soft:
            continue
        _add(text, start, match.end(), out)
        start = match.end()
    _add(text, start, len(text), out)
    return out


def soft_breaks(text: str) -> set[int]:
    """Offsets of the single line breaks in ``text`` that only wrap a sentence: the line before
    is filled to near the wrap width and ends mid-clause, and the next line carries on (lower-case
    Latin or CJK text) rather than opening a list item, heading, table row or field."""
    lines = text.split("\n")
    width = max((_width(line.strip()) for line in lines), default=0)
    soft: set[int] = set()
    offset = 0
    for line, following in zip(lines, lines[1:], strict=False):
        offset += len(line)
        before, after = line.strip(), following.strip()
        if (
            before
            and after
            and _width(before) >= WRAP_FILL * width
            and not _CLOSED.search(before)
            and not before.startswith(("#", "|"))
            and "|" not in before
            and not _OPENS_BLOCK.match(after)
            and _continues(before, after)
        ):
            soft.add(offset)
        offset += 1
    return soft


def unwrap(text: str, start: int = 0, end: int | None = None) -> str:
    """``text[start:end]`` with its wrapping line breaks (those of the whole ``text``) joined: by
    a space between Latin words, by nothing inside Chinese text (which has no spaces)."""
    end = len(text) if end is None else end
    out: list[str] = []
    cursor = start
    for offset in sorted(b for b in soft_breaks(text) if start <= b < end):
        left = text[cursor:offset].rstrip()
        right = text[offset + 1 : end].lstrip()
        out.append(left)
        out.append(" " if left and right and left[-1].isascii() and right[0].isascii() else "")
        cursor = end - len(right)
    out.append(text[cursor:end])
    return "".join(out)


def _width(line: str) -> int:
    """Display width: a CJK character is as wide as two Latin ones, so a wrapped Chinese line is
    as full as a wrapped English one."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


def _continues(before: str, after: str) -> bool:
    if _OPEN_CJK_END.search(before) and _CJK_START.match(after) and re.search(rf"[{_CJK}]", before):
        return True
    return bool(_OPEN_LATIN_END.search(before) and _LATIN_START.match(after))


def _add(text: str, start: int, end: int, out: list[Sentence]) -> None:
    piece = text[start:end]
    stripped = piece.strip()
    if not stripped:
        return
    lead = len(piece) - len(piece.lstrip())
    out.append(Sentence(stripped, start + lead, start + lead + len(stripped)))
