"""A least-recently-used cache of at most ``size`` entries, closing what it evicts.

Providers (rerank models, chat clients) hold connections and memory; a cache keyed by anything a
caller can vary must not grow without bound, so the oldest entry is closed and dropped first.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


def close_quietly(value: object) -> None:
    """Call ``value.close()`` if it has one; a failure to close must not fail the caller."""
    close = getattr(value, "close", None)
    if callable(close):
        with contextlib.suppress(Exception):  # evicting must not raise
            close()


class BoundedCache(Generic[K, V]):
    """``get(key, make)``: the cached value, else ``make()`` stored (evicting the least recently
    used entry past ``size``). Thread-safe; ``make`` runs under the cache's lock."""

    def __init__(self, size: int, on_evict: Callable[[V], None] = close_quietly) -> None:
        if size < 1:
            raise ValueError("a bounded cache holds at least one entry")
        self.size = size
        self._on_evict = on_evict
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.RLock()

    def get(self, key: K, make: Callable[[], V]) -> V:
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
            value = make()
            self._entries[key] = value
            while len(self._entries) > self.size:
                _, evicted = self._entries.popitem(last=False)
                self._on_evict(evicted)
            return value

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            values = list(self._entries.values())
            self._entries.clear()
        for value in values:
            self._on_evict(value)
