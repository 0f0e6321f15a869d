"""Parent-child search: child chunks found stand for their parent segment, and come back with it.

Each channel keeps, per parent, its best child (score and rank), so fusion ranks parents and one
parent never fills two slots; the children found are shown with their parent, best first.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from zhiku.core.retrieval_config import RetrievalConfig
from zhiku.fusion.registry import fuse
from zhiku.fusion.types import FusedHit
from zhiku.retrieval.channels import Ranked
from zhiku.retrieval.evidence import EvidenceScale


def to_parents(
    found: Mapping[str, Ranked], parent_of: Mapping[str, str]
) -> tuple[dict[str, Ranked], dict[str, Ranked]]:
    """Each channel's candidates with child chunks replaced by their parent (its best child's
    score, at its best child's rank), and the child chunks found per channel."""
    parents: dict[str, Ranked] = {}
    children: dict[str, Ranked] = {}
    for ch, hits in found.items():
        seen: set[str] = set()
        parents[ch], children[ch] = [], []
        for sid, score in hits:
            parent = parent_of.get(sid, sid)
            if parent != sid:
                children[ch].append((sid, score))
            if parent not in seen:
                seen.add(parent)
                parents[ch].append((parent, score))
    return parents, children


def attach_children(
    hits: Sequence[FusedHit],
    children: Mapping[str, Ranked],
    parent_of: Mapping[str, str],
    live: Collection[str] | None,
    config: RetrievalConfig,
    scale: EvidenceScale | None,
) -> None:
    """Give each hit its children found, best first (by fusing the live children in the
    config's channels), each scored by its relevance like the hits (from every channel
    searched, evidence-only ones included)."""
    searched = {
        ch: [(cid, s) for cid, s in kids if live is None or parent_of[cid] in live]
        for ch, kids in children.items()
    }
    found: dict[str, Ranked] = {ch: kids for ch, kids in searched.items() if ch in config.channels}
    fused = fuse(found, config.reranking)
    if scale is not None:
        scale.score(fused, searched)
    by_parent: dict[str, list[tuple[str, float]]] = {}
    for child in fused:  # best first
        by_parent.setdefault(parent_of[child.segment_id], []).append((child.segment_id, child.score))
    for hit in hits:
        hit.children = by_parent.get(hit.segment_id, [])
