"""Keywords of a segment, with jieba's IDF table and the dataset's own tokenizer.

jieba's ``extract_tags`` uses the process-global tokenizer, which would ignore a dataset's user
dictionary and stop words; this does the same TF-IDF with the dataset's tokenizer instead.

Two lists come out of a segment. The few best keywords (``top_n``, by TF-IDF) are what a segment
shows as its ``keywords``. Its postings are many more: a fixed handful cannot cover what people
type about a long passage, so their number follows the segment's distinct candidate words
(:func:`keyword_budget`), shared between Chinese and other words in proportion, each language
keeping a minimum, so English words never crowd Chinese ones out (nor the reverse). A posting's
weight is the word's saturated, length-normalised term frequency; how rare the word is counts at
query time, from the dataset's own postings (see :mod:`zhiku.datasource.keyword.store`).
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import jieba

from zhiku.text.tokenizer import Tokenizer

_lock = threading.Lock()

#: The IDF table ``jieba.analyse`` ships (one ``word idf`` per line).
_IDF_FILE = Path(jieba.__file__).parent / "analyse" / "idf.txt"
_HAN = re.compile("[\u4e00-\u9fd5]")

#: Postings per segment: this share of its distinct candidate words, within these bounds.
BUDGET_SHARE = 0.75
BUDGET_MIN = 8
BUDGET_MAX = 96
#: Each language (Chinese, other) keeps at least this many of its best words.
LANGUAGE_MIN = 4
#: BM25's term-frequency saturation and length normalisation, over an average segment length.
_K1 = 1.2
_B = 0.75
_AVERAGE_TOKENS = 150.0
#: A keyword a user gave a segment weighs this many times the segment's best extracted one.
GIVEN_BOOST = 2.0


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


def is_candidate(word: str) -> bool:
    """Two characters or more, and numbers three digits or more: single CJK characters and single
    letters carry little meaning as keywords (jieba drops them too), nor do one- or two-digit
    numbers (the "09", "00" of "09:00"); codes and longer numbers ("207", "2018") are what keyword
    search is for. Queries keep the same words, so both sides match alike."""
    return len(word) > 2 or (len(word) == 2 and not word.isdigit())


def with_pairs(tokens: Sequence[str]) -> list[str]:
    """``tokens`` and, after each run of single Chinese characters, the pairs of neighbours in it.

    jieba's dictionary lacks many two-character words people type ("年假" comes out as "年",
    "假"); single characters are no keywords, but their pairs are, on both sides alike.
    """
    out = list(tokens)
    for previous, word in zip(tokens, tokens[1:], strict=False):
        if len(previous) == 1 and len(word) == 1 and _HAN.match(previous) and _HAN.match(word):
            out.append(previous + word)
    return out


def query_keywords(tokens: Sequence[str]) -> list[str]:
    """The distinct candidate words of a query's tokens (with :func:`with_pairs`), sorted."""
    return sorted({word for word in with_pairs(tokens) if is_candidate(word)})


def extract_keywords(tokens: Sequence[str], top_n: int) -> list[tuple[str, float]]:
    """The ``top_n`` candidate tokens by TF-IDF (tf normalised by the token count), best first."""
    return _ranked(Counter(w for w in tokens if is_candidate(w)), len(tokens))[:top_n]


def _ranked(counts: Counter[str], total: int) -> list[tuple[str, float]]:
    """Candidates by TF-IDF, best first (ties: alphabetical)."""
    table, median = _idf_table()
    # (-score, word) pairs sort without a key function
    ranked = sorted((-(count / total * table.get(word, median)), word) for word, count in counts.items())
    return [(word, -negative) for negative, word in ranked]


def keyword_budget(distinct: int) -> int:
    """How many postings a segment with ``distinct`` candidate words gets."""
    return max(BUDGET_MIN, min(BUDGET_MAX, math.ceil(distinct * BUDGET_SHARE)))


def _by_language(ranked: Sequence[tuple[str, float]], budget: int) -> list[str]:
    """The best ``budget`` words, shared between Chinese and other words in proportion to their
    number, each keeping at least :data:`LANGUAGE_MIN` (or all it has)."""
    han = [word for word, _ in ranked if _HAN.search(word)]
    other = [word for word, _ in ranked if not _HAN.search(word)]
    han_quota = max(min(len(han), LANGUAGE_MIN), round(budget * len(han) / max(1, len(ranked))))
    other_quota = max(min(len(other), LANGUAGE_MIN), budget - han_quota)
    return han[:han_quota] + other[:other_quota]


#: The most :func:`term_weight` approaches (a word repeated without end): ``k1 + 1``.
SATURATED_WEIGHT = _K1 + 1


def term_weight(count: int, total: int) -> float:
    """BM25's saturated term frequency of a word seen ``count`` times in ``total`` tokens."""
    norm = _K1 * (1 - _B + _B * total / _AVERAGE_TOKENS)
    return count * (_K1 + 1) / (count + norm)


class KeywordExtractor:
    """Keywords and postings of a text with a dataset's tokenizer and shown keyword count."""

    def __init__(self, tokenizer: Tokenizer, top_n: int = 10) -> None:
        self.tokenizer = tokenizer
        self.top_n = top_n

    def __call__(self, text: str) -> list[tuple[str, float]]:
        return self.postings(self.tokenizer.tokenize(text))

    def shown(self, tokens: Sequence[str]) -> list[str]:
        """The ``top_n`` keywords a segment shows, from tokens made by this extractor's tokenizer."""
        return [word for word, _ in extract_keywords(tokens, self.top_n)]

    def postings(self, tokens: Sequence[str]) -> list[tuple[str, float]]:
        """``(word, weight)`` postings of a text's tokens: a length-following, per-language
        budget of its best candidate words (see the module's docstring)."""
        counts = Counter(w for w in with_pairs(tokens) if is_candidate(w))
        total = len(tokens)
        chosen = _by_language(_ranked(counts, total), keyword_budget(len(counts)))
        return [(word, term_weight(counts[word], total)) for word in chosen]

    def with_given(self, given: Sequence[str], tokens: Sequence[str]) -> list[tuple[str, float]]:
        """Postings of a segment whose keywords a user gave: the extracted ones, and each given
        keyword (tokenized as queries are) at :data:`GIVEN_BOOST` times the best extracted weight,
        whether or not the text holds it."""
        extracted = dict(self.postings(tokens))
        top = max(extracted.values(), default=term_weight(1, max(1, len(tokens))))
        for phrase in given:
            for word in query_keywords(self.tokenizer.tokenize(phrase)) or [phrase.strip().lower()]:
                if word:
                    extracted[word] = GIVEN_BOOST * top
        return list(extracted.items())
