"""TF-IDF keywords of a segment, with jieba's IDF table and the dataset's own tokenizer.

jieba's ``extract_tags`` uses the process-global tokenizer, which would ignore a dataset's user
dictionary and stop words; this does the same TF-IDF with the dataset's tokenizer instead.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from zhiku.datasource.tokenizer import Tokenizer

_lock = threading.Lock()


@lru_cache(maxsize=1)
def _idf_table() -> tuple[dict[str, float], float]:
    """jieba's bundled IDF table (word → idf) and its median, loaded once per process."""
    with _lock:
        from jieba.analyse.tfidf import TFIDF

        tfidf = TFIDF()
        return tfidf.idf_freq, tfidf.median_idf


def idf(word: str) -> float:
    """jieba's IDF of ``word``; unknown words get the median (as jieba does)."""
    table, median = _idf_table()
    return table.get(word, median)


def _is_keyword_candidate(token: str) -> bool:
    # Single CJK characters and single letters carry little meaning as keywords (jieba drops them
    # too), nor do one- or two-digit numbers (the "09", "00" of "09:00"), which would otherwise
    # crowd a segment's few keyword slots; codes and longer numbers ("207", "2018") are kept:
    # they are what keyword search is for.
    if token.isdigit():
        return len(token) >= 3
    return len(token) >= 2


def extract_keywords(tokens: Sequence[str], top_n: int) -> list[tuple[str, float]]:
    """The ``top_n`` tokens by TF-IDF (tf normalised by the segment's token count), best first."""
    candidates = [t for t in tokens if _is_keyword_candidate(t)]
    if not candidates:
        return []
    counts = Counter(candidates)
    total = len(tokens)
    scored = [(word, count / total * idf(word)) for word, count in counts.items()]
    scored.sort(key=lambda item: (-item[1], item[0]))
    return scored[:top_n]


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
