"""jieba keyword store: a postings table (keyword, segment, TF-IDF weight) in the metadata DB.

Unlike a JSON blob of keyword → segment ids rewritten under a lock, postings are rows: a write
touches only its segments' rows, inside the same transaction as the segment rows, and search is a
scored, indexed aggregate: score(segment) = Σ over the query's distinct keywords of
weight(keyword, segment) × idf(keyword) — so rare query words count more than common ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import delete, func, insert, select
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db.models import KeywordPostingRow
from zhiku.datasource.keyword.extraction import idf
from zhiku.datasource.tokenizer import Tokenizer


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
            session.execute(insert(KeywordPostingRow), rows)

    def delete_segments(self, session: Session, segment_ids: Sequence[str]) -> None:
        """Remove the postings of these segments in the caller's transaction."""
        for start in range(0, len(segment_ids), 500):
            batch = list(segment_ids[start : start + 500])
            session.execute(delete(KeywordPostingRow).where(KeywordPostingRow.segment_id.in_(batch)))

    def search(self, query: str, limit: int) -> list[tuple[str, float]]:
        """Segments sharing keywords with the query, best first, with their scores."""
        words = sorted(set(self.tokenizer.tokenize(query)))
        if not words:
            return []
        weights = {word: idf(word) for word in words}
        with self._sessions() as session:
            rows = session.execute(
                select(KeywordPostingRow.segment_id, KeywordPostingRow.keyword, KeywordPostingRow.weight)
                .where(KeywordPostingRow.dataset_id == self.dataset_id)
                .where(KeywordPostingRow.keyword.in_(words))
            ).all()
        scores: dict[str, float] = {}
        for segment_id, keyword, weight in rows:
            scores[segment_id] = scores.get(segment_id, 0.0) + weight * weights[keyword]
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        return ranked[:limit]

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
