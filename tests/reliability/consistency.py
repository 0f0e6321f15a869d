"""What every reliability test checks at its end: the three stores hold exactly the segment rows."""

from __future__ import annotations

from zhiku import KnowledgeBase
from zhiku.core.documents import Segment
from zhiku.knowledge_base.dataset import Dataset


def assert_stores_match_rows(kb: KnowledgeBase, dataset: Dataset) -> list[Segment]:
    """Vector and BM25 point ids equal the segment row ids, with the rows' enabled flags, and the
    segments with keywords are exactly those with postings: no orphan, no missing point, no
    segment hidden from search or served against its flag. Returns the rows."""
    rows = dataset.segments()
    row_ids = {segment.id for segment in rows}
    assert len(row_ids) == len(rows), "duplicate segment rows"
    index = kb.dataset_index(dataset.id)
    vector_ids, fulltext_ids = index.vector.ids(), index.fulltext.ids()
    assert vector_ids == row_ids, (
        f"vector store: {len(vector_ids - row_ids)} orphan point(s), {len(row_ids - vector_ids)} missing"
    )
    assert fulltext_ids == row_ids, (
        f"BM25 store: {len(fulltext_ids - row_ids)} orphan point(s), {len(row_ids - fulltext_ids)} missing"
    )
    disabled = {segment.id for segment in rows if not segment.enabled}
    assert index.vector.disabled_ids() == disabled, "vector store: enabled flags differ from the rows'"
    assert index.fulltext.disabled_ids() == disabled, "BM25 store: enabled flags differ from the rows'"
    with_keywords = {segment.id for segment in rows if segment.keywords}
    posting_ids = index.keywords.ids()
    assert posting_ids == with_keywords, (
        f"keyword postings: {len(posting_ids - with_keywords)} orphan segment(s), "
        f"{len(with_keywords - posting_ids)} missing"
    )
    return rows
