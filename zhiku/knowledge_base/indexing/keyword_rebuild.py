"""Rebuild a dataset's keyword postings and full-text (BM25) records from its rows: after the
extraction changed, or the dataset's jieba user dictionary did (re-read first, so its words take
effect without a restart). Both channels tokenize with the dictionary, so both are rebuilt: a
BM25 store left with the old tokens would disagree with the keyword channel, and with its own
queries once a process reads the new dictionary. The vectors do not change.

Batch by batch, each in one transaction under the dataset's write lock, so searches and edits go
on meanwhile and a stop (``should_stop``, or an interrupt) leaves every batch whole: rebuilt, or
as it was. A segment whose keywords a user gave (``keywords_given``, set by every edit) keeps
them, weighted above the extracted ones; every other point's keywords are extracted again and
shown. A segment row from before that flag existed (NULL) is judged as it used to be: keywords
that differ from what extraction shows were given. Child chunks and summaries have no keywords
of a user's: theirs are always extracted again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, NamedTuple

from sqlalchemy import Select, bindparam, select, update
from sqlalchemy import false as sa_false
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
    segments = select(
        SegmentRow.id, SegmentRow.content, SegmentRow.keywords, SegmentRow.keywords_given
    ).where(SegmentRow.dataset_id == index.dataset_id, SegmentRow.id.not_in(parents))
    never_given = sa_false().label("keywords_given")
    children = select(ChildChunkRow.id, ChildChunkRow.content, ChildChunkRow.keywords, never_given).where(
        ChildChunkRow.dataset_id == index.dataset_id
    )
    done = 0
    for statement, store, table in (
        (segments, index.keywords, SegmentRow),
        (children, index.child_keywords, ChildChunkRow),
    ):
        for batch in _batches(index, statement, batch_size):
            if should_stop is not None and should_stop():
                return done
            with index.write_lock(), index.sessions.begin() as session:
                _rebuild_batch(index, store, table, session, batch)
            done += len(batch)
            if on_progress is not None:
                on_progress(done)
    # every segment, parents included: their children and summaries are full-text records too
    every_segment = select(
        SegmentRow.id, SegmentRow.content, SegmentRow.keywords, SegmentRow.keywords_given
    ).where(SegmentRow.dataset_id == index.dataset_id)
    for batch in _batches(index, every_segment, batch_size):
        if should_stop is not None and should_stop():
            return done
        with index.write_lock():
            index.retokenize_fulltext([point.id for point in batch])
    return done


class _Point(NamedTuple):
    """A point's row as the rebuild reads it (``given``: None for a row older than the flag)."""

    id: str
    content: str
    keywords: list[str]
    given: bool | None


def _batches(
    index: DatasetIndex, statement: Select[str, str, list[str], bool | None], size: int
) -> Iterator[list[_Point]]:
    """Rows of ``statement`` in id order, ``size`` at a time (keyset paging: rows written
    meanwhile never shift a page)."""
    id_column = statement.selected_columns[0]
    after = ""
    while True:
        with index.sessions() as session:
            rows = session.execute(statement.where(id_column > after).order_by(id_column).limit(size)).all()
        if not rows:
            return
        yield [
            _Point(row[0], row[1], list(row[2] or []), None if row[3] is None else bool(row[3]))
            for row in rows
        ]
        after = rows[-1][0]


def _rebuild_batch(
    index: DatasetIndex,
    store: KeywordStore,
    table: type[SegmentRow] | type[ChildChunkRow],
    session: Session,
    batch: list[_Point],
) -> None:
    """The postings of ``batch`` anew, and the keywords shown by its extracted points."""
    extractor = index.keyword_extractor
    postings, shown = [], []
    for point in batch:
        tokens = extractor.tokenizer.tokenize(point.content)
        extracted = extractor.shown(tokens)
        given = point.given if point.given is not None else point.keywords != extracted
        if given and point.keywords:
            postings.append((point.id, extractor.with_given(point.keywords, tokens)))
        else:
            postings.append((point.id, extractor.postings(tokens)))
            if extracted != point.keywords:
                shown.append({"point_id": point.id, "shown": extracted})
    store.delete_segments(session, [point.id for point in batch])
    store.add(session, postings)
    if shown:
        rows = table.metadata.tables[table.__tablename__]
        statement = update(rows).where(rows.c.id == bindparam("point_id")).values(keywords=bindparam("shown"))
        session.execute(statement, shown)  # Core executemany: one statement for the batch
