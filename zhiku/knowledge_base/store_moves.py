"""Move a dataset's points to other store backends (``zhiku stores migrate``), embedding nothing.

What is copied: every point the rows say the dataset has (its segments, or their child chunks,
and their summaries; see :mod:`~zhiku.knowledge_base.indexing.points`) — its dense vector as the
source store holds it, and its BM25 record tokenized again from the row's text by the dataset's
tokenizer (the stores keep tokens only hashed; tokenizing is cheap, embedding is what a copy must
not redo). Keyword postings live in the metadata database and stay where they are.

Nothing is served half-migrated: while the copy runs the dataset searches its current stores
and its writes wait (the copy holds the dataset's write lock, on PostgreSQL for every process).
``datasets.store_backends`` switches only once the target holds exactly the points the rows
want, compared by ids and counts; then the old stores are dropped.

Resumable: a killed run leaves its copy in the target stores, and the next run writes only the
points the target lacks or holds with another vector (a segment edited in between), deletes
those no row wants any more and sets the enabled flags from the rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.config import Settings
from zhiku.core.db.models import DatasetRow, SegmentRow
from zhiku.core.errors import StoreError
from zhiku.datasource.fulltext.base import FullTextStore
from zhiku.datasource.stores import check_backends, open_fulltext, open_vector
from zhiku.datasource.vector.base import VectorRecord, VectorStore
from zhiku.knowledge_base.catalog import dataset_row_named
from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex
from zhiku.knowledge_base.indexing.points import Point
from zhiku.knowledge_base.metadata_points import all_payloads
from zhiku.knowledge_base.opened_indexes import OpenedIndexes

#: segments read, and their points copied, at a time
BATCH_SEGMENTS = 500

#: ``on_progress(segments done, segments)``
MoveProgress = Callable[[int, int], None]


@dataclass
class StoreMove:
    """What one dataset's move did: ``copied`` points written by this run, ``kept`` already in
    the target from an earlier run, ``removed`` held there for rows gone since."""

    dataset: str
    source: dict[str, str]
    target: dict[str, str]
    points: int = 0
    copied: int = 0
    kept: int = 0
    removed: int = 0

    @property
    def moved(self) -> bool:
        return self.source != self.target


def backends_of(settings: Settings, row: DatasetRow) -> dict[str, str]:
    """The backends a dataset's stores are on now."""
    stores = settings.with_backends(row.store_backends or {})
    return {"vector": stores.vector_backend, "fulltext": stores.fulltext_backend}


