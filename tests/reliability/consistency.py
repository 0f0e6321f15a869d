"""What every reliability test checks at its end: the three stores hold exactly the points the
rows say — each segment's own, or its child chunks' when it has some (parent-child)."""

from __future__ import annotations

from dataclasses import replace

from zhiku import KnowledgeBase
from zhiku.core.documents import Segment
from zhiku.knowledge_base.dataset import Dataset


def assert_stores_match_rows(kb: KnowledgeBase, dataset: Dataset) -> list[Segment]:
    """Vector and BM25 point ids equal the point row ids (segments without children, child
    chunks, summaries), with the rows' enabled flags, and the points with keywords are exactly those with
    postings: no orphan, no missing point, no segment hidden from search or served against its
    flag. Returns the segment rows (with their children)."""
    segments = dataset.segments(with_children=True)
    assert len({segment.id for segment in segments}) == len(segments), "duplicate segment rows"
    rows = [
        replace(child, enabled=child.enabled and segment.enabled)
        for segment in segments
        for child in segment.children
    ] + [segment for segment in segments if not segment.children]
    rows += [
        replace(segment.summary, enabled=segment.summary.enabled and segment.enabled)
        for segment in segments
        if segment.summary is not None
    ]
    row_ids = {row.id for row in rows}
    assert len(row_ids) == len(rows), "duplicate point rows"
    index = kb.dataset_index(dataset.id)
    vector_ids, fulltext_ids = index.vector.ids(), index.fulltext.ids()
    assert vector_ids == row_ids, (
        f"vector store: {len(vector_ids - row_ids)} orphan point(s), {len(row_ids - vector_ids)} missing"
    )
    assert fulltext_ids == row_ids, (
        f"BM25 store: {len(fulltext_ids - row_ids)} orphan point(s), {len(row_ids - fulltext_ids)} missing"
    )
    disabled = {row.id for row in rows if not row.enabled}
    assert index.vector.disabled_ids() == disabled, "vector store: enabled flags differ from the rows'"
    assert index.fulltext.disabled_ids() == disabled, "BM25 store: enabled flags differ from the rows'"
    with_keywords = {row.id for row in rows if row.keywords}
    posting_ids = index.keywords.ids() | index.child_keywords.ids()
    assert posting_ids == with_keywords, (
        f"keyword postings: {len(posting_ids - with_keywords)} orphan segment(s), "
        f"{len(with_keywords - posting_ids)} missing"
    )
    return segments
