"""Odd/even reorder: put the strongest hits at both ends of an LLM's context.

Models read the start and the end of a long context more reliably than its middle ("lost in the
middle"), so a best-first list ``1, 2, 3, 4, 5, 6`` becomes ``1, 3, 5, 6, 4, 2``: the odd ranks
in order, then the even ranks in reverse. The weakest hits land in the middle.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def reorder(items: Sequence[T]) -> list[T]:
    """``items`` (best first) as ranks 1, 3, 5, …, 6, 4, 2. Returns a new list."""
    return [*items[0::2], *reversed(items[1::2])]
