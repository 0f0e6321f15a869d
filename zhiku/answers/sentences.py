"""Sentences of Chinese and English text, with their offsets.

Answers are built from, and cited by, sentences: the extractive answerer picks them, citation
repair compares them with sources. A sentence ends at 。！？；!? (and a closing quote or bracket
after it), at ``.`` followed by whitespace, or at a line break; the cut keeps the ending mark.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_END = re.compile(r"[。！？；!?;]+[”’」』）)\]]*|\.(?=\s)|\n+")


@dataclass(frozen=True)
class Sentence:
    text: str
    start: int  # offset of ``text`` in the source string
    end: int


def split_sentences(text: str) -> list[Sentence]:
    """The non-blank sentences of ``text`` in order, stripped, with offsets into ``text``."""
    out: list[Sentence] = []
    start = 0
    for match in _END.finditer(text):
        _add(text, start, match.end(), out)
        start = match.end()
    _add(text, start, len(text), out)
    return out


def _add(text: str, start: int, end: int, out: list[Sentence]) -> None:
    piece = text[start:end]
    stripped = piece.strip()
    if not stripped:
        return
    lead = len(piece) - len(piece.lstrip())
    out.append(Sentence(stripped, start + lead, start + lead + len(stripped)))
