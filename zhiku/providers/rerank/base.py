"""The rerank model contract, beside the embedding model's: what fusion and merges call."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class RerankModel(Protocol):
    """A model that scores ``(query, text)`` pairs: a cross-encoder or an HTTP rerank API.

    ``rerank`` returns one score per text, in the order given; higher is better, any scale.
    A model that cannot answer raises :class:`zhiku.core.errors.ModelUnavailable`.
    """

    name: str

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]: ...