class StoreMoves:
    """Moves datasets between store backends, one at a time."""

    def __init__(self, settings: Settings, sessions: sessionmaker[Session], indexes: OpenedIndexes) -> None:
        self._settings = settings
        self._sessions = sessions
        self._indexes = indexes

    def backends(self, name_or_id: str) -> dict[str, str]:
        """``{"vector": name, "fulltext": name}``: where the dataset's stores are."""
        with self._sessions() as session:
            return backends_of(self._settings, dataset_row_named(session, name_or_id))

    def move(
        self, name_or_id: str, target: dict[str, str], *, on_progress: MoveProgress | None = None
    ) -> StoreMove:
        """Copy the dataset's points to the ``target`` backends (``{"vector", "fulltext"}``),
        check the copy, switch the dataset over and drop its old stores. Nothing to do when it is
        there already. StoreError (the dataset unchanged, on its old stores) when the source
        lacks a point's vector or the copy does not match the rows."""
        with self._sessions() as session:
            row = dataset_row_named(session, name_or_id)
            dataset_id, name, dim = row.id, row.name, row.embedding_dim
            move = StoreMove(name, backends_of(self._settings, row), dict(target))
        if not move.moved:
            return move
        stores = self._settings.with_backends(target)
        check_backends(stores)
        self._indexes.check_may_open(target)
        index = self._indexes.dataset_index(dataset_id)
        with index.write_lock():
            vector, fulltext = open_vector(stores, dataset_id, dim), open_fulltext(stores, dataset_id)
            try:
                self._copy(index, vector, fulltext, move, on_progress)
                payloads = all_payloads(self._sessions, dataset_id)  # the copy may have been resumed
                vector.optimize(payloads)
                fulltext.optimize(payloads)
            finally:
                vector.close()
                fulltext.close()
            with self._sessions.begin() as session:
                session.execute(
                    update(DatasetRow).where(DatasetRow.id == dataset_id).values(store_backends=move.target)
                )
            self._indexes.forget(dataset_id)
            index.drop()
        return move

    def _copy(
        self,
        index: DatasetIndex,
        vector: VectorStore,
        fulltext: FullTextStore,
        move: StoreMove,
        on_progress: MoveProgress | None,
    ) -> None:
        wanted: set[str] = set()
        disabled: set[str] = set()
        has_text = fulltext.ids()
        segment_ids = self._segment_ids(index.dataset_id)
        for done, batch in _batches(segment_ids):
            points = index.points.current(batch)
            wanted.update(p.id for p in points)
            disabled.update(p.id for p in points if not p.enabled)
            vectors = index.vector.vectors([p.id for p in points])
            lacking = [p.id for p in points if p.id not in vectors]
            if lacking:
                raise StoreError(
                    f"dataset {move.dataset!r}: {len(lacking)} points have no vector in its "
                    f"{move.source['vector']} store (the first: {lacking[0]}); it stays there. Edit "
                    "those segments (or re-add their documents) to index them again, then move it"
                )
            held = vector.vectors([p.id for p in points])
            needed = [p for p in points if p.id not in has_text or not _same(held.get(p.id), vectors[p.id])]
            _write(index, vector, fulltext, needed, vectors)
            move.copied += len(needed)
            move.kept += len(points) - len(needed)
            if on_progress:
                on_progress(done, len(segment_ids))
        move.points = len(wanted)
        for store in (vector, fulltext):
            unwanted = sorted(store.ids() - wanted)
            store.delete(unwanted)
            if store is vector:
                move.removed = len(unwanted)
            store_disabled = store.disabled_ids()
            store.set_enabled(sorted(store_disabled - disabled), True)
            store.set_enabled(sorted(disabled - store_disabled), False)
            store.flush()
            held_ids = store.ids()
            if held_ids != wanted or store.count() != len(wanted) or store.disabled_ids() != disabled:
                raise StoreError(
                    f"dataset {move.dataset!r}: the copy holds {len(held_ids)} points, the rows want "
                    f"{len(wanted)}; it stays on its old stores. Run the move again"
                )

    def _segment_ids(self, dataset_id: str) -> list[str]:
        with self._sessions() as session:
            statement = (
                select(SegmentRow.id)
                .where(SegmentRow.dataset_id == dataset_id)
                .order_by(SegmentRow.document_id, SegmentRow.position)
            )
            return list(session.scalars(statement))


def _batches(ids: list[str]) -> Iterator[tuple[int, list[str]]]:
    """``(ids done after this batch, batch)``."""
    for start in range(0, len(ids), BATCH_SEGMENTS):
        batch = ids[start : start + BATCH_SEGMENTS]
        yield start + len(batch), batch


def _same(held: np.ndarray | None, source: np.ndarray) -> bool:
    """Whether the target's vector points where the source's does (a Qdrant collection keeps
    vectors normalised, pgvector as given)."""
    if held is None:
        return False
    norms = float(np.linalg.norm(held)) * float(np.linalg.norm(source))
    return norms > 0 and float(np.dot(held, source)) / norms > 1 - 1e-5


def _write(
    index: DatasetIndex,
    vector: VectorStore,
    fulltext: FullTextStore,
    points: list[Point],
    vectors: dict[str, np.ndarray],
) -> None:
    """The BM25 record first, then the vector: a point whose vector is in the target has its
    text there too, which is what a resumed run checks."""
    if not points:
        return
    tokens = [index.tokenizer.tokenize(p.content) for p in points]
    fulltext.upsert(index.points.text_records(points, tokens))
    fulltext.flush()
    vector.upsert(
        [
            VectorRecord(p.id, vectors[p.id], p.document_id, p.enabled, summary=p.summary, section=p.section)
            for p in points
        ]
    )
    vector.flush()
