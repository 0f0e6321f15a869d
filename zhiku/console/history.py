"""Each dataset's recent hit-testing queries, kept in the metadata database so a restart keeps
them, each with the search method it ran with (running it again runs it the same way).

Bounded: the newest :data:`PER_DATASET` a dataset, a query at most :data:`MAX_QUERY_CHARS`
long; the same query run again with the same method moves to the top instead of repeating.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db.models import HitTestQueryRow

PER_DATASET = 50
MAX_QUERY_CHARS = 500


@dataclass(frozen=True)
class PastQuery:
    dataset_id: str
    query: str
    search_method: str
    hits: int


class QueryHistory:
    def __init__(self, sessions: sessionmaker[Session], per_dataset: int = PER_DATASET) -> None:
        self._sessions = sessions
        self._per_dataset = per_dataset

    def add(self, item: PastQuery) -> None:
        query = item.query[:MAX_QUERY_CHARS]
        with self._sessions.begin() as session:
            session.execute(
                delete(HitTestQueryRow).where(
                    HitTestQueryRow.dataset_id == item.dataset_id,
                    HitTestQueryRow.query == query,
                    HitTestQueryRow.search_method == item.search_method,
                )
            )
            session.add(
                HitTestQueryRow(
                    dataset_id=item.dataset_id, query=query, search_method=item.search_method, hits=item.hits
                )
            )
            session.flush()
            kept = select(HitTestQueryRow.id).where(HitTestQueryRow.dataset_id == item.dataset_id)
            kept = kept.order_by(HitTestQueryRow.created_at.desc()).limit(self._per_dataset)
            session.execute(
                delete(HitTestQueryRow).where(
                    HitTestQueryRow.dataset_id == item.dataset_id,
                    HitTestQueryRow.id.not_in(kept.scalar_subquery()),
                )
            )

    def recent(self, dataset_id: str) -> list[PastQuery]:
        """This dataset's queries, newest first."""
        with self._sessions() as session:
            rows = session.scalars(
                select(HitTestQueryRow)
                .where(HitTestQueryRow.dataset_id == dataset_id)
                .order_by(HitTestQueryRow.created_at.desc())
                .limit(self._per_dataset)
            ).all()
            return [PastQuery(row.dataset_id, row.query, row.search_method, row.hits) for row in rows]
