"""What a dataset's search reads of its segment rows: the protocol the knowledge base implements."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Protocol

from zhiku.core.documents import Hit
from zhiku.fusion.types import FusedHit


class SegmentCatalog(Protocol):
    """The served segments of one dataset, as a search asks about its candidates.

    A segment is served while it and its document are enabled and its document's current
    version is committed; store points exist before their rows and outlive them, so only these
    answers say what a search may return. Each method is one read, safe from any thread.
    """

    @property
    def has_children(self) -> bool:
        """Whether the dataset ever had child chunks (then ``parents_of`` has answers)."""
        ...

    def parents_of(self, ids: Sequence[str]) -> Mapping[str, str]:
        """``{child_id: segment_id}`` for the enabled child chunks and summaries among ``ids``."""
        ...

    def live_ids(self, ids: Sequence[str]) -> Collection[str]:
        """The served ids among ``ids``."""
        ...

    def live_texts(self, ids: Sequence[str]) -> Mapping[str, str]:
        """The served ids among ``ids`` with their texts (what a rerank model reads)."""
        ...

    def hits(self, fused: Sequence[FusedHit]) -> list[Hit]:
        """The served ones among ``fused``, in order, each with everything a caller shows of its
        segment, document and dataset (nothing needs reading again)."""
        ...
