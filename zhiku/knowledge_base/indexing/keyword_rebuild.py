"""Rebuild a dataset's keyword postings and full-text (BM25) records from its rows: after the
extraction changed, or the dataset's jieba user dictionary did (re-read first, so its words take
effect without a restart). Both channels tokenize with the dictionary, so both are rebuilt: a
BM25 store left with the old tokens would disagree with the keyword channel, and with its own
queries once a process reads the new dictionary. The vectors do not change.

Batch by batch, each in one transaction under the dataset's write lock, so searches and edits go
on meanwhile and a stop (``should_stop``, or an interrupt) leaves every batch whole: rebuilt, or
as it was. A point keeps the keywords it shows; those that differ from what extraction shows
were given by a user, and stay weighted above the extracted ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from zhiku.core.db.models import CHILD_KIND, ChildChunkRow, SegmentRow

if TYPE_CHECKING:
    from zhiku.datasource.keyword import KeywordStore
    from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex

#: Points rebuilt per transaction.
BATCH_SIZE = 500


def rebuild_keywords(
    index: DatasetIndex,
    *,
    batch_size: int = BATCH_SIZE,
    should_stop: Callable[[], bool] | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> int:
    """Rebuild the postings of every segment and child chunk of ``index``'s dataset, then their
    full-text records; returns how many points' postings were rebuilt (fewer than all when
    ``should_stop`` said so between batches)."""
    index.reload_keyword_tokenizer()
    parents = select(ChildChunkRow.segment_id).where(
        ChildChunkRow.dataset_id == index.dataset_id, ChildChunkRow.kind == CHILD_KIND
    )
    # a parent's own text has no postings: its children are its points
    segments = select(SegmentRow.id, SegmentRow.content, SegmentRow.keywords).where(
        SegmentRow.dataset_id == index.dataset_id, SegmentRow.id.not_in(parents)
    )
    children = select(ChildChunkRow.id, ChildChunkRow.content, ChildChunkRow.keywords).where(
        ChildChunkRow.dataset_id == index.dataset_id
    )
    done = 0
    for statement, store in ((segments, index.keywords), (children, index.child_keywords)):
        for batch in _batches(index, statement, batch_size):
            if should_stop is not None and should_stop():
                return done
            with index.write_lock(), index.sessions.begin() as session:
                _rebuild_batch(index, store, session, batch)
            done += len(batch)
            if on_progress is not None:
                on_progress(done)
    # every segment, parents included: their children and summaries are full-text records too
    every_segment = select(SegmentRow.id, SegmentRow.content, SegmentRow.keywords).where(
        SegmentRow.dataset_id == index.dataset_id
    )
    for batch in _batches(index, every_segment, batch_size):
        if should_stop is not None and should_stop():
            return done
        with index.write_lock():
            index.retokenize_fulltext([segment_id for segment_id, _, _ in batch])
    return done


def _batches(
    index: DatasetIndex, statement: Select[str, str, list[str]], size: int
) -> Iterator[list[tuple[str, str, list[str]]]]:
    """Rows of ``statement`` in id order, ``size`` at a time (keyset paging: rows written
    meanwhile never shift a page)."""
    id_column = statement.selected_columns[0]
    after = ""
    while True:
        with index.sessions() as session:
            rows = session.execute(statement.where(id_column > after).order_by(id_column).limit(size)).all()
        if not rows:
            return
        yield [(row[0], row[1], list(row[2] or [])) for row in rows]
        after = rows[-1][0]


def _rebuild_batch(
    index: DatasetIndex, store: KeywordStore, session: Session, batch: list[tuple[str, str, list[str]]]
) -> None:
    extractor = index.keyword_extractor
    postings = []
    for point_id, content, keywords in batch:
        tokens = extractor.tokenizer.tokenize(content)
        given = keywords if keywords and keywords != extractor.shown(tokens) else []
        weights = extractor.with_given(given, tokens) if given else extractor.postings(tokens)
        postings.append((point_id, weights))
    store.delete_segments(session, [point_id for point_id, _, _ in batch])
    store.add(session, postings)
