"""jieba keyword store: a postings table (keyword, segment, term weight) in the metadata DB.

Unlike a JSON blob of keyword → segment ids rewritten under a lock, postings are rows: a write
touches only its segments' rows, inside the same transaction as the segment rows. Search scores
score(segment) = Σ over the query's distinct keywords of weight(keyword, segment) × idf(keyword),
the IDF counted from the dataset's own postings (jieba's table knows no English, nor a dataset's
jargon), so rare query words count more than common ones.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Column, Select, String, Table, cast, delete, func, insert, or_, select
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
from zhiku.text.keywords import SATURATED_WEIGHT, idf, query_keywords
from zhiku.text.tokenizer import Tokenizer


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

#: Query words searched at most (a pasted page would otherwise read every posting).
MAX_QUERY_WORDS = 32
#: Postings read per query word: its heaviest, from the (dataset, keyword, weight) index; this
#: many per hit asked for, within bounds. A point outside every word's heaviest few rarely
#: makes the top hits.
POSTINGS_PER_HIT = 10
POSTINGS_MIN = 100
POSTINGS_PER_WORD = 500
#: Document frequencies are counted up to this.
DF_COUNT_MAX = 20000
#: Seconds a dataset's point count, and a common word's counted frequency, are reused.
POINT_COUNT_TTL = 30.0
#: Common words' frequencies remembered per store at most.
DF_CACHE_SIZE = 4096


def bm25_idf(points: int, frequency: int) -> float:
    """BM25's IDF of a word found in ``frequency`` of ``points`` points (never negative)."""
    return math.log(1 + (points - frequency + 0.5) / (frequency + 0.5))


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
        self._points_counted: tuple[float, int] | None = None
        self._frequencies: dict[str, tuple[float, int]] = {}

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
        summaries of the summary index only if ``summaries``), best first, with their scores.

        Bounded whatever the dataset's size: at most :data:`MAX_QUERY_WORDS` words (the rarest by
        jieba's table), each reading at most :data:`POSTINGS_PER_HIT` × ``limit`` postings (its
        heaviest, straight from the covering index); a word with more is counted (up to
        :data:`DF_COUNT_MAX`, the count reused for :data:`POINT_COUNT_TTL` seconds).
        """
        words = query_keywords(self.tokenizer.tokenize(query))
        if not words or (scope is not None and scope.empty):
            return []
        if len(words) > MAX_QUERY_WORDS:
            words = sorted(sorted(words, key=lambda w: -idf(w))[:MAX_QUERY_WORDS])
        scores: dict[str, float] = {}
        per_word = min(POSTINGS_PER_WORD, max(POSTINGS_MIN, POSTINGS_PER_HIT * limit))
        with self._sessions() as session:
            points = self._point_count(session)
            for word in words:
                postings = session.execute(self._postings_of(word, per_word, scope, summaries)).all()
                found = len(postings)
                if found == per_word or scope is not None:
                    found = self._document_frequency(session, word)
                weight = bm25_idf(points, found)
                for point_id, value in postings:
                    scores[point_id] = scores.get(point_id, 0.0) + value * weight
        best = heapq.nsmallest(limit, scores.items(), key=lambda item: (-item[1], item[0]))
        return [(point_id, float(value)) for point_id, value in best]

    def attainable(self, query: str) -> float:
        """The most :meth:`search` could score for ``query``: each of its words (those a search
        reads) at its IDF with a saturated weight. A hit's score over it is lexical evidence like
        BM25's (:mod:`zhiku.retrieval.relevance`); a keyword a user gave a segment weighs more than
        the saturation, so a match on it counts as full evidence. A word no point holds counts at
        the IDF of a word one point holds."""
        words = query_keywords(self.tokenizer.tokenize(query))
        if not words:
            return 0.0
        if len(words) > MAX_QUERY_WORDS:
            words = sorted(sorted(words, key=lambda w: -idf(w))[:MAX_QUERY_WORDS])
        with self._sessions() as session:
            points = self._point_count(session)
            frequencies = [max(1, self._document_frequency(session, word)) for word in words]
        return math.fsum(bm25_idf(points, found) * SATURATED_WEIGHT for found in frequencies)

    def _postings_of(
        self, word: str, limit: int, scope: DocumentScope | None, summaries: bool
    ) -> Select[Any]:
        """The heaviest ``limit`` ``(point, weight)`` postings of ``word`` that ``scope`` (and
        ``summaries``) admit."""
        postings, point_id, points = self._layout.postings.c, self._layout.point_id, self._layout.points.c
        statement = (
            select(point_id, postings.weight)
            .where(postings.dataset_id == self.dataset_id)
            .where(postings.keyword == word)
        )
        only_children = not summaries and "kind" in points
        if scope is not None or only_children:
            statement = statement.join(self._layout.points, points.id == point_id)
        if scope is not None:
            statement = self._scoped(statement, scope)
        if only_children:
            statement = statement.where(points.kind == CHILD_KIND)
        return statement.order_by(postings.weight.desc(), point_id).limit(limit)

    def _document_frequency(self, session: Session, word: str) -> int:
        """Points of the dataset with a posting of ``word``, counted up to :data:`DF_COUNT_MAX`
        (past it a word is common enough that its exact rarity hardly matters), reused for
        :data:`POINT_COUNT_TTL` seconds: common words come back in query after query."""
        now = time.monotonic()
        cached = self._frequencies.get(word)
        if cached is not None and now - cached[0] <= POINT_COUNT_TTL:
            return cached[1]
        postings = self._layout.postings.c
        some = (
            select(postings.keyword)
            .where(postings.dataset_id == self.dataset_id)
            .where(postings.keyword == word)
            .limit(DF_COUNT_MAX)
            .subquery()
        )
        counted = int(session.scalar(select(func.count()).select_from(some)) or 0)
        if len(self._frequencies) >= DF_CACHE_SIZE:
            self._frequencies.clear()
        self._frequencies[word] = (now, counted)
        return counted

    def _point_count(self, session: Session) -> int:
        """The dataset's points, for the IDF; re-counted at most every :data:`POINT_COUNT_TTL`
        seconds (the count only scales every word's IDF alike)."""
        now = time.monotonic()
        if self._points_counted is None or now - self._points_counted[0] > POINT_COUNT_TTL:
            points = self._layout.points.c
            counted = session.scalar(select(func.count()).where(points.dataset_id == self.dataset_id))
            self._points_counted = (now, int(counted or 0))
        return self._points_counted[1]

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
