"""The cleaner contract and the chain that runs several cleaners in order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class Cleaner(Protocol):
    """Rewrites extracted text before it is split; must keep the meaning and the line structure."""

    def clean(self, text: str) -> str: ...


class CleanerChain:
    """Runs cleaners in the given order; itself a :class:`Cleaner`."""

    def __init__(self, cleaners: Sequence[Cleaner]) -> None:
        self.cleaners = list(cleaners)

    def clean(self, text: str) -> str:
        for cleaner in self.cleaners:
            text = cleaner.clean(text)
        return text
