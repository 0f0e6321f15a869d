"""jieba keyword store: a postings table (keyword, segment, TF-IDF weight) in the metadata DB.

Unlike a JSON blob of keyword → segment ids rewritten under a lock, postings are rows: a write
touches only its segments' rows, inside the same transaction as the segment rows, and search is a
scored, indexed aggregate: score(segment) = Σ over the query's distinct keywords of
weight(keyword, segment) × idf(keyword) — so rare query words count more than common ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Column, Select, String, Table, case, cast, delete, func, insert, or_, select
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.sql.elements import ColumnElement

from zhiku.core.db.models import (
    CHILD_KIND,
    ChildChunkRow,
    ChildKeywordPostingRow,
    KeywordPostingRow,
    SegmentRow,
)
from zhiku.core.scope import DocumentScope
from zhiku.core.sections import SECTION_KEY, SEPARATOR
from zhiku.datasource.keyword.extraction import idf
from zhiku.datasource.tokenizer import Tokenizer


@dataclass(frozen=True)
class PostingsLayout:
    """Where a keyword store's postings live: the postings table (its point id column, keyword,
    dataset_id, weight) and the table of the points, whose ``document_id`` a scope filters on.
    ``parent_column`` names the points' segment column when the points are child chunks (their
    section is their segment's).

    Tables, not mapped classes: inserts are a Core executemany, without the ORM's per-row
    bookkeeping of a bulk insert (about a quarter of the time of writing postings).
    """

    postings: Table
    point_column: str
    points: Table
    parent_column: str | None = None

    @property
    def point_id(self) -> Column[str]:
        return self.postings.c[self.point_column]


def _table(row: type[object]) -> Table:
    return KeywordPostingRow.metadata.tables[row.__tablename__]  # type: ignore[attr-defined]


#: Segments are the points (paragraph and Q&A datasets).
SEGMENT_POSTINGS = PostingsLayout(_table(KeywordPostingRow), "segment_id", _table(SegmentRow))
#: Child chunks are the points (parent-child datasets).
CHILD_POSTINGS = PostingsLayout(
    _table(ChildKeywordPostingRow), "child_id", _table(ChildChunkRow), parent_column="segment_id"
)
_SEGMENTS = _table(SegmentRow)


def in_section(seg_metadata: Column[object], section: str) -> ColumnElement[bool]:
    """Segments whose ``seg_metadata`` section is ``section`` or a section under it."""
    path = cast(seg_metadata[SECTION_KEY].as_string(), String)
    under = path.startswith(section + SEPARATOR, autoescape=True)
    return or_(path == section, under)


class KeywordStore:
    """Scored keyword search over one dataset's postings (of segments, or of child chunks)."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        dataset_id: str,
        tokenizer: Tokenizer,
        layout: PostingsLayout = SEGMENT_POSTINGS,
    ) -> None:
        self._sessions = sessions
        self.dataset_id = dataset_id
        self.tokenizer = tokenizer
        self._layout = layout

    def add(self, session: Session, postings: Iterable[tuple[str, Sequence[tuple[str, float]]]]) -> None:
        """Add ``(point_id, [(keyword, weight), ...])`` rows in the caller's transaction."""
        rows = [
            {
                self._layout.point_column: segment_id,
                "keyword": keyword[:255],
                "dataset_id": self.dataset_id,
                "weight": weight,
            }
            for segment_id, keywords in postings
            for keyword, weight in dict(keywords).items()
        ]
        if rows:
            session.execute(insert(self._layout.postings), rows)

    def delete_segments(self, session: Session, segment_ids: Sequence[str]) -> None:
        """Remove the postings of these points in the caller's transaction."""
        for start in range(0, len(segment_ids), 500):
            batch = list(segment_ids[start : start + 500])
            session.execute(delete(self._layout.postings).where(self._layout.point_id.in_(batch)))

    def search(
        self, query: str, limit: int, scope: DocumentScope | None = None, *, summaries: bool = False
    ) -> list[tuple[str, float]]:
        """Points sharing keywords with the query (of the documents and section ``scope`` admits;
        summaries of the summary index only if ``summaries``), best first, with their scores."""
        words = sorted(set(self.tokenizer.tokenize(query)))
        if not words or (scope is not None and scope.empty):
            return []
        postings, point_id, points = self._layout.postings.c, self._layout.point_id, self._layout.points.c
        query_idf = case({word: idf(word) for word in words}, value=postings.keyword)
        score = func.sum(postings.weight * query_idf).label("score")
        statement = (
            select(point_id, score)
            .where(postings.dataset_id == self.dataset_id)
            .where(postings.keyword.in_(words))
        )
        only_children = not summaries and "kind" in points
        if scope is not None or only_children:
            statement = statement.join(self._layout.points, points.id == point_id)
        if scope is not None:
            statement = self._scoped(statement, scope)
        if only_children:
            statement = statement.where(points.kind == CHILD_KIND)
        with self._sessions() as session:
            rows = session.execute(
                statement.group_by(point_id).order_by(score.desc(), point_id).limit(limit)
            ).all()
        return [(segment_id, float(value)) for segment_id, value in rows]

    def _scoped(self, statement: Select[str, Any], scope: DocumentScope) -> Select[str, Any]:
        """``statement`` (already joined to the points) kept to the documents and section of
        ``scope``."""
        layout, points = self._layout, self._layout.points.c
        if not scope.all_documents:
            of_scope = points.document_id.in_(sorted(scope.ids))
            statement = statement.where(~of_scope if scope.exclude else of_scope)
        if scope.section is not None:
            if layout.parent_column is None:
                statement = statement.where(in_section(points.seg_metadata, scope.section))
            else:
                statement = statement.join(_SEGMENTS, _SEGMENTS.c.id == points[layout.parent_column]).where(
                    in_section(_SEGMENTS.c.seg_metadata, scope.section)
                )
        return statement

    def count(self) -> int:
        with self._sessions() as session:
            return int(
                session.scalar(
                    select(func.count(func.distinct(self._layout.point_id))).where(
                        self._layout.postings.c.dataset_id == self.dataset_id
                    )
                )
                or 0
            )

    def ids(self) -> set[str]:
        """Points that have postings, to compare with the other stores after a crash."""
        with self._sessions() as session:
            return set(
                session.scalars(
                    select(self._layout.point_id)
                    .where(self._layout.postings.c.dataset_id == self.dataset_id)
                    .distinct()
                )
            )
