"""BM25 as sparse vectors: the document side is computed here, the IDF by Qdrant.

Score of document d for query q (Lucene's BM25)::

    score(d, q) = sum over terms t of q:  count(t, q) * idf(t) * w(t, d)
    w(t, d) = tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl)),  tf = count(t, d)
    idf(t) = ln(1 + (N - n(t) + 0.5) / (n(t) + 0.5))

The stored sparse vector of d holds the saturated term frequencies (:func:`document_weights`),
the query vector holds token counts (:func:`query_weights`; 1.0 per distinct token measurably
loses quality), and Qdrant's ``Modifier.IDF`` multiplies in :func:`lucene_idf` over the points of
the collection at query time.

Tokens map to 32-bit term ids by hash (:func:`term_id`), the same in every process and version.
Two tokens may share an id (about one pair in a 90k-token vocabulary), which merges their counts.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import TypeVar

import numpy as np

_F = TypeVar("_F", float, np.ndarray)

#: Lucene's and Qdrant's defaults. Measured on the eval sets, k1 1.2 ranks as well as 1.5
#: (nDCG@10 scifact 0.669 vs 0.669, zh_medical_dialogue 0.275 vs 0.274).
DEFAULT_K1 = 1.2
DEFAULT_B = 0.75

#: Reserved term id: a document without tokens gets it (weight 0), so it still counts in N.
EMPTY_TERM = 0


@lru_cache(maxsize=1 << 18)
def term_id(token: str) -> int:
    """Stable uint32 id of a token: the first 4 bytes of blake2b(UTF-8), never :data:`EMPTY_TERM`."""
    value = int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=4).digest(), "little")
    return value or 1


def term_counts(tokens: Iterable[str]) -> dict[int, int]:
    """How many times each term id occurs in ``tokens``."""
    by_token = Counter(tokens)
    terms = list(map(term_id, by_token))
    counts = dict(zip(terms, by_token.values(), strict=True))
    if len(counts) < len(terms):  # two tokens share an id: add their counts
        counts = {}
        for term, n in zip(terms, by_token.values(), strict=True):
            counts[term] = counts.get(term, 0) + n
    return counts


def saturated_tf(tf: _F, length: int, avgdl: float, k1: float = DEFAULT_K1, b: float = DEFAULT_B) -> _F:
    """BM25's document-side weight ``tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avgdl))``.

    ``tf`` may be a float or a numpy array of them."""
    return tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * length / avgdl))


def raw_tf(weight: _F, length: int, avgdl: float, k1: float = DEFAULT_K1, b: float = DEFAULT_B) -> _F:
    """Inverse of :func:`saturated_tf`: the term frequency a stored weight was computed from
    (float or numpy array; round it, frequencies are integers)."""
    norm = k1 * (1.0 - b + b * length / avgdl)
    return weight * norm / (k1 + 1.0 - weight)


def document_weights(
    counts: Mapping[int, int], length: int, avgdl: float, k1: float = DEFAULT_K1, b: float = DEFAULT_B
) -> dict[int, float]:
    """Sparse vector of a document with ``length`` tokens; ``{EMPTY_TERM: 0.0}`` when it has none."""
    if not counts:
        return {EMPTY_TERM: 0.0}
    # saturated_tf's operations in its order, on Python floats: the same values, without the
    # cost of a numpy array per document (a segment has about a hundred terms).
    scale = k1 + 1.0
    norm = k1 * (1.0 - b + b * length / avgdl)
    return {term: tf * scale / (tf + norm) for term, tf in counts.items()}


def query_weights(tokens: Iterable[str]) -> dict[int, float]:
    """Sparse vector of a query: each term id with its token count (repeats weigh more)."""
    return {term: float(count) for term, count in term_counts(tokens).items()}


def lucene_idf(n_docs: int, doc_freq: int) -> float:
    """``ln(1 + (N - n + 0.5) / (n + 0.5))``: always positive, what Qdrant's IDF modifier uses."""
    return math.log(1.0 + (n_docs - doc_freq + 0.5) / (doc_freq + 0.5))


def average_length(n_docs: int, total_length: int) -> float:
    """avgdl, and 1.0 for an empty (or all-empty) corpus so weights stay defined."""
    return total_length / n_docs if n_docs > 0 and total_length > 0 else 1.0
