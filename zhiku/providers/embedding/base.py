"""The EmbeddingModel protocol and the small helpers every provider shares."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Generic, Protocol, TypeVar, runtime_checkable

import numpy as np

from zhiku.core.errors import ModelUnavailable

T = TypeVar("T")

ProgressCallback = Callable[[int, int], None]
"""``on_progress(done, total)``: called after each batch with the number of texts embedded so far."""


@runtime_checkable
class EmbeddingModel(Protocol):
    """Turns texts into L2-normalised float32 vectors; cosine similarity is a dot product.

    ``name`` is a stable id of the model and its settings: it is the embedding cache key, so two
    models that produce different vectors must never share a name.
    """

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_documents(
        self, texts: Sequence[str], *, on_progress: ProgressCallback | None = None
    ) -> np.ndarray:
        """``(len(texts), dim)`` float32, one L2-normalised row per text, in input order."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """``(dim,)`` float32, L2-normalised; may differ from a document embedding (e5 prefixes)."""
        ...


def l2_normalize(rows: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length as float32; an all-zero row stays zero."""
    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    return rows / np.maximum(norms, np.float32(1e-12))


def batches(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """Consecutive slices of at most ``size`` items."""
    if size < 1:
        raise ValueError(f"batch size must be at least 1, got {size}")
    for start in range(0, len(items), size):
        yield items[start : start + size]


def embed_in_batches(
    texts: Sequence[str],
    batch_size: int,
    embed: Callable[[Sequence[str]], np.ndarray],
    dim: int,
    on_progress: ProgressCallback | None,
) -> np.ndarray:
    """Run ``embed`` over ``texts`` batch by batch, report progress, return normalised rows."""
    if not texts:
        return np.empty((0, dim), dtype=np.float32)
    parts: list[np.ndarray] = []
    done = 0
    for batch in batches(texts, batch_size):
        parts.append(l2_normalize(embed(batch)))
        done += len(batch)
        if on_progress is not None:
            on_progress(done, len(texts))
    return np.concatenate(parts, axis=0)


def require_module(module: str, install: str) -> None:
    """Raise ModelUnavailable naming the package to install when ``module`` is missing."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise ModelUnavailable(f"python package {module!r} is not installed; pip install {install}")


class SharedInstance(Generic[T]):
    """One object per process, built on first use; for in-process models that are costly to load.

    ``lock`` serialises calls into the object: the engines behind it use every core already, so
    two concurrent calls would only fight over them.
    """

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._instance: T | None = None
        self.lock = threading.Lock()

    def get(self) -> T:
        with self.lock:
            if self._instance is None:
                self._instance = self._build()
            return self._instance
