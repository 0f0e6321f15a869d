"""Splitters: documents → chunks of at most ``max_tokens`` tokens.

Built-ins are registered in :data:`splitters` as ``"recursive"`` and ``"fixed_separator"``;
``splitters.create("recursive", max_tokens=300)`` builds one from a stored process rule.
"""

from __future__ import annotations

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
    "TextSplitter",
    "TiktokenLength",
    "TransformersTokenizerLength",
    "splitters",
]

splitters: Registry[TextSplitter] = Registry("splitters")
splitters.add("recursive", RecursiveSplitter)
splitters.add("fixed_separator", FixedSeparatorSplitter)
