"""A fast, deterministic stand-in embedding model for benchmarks at 100k segments.

Real models embed tens of texts per second on small machines, so a 100k-segment latency run
cannot wait for them. :class:`SyntheticEmbedding` gives every text a unit vector in
microseconds, with enough structure that search behaves like search on real vectors: a text's
vector is the normalised sum of fixed random vectors of its tokens (words, and character
bigrams of Chinese), plus a small component keyed by the text's sha256 so that two texts never
share a vector. Texts sharing words are therefore near each other. The vectors are the same in
every process (no use of Python's salted ``hash``), so a query embedded by one process finds
segments embedded by another. Its search results mean nothing for quality; use it for speed only.
"""

from __future__ import annotations

import hashlib
import re
import zlib
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from zhiku.core.errors import ConfigError
from zhiku.providers.embedding import ProgressCallback, l2_normalize

_BUCKETS = 1 << 14
_BATCH = 1024
_NOISE = 0.3
_HAN_RUN = re.compile(r"[\u4e00-\u9fff]+")
_WORD = re.compile(r"[^\W_]+")


def _features(text: str) -> list[int]:
    """Bucket numbers of the text's lower-cased words and Chinese character bigrams."""
    buckets: list[int] = []
    for match in _WORD.finditer(text.lower()):
        word = match.group()
        runs = _HAN_RUN.findall(word)
        if not runs:
            buckets.append(zlib.crc32(word.encode("utf-8")) % _BUCKETS)
            continue
        for run in runs:
            grams = [run[i : i + 2] for i in range(max(1, len(run) - 1))]
            buckets.extend(zlib.crc32(gram.encode("utf-8")) % _BUCKETS for gram in grams)
    return buckets


@lru_cache(maxsize=4)
def _token_table(dim: int, seed: int) -> np.ndarray:
    """The random vector of each bucket, made once per process: every dataset opened with the
    model would otherwise spend a tenth of a second drawing the same six million numbers."""
    table = np.random.default_rng(seed).standard_normal((_BUCKETS, dim), dtype=np.float32)
    table.flags.writeable = False
    return table


class SyntheticEmbedding:
    """``dim``-d unit vectors from word hashing; registered as embedding model ``"synthetic"``.

    ``seed`` picks the random token table: datasets and queries must use the same seed (it is
    part of :attr:`name`, the embedding cache key). Raises ConfigError for ``dim`` below 2.
    """

    #: Its vectors are summed in Python with the GIL held: a search embeds a new query in turn
    #: with its other channels, not beside them (see :class:`~zhiku.retrieval.channels.SemanticChannel`).
    holds_gil = True

    def __init__(self, dim: int = 384, seed: int = 0) -> None:
        if dim < 2:
            raise ConfigError(f"dim must be at least 2, got {dim}")
        self.dim = dim
        self.name = f"synthetic/hashed-{dim}-seed{seed}"
        self._table = _token_table(dim, seed)

    def embed_documents(
        self, texts: Sequence[str], *, on_progress: ProgressCallback | None = None
    ) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), _BATCH):
            part = texts[start : start + _BATCH]
            out[start : start + len(part)] = [self._vector(text) for text in part]
            if on_progress is not None:
                on_progress(start + len(part), len(texts))
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)

    def _vector(self, text: str) -> np.ndarray:
        digest = hashlib.sha256(text.encode("utf-8")).digest()
        own = self._table[int.from_bytes(digest[:4], "little") % _BUCKETS] * np.float32(_NOISE)
        buckets = _features(text)
        if not buckets:
            return l2_normalize(own)
        words = self._table[buckets].sum(axis=0) / np.float32(np.sqrt(len(buckets)))
        return l2_normalize(words + own)
