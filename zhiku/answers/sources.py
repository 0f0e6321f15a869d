"""Context assembly: retrieval hits → numbered sources within a token budget.

What the model (or the extractive answerer) may cite is exactly this list, so a citation ``[n]``
maps to one segment without off-by-one guessing: sources are numbered from 1 in the order given to
the model, and that order is kept with the answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from zhiku.core.documents import Hit
from zhiku.fusion.reorder import reorder

#: The least budget worth a (cut) source: below it a cut passage says too little to cite.
MIN_SOURCE_TOKENS = 32


@dataclass(frozen=True)
class Source:
    """A numbered passage given to the answerer; ``number`` is what ``[n]`` cites."""

    number: int
    segment_id: str
    document_id: str
    document_name: str
    dataset_id: str
    position: int
    text: str
    score: float
    scores: dict[str, float] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def page(self) -> int | None:
        page = self.metadata.get("page")
        return page if isinstance(page, int) else None

    def label(self) -> str:
        """``name · position`` (``· p. N`` when the page is known), for a prompt or a terminal."""
        where = f"p. {self.page}" if self.page is not None else f"#{self.position}"
        return f"{self.document_name} · {where}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "segment_id": self.segment_id,
            "document_id": self.document_id,
            "document_name": self.document_name,
            "dataset_id": self.dataset_id,
            "position": self.position,
            "page": self.page,
            "score": self.score,
            "scores": dict(self.scores),
            "content": self.text,
        }


def hit_text(hit: Hit) -> str:
    """A Q&A segment is cited by its answer too: the question alone answers nothing."""
    if hit.answer:
        return f"{hit.content}\n{hit.answer}"
    return hit.content


def assemble_sources(
    hits: Sequence[Hit],
    *,
    max_tokens: int,
    count_tokens: Callable[[str], int],
    max_sources: int = 10,
    reorder_hits: bool = False,
) -> list[Source]:
    """Hits deduplicated (by segment id, then by identical text), cut to ``max_sources`` and to
    ``max_tokens`` in total — a source that does not fit whole is cut at the budget when at
    least :data:`MIN_SOURCE_TOKENS` remain, else dropped — then optionally odd/even reordered,
    and numbered from 1 in the final order."""
    seen_ids: set[str] = set()
    seen_texts: set[str] = set()
    kept: list[tuple[Hit, str]] = []
    budget = max_tokens
    for hit in hits:
        if len(kept) >= max_sources or budget < MIN_SOURCE_TOKENS:
            break
        text = hit_text(hit).strip()
        key = " ".join(text.split())
        if not text or hit.segment_id in seen_ids or key in seen_texts:
            continue
        seen_ids.add(hit.segment_id)
        seen_texts.add(key)
        tokens = count_tokens(text)
        if tokens > budget:
            text = _cut_to_tokens(text, budget, count_tokens)
            tokens = count_tokens(text)
        kept.append((hit, text))
        budget -= tokens
    if reorder_hits:
        kept = reorder(kept)
    return [
        Source(
            number=i,
            segment_id=hit.segment_id,
            document_id=hit.document_id,
            document_name=hit.document_name,
            dataset_id=hit.dataset_id,
            position=hit.position,
            text=text,
            score=hit.score,
            scores=dict(hit.scores),
            metadata=dict(hit.metadata),
        )
        for i, (hit, text) in enumerate(kept, start=1)
    ]


def _cut_to_tokens(text: str, budget: int, count_tokens: Callable[[str], int]) -> str:
    """The longest prefix of ``text`` within ``budget`` tokens (binary search on characters)."""
    low, high = 0, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        if count_tokens(text[:mid]) <= budget:
            low = mid
        else:
            high = mid - 1
    return text[:low].rstrip() + "…"
