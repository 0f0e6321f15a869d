"""jieba keyword store: a postings table (keyword, segment, TF-IDF weight) in the metadata DB.

Unlike a JSON blob of keyword → segment ids rewritten under a lock, postings are rows: a write
touches only its segments' rows, inside the same transaction as the segment rows, and search is a
scored, indexed aggregate: score(segment) = Σ over the query's distinct keywords of
weight(keyword, segment) × idf(keyword) — so rare query words count more than common ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import case, delete, func, insert, select
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db.models import KeywordPostingRow, SegmentRow
from zhiku.core.scope import DocumentScope
from zhiku.datasource.keyword.extraction import idf
from zhiku.datasource.tokenizer import Tokenizer

#: The table, not the mapped class, to insert into: a Core executemany, without the ORM's per-row
#: bookkeeping of a bulk insert (about a quarter of the time of writing postings).
_POSTINGS = KeywordPostingRow.metadata.tables[KeywordPostingRow.__tablename__]


class KeywordStore:
    """Scored keyword search over one dataset's postings."""

    def __init__(self, sessions: sessionmaker[Session], dataset_id: str, tokenizer: Tokenizer) -> None:
        self._sessions = sessions
        self.dataset_id = dataset_id
        self.tokenizer = tokenizer

    def add(self, session: Session, postings: Iterable[tuple[str, Sequence[tuple[str, float]]]]) -> None:
        """Add ``(segment_id, [(keyword, weight), ...])`` rows in the caller's transaction."""
        rows = [
            {
                "segment_id": segment_id,
                "keyword": keyword[:255],
                "dataset_id": self.dataset_id,
                "weight": weight,
            }
            for segment_id, keywords in postings
            for keyword, weight in dict(keywords).items()
        ]
        if rows:
            session.execute(insert(_POSTINGS), rows)

    def delete_segments(self, session: Session, segment_ids: Sequence[str]) -> None:
        """Remove the postings of these segments in the caller's transaction."""
        for start in range(0, len(segment_ids), 500):
            batch = list(segment_ids[start : start + 500])
            session.execute(delete(KeywordPostingRow).where(KeywordPostingRow.segment_id.in_(batch)))

    def search(self, query: str, limit: int, scope: DocumentScope | None = None) -> list[tuple[str, float]]:
        """Segments sharing keywords with the query (of documents in ``scope``), best first,
        with their scores."""
        words = sorted(set(self.tokenizer.tokenize(query)))
        if not words or (scope is not None and scope.empty):
            return []
        query_idf = case({word: idf(word) for word in words}, value=KeywordPostingRow.keyword)
        score = func.sum(KeywordPostingRow.weight * query_idf).label("score")
        statement = (
            select(KeywordPostingRow.segment_id, score)
            .where(KeywordPostingRow.dataset_id == self.dataset_id)
            .where(KeywordPostingRow.keyword.in_(words))
        )
        if scope is not None:
            of_scope = SegmentRow.document_id.in_(sorted(scope.ids))
            statement = statement.join(SegmentRow, SegmentRow.id == KeywordPostingRow.segment_id).where(
                ~of_scope if scope.exclude else of_scope
            )
        with self._sessions() as session:
            rows = session.execute(
                statement.group_by(KeywordPostingRow.segment_id)
                .order_by(score.desc(), KeywordPostingRow.segment_id)
                .limit(limit)
            ).all()
        return [(segment_id, float(value)) for segment_id, value in rows]

    def count(self) -> int:
        with self._sessions() as session:
            return int(
                session.scalar(
                    select(func.count(func.distinct(KeywordPostingRow.segment_id))).where(
                        KeywordPostingRow.dataset_id == self.dataset_id
                    )
                )
                or 0
            )

    def ids(self) -> set[str]:
        """Segments that have postings, to compare with the other stores after a crash."""
        with self._sessions() as session:
            return set(
                session.scalars(
                    select(KeywordPostingRow.segment_id)
                    .where(KeywordPostingRow.dataset_id == self.dataset_id)
                    .distinct()
                )
            )
