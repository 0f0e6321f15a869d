"""Splitters: documents → chunks of at most ``max_tokens`` tokens.

Built-ins are registered in :data:`splitters` as ``"recursive"`` and ``"fixed_separator"``;
each is made as ``factory(max_tokens=, chunk_overlap=, separator=, length=)`` from a stored
process rule (a splitter that cuts at no fixed separator ignores ``separator``).
"""

from __future__ import annotations

from typing import Protocol

from zhiku.core.registry import Registry
from zhiku.splitters.base import TextSplitter
from zhiku.splitters.fixed import FixedSeparatorSplitter
from zhiku.splitters.length import LengthFunction, TiktokenLength, TransformersTokenizerLength
from zhiku.splitters.recursive import DEFAULT_SEPARATORS, RecursiveSplitter

__all__ = [
    "DEFAULT_SEPARATORS",
    "FixedSeparatorSplitter",
    "LengthFunction",
    "RecursiveSplitter",
    "SplitterFactory",
    "TextSplitter",
    "TiktokenLength",
    "TransformersTokenizerLength",
    "splitters",
]



class SplitterFactory(Protocol):
    """The contract of the ``splitters`` registry: a process rule's sizes, in ``length``'s tokens."""

    def __call__(
        self, *, max_tokens: int, chunk_overlap: int, separator: str, length: LengthFunction
    ) -> TextSplitter: ...


splitters: Registry[SplitterFactory] = Registry("splitters")


@splitters.register("recursive")
def _recursive(
    *, max_tokens: int, chunk_overlap: int, separator: str, length: LengthFunction
) -> TextSplitter:
    return RecursiveSplitter(max_tokens=max_tokens, chunk_overlap=chunk_overlap, length=length)


splitters.add("fixed_separator", FixedSeparatorSplitter)
