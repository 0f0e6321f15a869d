"""TF-IDF keywords of a segment, with jieba's IDF table and the dataset's own tokenizer.

jieba's ``extract_tags`` uses the process-global tokenizer, which would ignore a dataset's user
dictionary and stop words; this does the same TF-IDF with the dataset's tokenizer instead.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import jieba

from zhiku.datasource.tokenizer import Tokenizer

_lock = threading.Lock()

#: The IDF table ``jieba.analyse`` ships (one ``word idf`` per line).
_IDF_FILE = Path(jieba.__file__).parent / "analyse" / "idf.txt"


@lru_cache(maxsize=1)
def _idf_table() -> tuple[dict[str, float], float]:
    """jieba's bundled IDF table (word → idf) and its median, loaded once per process.

    Parsed here as ``jieba.analyse.tfidf.IDFLoader`` does: importing ``jieba.analyse`` would also
    load jieba's part-of-speech tables, about two seconds and many megabytes never used here.
    """
    with _lock:
        table: dict[str, float] = {}
        for line in _IDF_FILE.read_bytes().decode("utf-8").splitlines():
            word, value = line.strip().split(" ")
            table[word] = float(value)
        return table, sorted(table.values())[len(table) // 2]


def idf(word: str) -> float:
    """jieba's IDF of ``word``; unknown words get the median (as jieba does)."""
    table, median = _idf_table()
    return table.get(word, median)


def extract_keywords(tokens: Sequence[str], top_n: int) -> list[tuple[str, float]]:
    """The ``top_n`` tokens by TF-IDF (tf normalised by the segment's token count), best first.

    Candidates have two characters or more, and numbers three digits or more: single CJK
    characters and single letters carry little meaning as keywords (jieba drops them too), nor do
    one- or two-digit numbers (the "09", "00" of "09:00"), which would otherwise crowd a segment's
    few keyword slots; codes and longer numbers ("207", "2018") are what keyword search is for.
    """
    table, median = _idf_table()
    total = len(tokens)
    # Counted first, so the candidate test and the IDF look-up run once per distinct token; the
    # (-score, word) pairs sort without a key function (ties: alphabetical).
    ranked = sorted(
        (-(count / total * table.get(word, median)), word)
        for word, count in Counter(tokens).items()
        if len(word) > 2 or (len(word) == 2 and not word.isdigit())
    )
    return [(word, -negative) for negative, word in ranked[:top_n]]


class KeywordExtractor:
    """Keywords of a text with a dataset's tokenizer and keyword count."""

    def __init__(self, tokenizer: Tokenizer, top_n: int = 10) -> None:
        self.tokenizer = tokenizer
        self.top_n = top_n

    def __call__(self, text: str) -> list[tuple[str, float]]:
        return self.from_tokens(self.tokenizer.tokenize(text))

    def from_tokens(self, tokens: Sequence[str]) -> list[tuple[str, float]]:
        """Keywords from tokens already made by this extractor's tokenizer."""
        return extract_keywords(tokens, self.top_n)
