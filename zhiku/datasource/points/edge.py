"""A :class:`PointCollection` on an embedded qdrant-edge shard (Qdrant's engine, in-process).

What a caller must know about qdrant-edge-py 0.9:

- one process at a time: the shard's write-ahead log is locked while it is open, so a second open
  (another process, or the same path twice in this one) raises :class:`StoreError`. zhiku also
  locks ``<shard>.lock`` before it touches the directory, so a second open fails before it could
  take another process's build copy or half-done swap for an interrupted one and remove it;
- writes go to the WAL and are visible at once; :meth:`EdgeCollection.flush` makes them durable
  in the segments;
- the HNSW graph is built only by the shard's ``optimize``, which holds the GIL for its whole run
  (about 25 s for 100k 384-d points), so no other thread of the process runs meanwhile. Before
  that, search scans the points exactly. :meth:`EdgeCollection.optimize` therefore runs it in a
  child process on a copy of the shard and swaps the copy in when it is done: searches keep
  answering from the open shard (exactly, or with its previous index) during the build and wait
  only for the swap (closing the shard and opening the copy); writes wait for the whole build,
  which is therefore killed past a time limit (setting ``index_build_time_limit``, by default
  proportional to the shard's size): the copy is dropped and the open shard, with its previous
  index, goes on serving;
- an interrupted optimisation may leave ``temp_segments/``; it is removed at open (the WAL lock is
  held by then, so no other process can be using it). An interrupted swap leaves the shard's
  directory beside its ``.build`` copy or its ``.old`` original; open finishes or undoes it.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from zhiku.core.errors import StoreError
from zhiku.core.file_lock import FileLock
from zhiku.core.payload_filter import METADATA_PREFIX
from zhiku.core.scope import DocumentScope
from zhiku.datasource.points.collection import (
    DOCUMENT_KEY,
    MAX_FACET_VALUES,
    DocumentPayloads,
    PointData,
    SparseValues,
    VectorSpec,
    VectorValue,
    point_from_record,
    scroll_points,
    store_errors,
)
from zhiku.datasource.points.edge_build import document_filter, write_payloads
from zhiku.datasource.points.edge_config import (
    CONFIG_FILE,
    PART_MIN_POINTS,
    RESCORED,
    ensure_indexes,
    full_scan_kb,
    opened_full_scan,
    payload_indexes,
    read_parts,
    scanned_at_most,
    shard_config,
)
from zhiku.datasource.points.edge_copy import (
    LOCK,
    OLD,
    build_copy,
    finish_swap,
    plan_build,
    remove_copy,
    sibling,
)
from zhiku.datasource.points.edge_filters import ServedFilters, scope_conditions

_TEMP_SEGMENTS = "temp_segments"
#: Below this many points, ``optimize`` runs in this process: no HNSW graph is built for them (see
#: ``index_threshold_kb``), so merging segments takes less than starting a process would.
CHILD_BUILD_MIN_POINTS = 5_000


class EdgeCollection:
    """One qdrant-edge shard directory holding one named vector, set up as ``edge_config`` says:
    its payload indexes (``integer_indexes``: the shard's own integer keys), the int8 copies of
    dense vectors, and the full-scan bound (``index_threshold_kb`` where given: segments smaller
    than it get no HNSW graph, sparse ones no immutable index; Qdrant's default, 10,000 KB, is
    about 6,500 vectors of 384 dimensions). For sparse vectors, ``optimize`` also vacuums deleted
    points, which Qdrant's IDF statistics keep counting until then.

    ``child_build_min_points``: from this many points on, :meth:`optimize` builds in a child
    process on a copy (see the module docstring), killed after ``build_time_limit`` seconds (None:
    in proportion to the points, see ``edge_copy``). Thread-safe: reads wait only for a swap.

    ``search_threads``: the most threads the shard searches its segments with, one a part once a
    build has split it (from two ``part_min_points``); a smaller shard keeps one (``edge_config``).
    """

    #: qdrant-edge-py 0.9 keeps the GIL while it searches (200 searches of two shards take 2.6x
    #: longer in two threads than in one).
    holds_gil = True

    def __init__(
        self,
        path: Path,
        spec: VectorSpec,
        integer_indexes: Sequence[str] = (),
        index_threshold_kb: int | None = None,
        child_build_min_points: int | None = None,
        build_time_limit: float | None = None,
        search_threads: int = 1,
        part_min_points: int = PART_MIN_POINTS,
    ) -> None:
        self.path = Path(path)
        self.spec = spec
        self.search_threads = search_threads
        self.part_min_points = part_min_points
        self._where = f"qdrant-edge shard {self.path}"
        self.index_threshold_kb = index_threshold_kb
        #: whether anything was written since the shard was opened or flushed: closing a shard
        #: that was only searched skips the flush (~0.1 s per shard at every command's exit)
        self._written = False
        self.child_build_min_points = (
            CHILD_BUILD_MIN_POINTS if child_build_min_points is None else child_build_min_points
        )
        self.build_time_limit = build_time_limit
        self._writes = threading.RLock()  # held by each write, and by optimize from copy to swap
        self._readers = threading.Condition()  # counts reads in flight; a swap waits for none
        self._reading_now = 0
        self._swapping = False
        self._filters = ServedFilters()
        self.plain_search_max = 0  # see _open
        self._lock = _shard_lock(self.path)
        self._shard: qe.EdgeShard | None = None
        try:
            finish_swap(self.path)
            self._shard = self._open()
            with store_errors("payload index", self._where):
                self._written = ensure_indexes(self._require(), payload_indexes(integer_indexes))
        except BaseException:
            self.close()
            raise

    def _open(self) -> qe.EdgeShard:
        # a shard keeps the full-scan bound its last build chose (see edge_config); opening a
        # dense one with another would make its next optimize rebuild the graph
        full_scan = opened_full_scan(self.path, self.spec, self.index_threshold_kb)
        parts = read_parts(self.path)
        config = shard_config(self.spec, self.index_threshold_kb, self.search_threads, full_scan, parts)
        try:
            if (self.path / CONFIG_FILE).exists():
                shard = qe.EdgeShard.load(str(self.path), config)
            else:
                self.path.mkdir(parents=True, exist_ok=True)
                shard = qe.EdgeShard.create(str(self.path), config)
        except Exception as exc:
            if "WouldBlock" in str(exc):  # the WAL file lock is held
                raise StoreError(_held_elsewhere(self.path)) from exc
            raise StoreError(f"cannot open qdrant-edge shard {self.path}: {exc}") from exc
        shutil.rmtree(self.path / _TEMP_SEGMENTS, ignore_errors=True)
        self._read_scan_bound()
        return shard

    def _read_scan_bound(self) -> None:
        """``plain_search_max`` from the segments' configs: after an open or an optimize."""
        if self.spec.dim is not None:
            bound = full_scan_kb(self.index_threshold_kb)
            self.plain_search_max = scanned_at_most(self.path, self.spec.name, self.spec.dim, bound)

    def _require(self) -> qe.EdgeShard:
        if self._shard is None:
            raise StoreError(f"the store at {self.path} is closed")
        return self._shard

    def _update(self, what: str, operation: Any) -> None:
        with self._writes, store_errors(what, self._where):
            self._written = True
            try:
                self._require().update(operation)
            finally:  # applied, or maybe in part
                self._filters.written()

    # -- writes ------------------------------------------------------------------------------

    def upsert(self, points: Sequence[PointData]) -> None:
        if not points:
            return
        name = self.spec.name
        batch = [
            qe.Point(p.id, {name: _engine_vector(p.vector)}, p.payload)
            for p in points
            if p.vector is not None
        ]
        self._update("upsert", qe.UpdateOperation.upsert_points(batch))

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            self._update("delete", qe.UpdateOperation.delete_points(list(ids)))

    def delete_document(self, document_id: str) -> None:
        self._update("delete document", qe.UpdateOperation.delete_points_by_filter(_of_document(document_id)))

    def set_payload(self, ids: Sequence[str], payload: dict[str, Any]) -> None:
        # By filter, so unknown ids are skipped (set_payload by id fails half-way on them).
        if ids:
            condition = qe.Filter(must=[qe.HasIdCondition(set(ids))])
            self._update("set payload", qe.UpdateOperation.set_payload_by_filter(condition, payload))

    def write_payloads(self, payloads: DocumentPayloads) -> None:
        with self._writes, store_errors("set payload", self._where):
            self._written = True
            try:
                updates = payloads.updates()
                write_payloads(self._require(), DOCUMENT_KEY, payloads.keys, updates, METADATA_PREFIX)
            finally:  # applied, or maybe in part
                self._filters.written()

    # -- reads -------------------------------------------------------------------------------

    def search(
        self,
        query: VectorValue,
        limit: int,
        *,
        exact: bool = False,
        hnsw_ef: int | None = None,
        acorn: bool = False,
        scope: DocumentScope | None = None,
        summaries: bool = False,
    ) -> list[tuple[str, float]]:
        params = qe.SearchParams(
            exact=exact,
            hnsw_ef=hnsw_ef,
            acorn=qe.AcornSearchParams(enable=True) if acorn else None,
            quantization=None if self.spec.sparse else RESCORED,
        )
        nearest = qe.Query.Nearest(_engine_vector(query), using=self.spec.name)
        with self._reading() as shard, store_errors("search", self._where):
            served = self._filters.of(shard, scope, summaries)
            request = qe.QueryRequest(
                limit=limit,
                query=nearest,
                filter=served,
                params=params,
                with_payload=False,
                with_vector=False,
            )
            return [(str(p.id), float(p.score)) for p in shard.query(request)]

    def best_points(
        self, queries: Sequence[VectorValue], *, summaries: bool = False
    ) -> list[tuple[PointData, float] | None]:
        with self._reading() as shard, store_errors("search", self._where):
            served = self._filters.of(shard, None, summaries)
            requests = [_best_point(_engine_vector(query), self.spec.name, served) for query in queries]
            found = shard.query_batch(qe.QueryBatchRequest(requests)) if requests else []
        return [(point_from_record(b[0], self.spec, True), float(b[0].score)) if b else None for b in found]

    def admitted(self, scope: DocumentScope | None, *, summaries: bool = False) -> int:
        """At most how many points a search in ``scope`` admits: the fewest any one of the
        scope's conditions admits, each counted exactly by its payload index. Qdrant's planner
        takes the same bound of a filter's points (its estimate's ``max``), so a scope admitting
        fewer than ``plain_search_max`` is scanned, never walked (see ``edge_config``)."""
        with self._reading() as shard, store_errors("count", self._where):
            counted: list[qe.Filter | None] = [qe.Filter(must=[c]) for c in scope_conditions(scope)]
            if not counted:
                counted = [self._filters.of(shard, scope, summaries)]
            return min(int(shard.count(qe.CountRequest(exact=False, filter=each))) for each in counted)

    def get_points(self, ids: Sequence[str], with_vector: bool) -> list[PointData]:
        if not ids:
            return []
        with self._reading() as shard, store_errors("get_points", self._where):
            records = shard.retrieve(list(ids), True, [self.spec.name] if with_vector else False)
        return [point_from_record(r, self.spec, with_vector) for r in records]

    def scroll(self, with_vector: bool, page_size: int = 1024) -> Iterator[PointData]:
        vectors = [self.spec.name] if with_vector else False

        def page(offset: Any) -> tuple[Sequence[Any], Any]:
            request = qe.ScrollRequest(offset=offset, limit=page_size, with_payload=True, with_vector=vectors)
            with self._reading() as shard, store_errors("scroll", self._where):
                return shard.scroll(request)

        return scroll_points(page, self.spec, with_vector)

    def value_counts(self, key: str) -> dict[int, int]:
        with self._reading() as shard, store_errors("facet", self._where):
            response = shard.facet(qe.FacetRequest(key, limit=MAX_FACET_VALUES, exact=True))
        return {int(hit.value): int(hit.count) for hit in response.hits}

    def count(self) -> int:
        with self._reading() as shard, store_errors("count", self._where):
            return int(shard.count(qe.CountRequest(exact=True)))

    # -- lifecycle ---------------------------------------------------------------------------

    def flush(self) -> None:
        with self._writes, store_errors("flush", self._where):
            self._require().flush()
            self._written = False

    def optimize(self, payloads: DocumentPayloads | None = None) -> None:
        """Build the index and compact; from ``child_build_min_points`` points on in a child
        process on a copy, searching this shard meanwhile (see the module docstring), with
        ``payloads`` written into the copy first (see ``edge_build``)."""
        with self._writes:
            shard = self._require()
            with store_errors("optimize", self._where):
                points = shard.count(qe.CountRequest(exact=True))
                if points < self.child_build_min_points:
                    if payloads is not None:
                        self.write_payloads(payloads)
                    self._written = True
                    shard.optimize()
                    self._read_scan_bound()
                    return
                shard.flush()
            plan = plan_build(
                self.path, self.spec, points, self.index_threshold_kb, self.search_threads,
                self.part_min_points, self.build_time_limit,
            )  # fmt: skip
            build = build_copy(self.path, payloads, self._where, plan)
            try:
                self._swap_in(build)
            finally:
                remove_copy(build)

    def _swap_in(self, build: Path) -> None:
        """Replace the open shard by the optimised copy at ``build``, once no read is in flight."""
        with self._readers:
            self._swapping = True
            self._readers.wait_for(lambda: self._reading_now == 0)
        try:
            self._close_shard()
            old = sibling(self.path, OLD)
            self.path.rename(old)
            build.rename(self.path)
            shutil.rmtree(old)
            self._shard = self._open()
        finally:
            with self._readers:
                self._swapping = False
                self._readers.notify_all()

    @contextmanager
    def _reading(self) -> Iterator[qe.EdgeShard]:
        """The open shard, not closed by a swap until the caller is done with it."""
        with self._readers:
            self._readers.wait_for(lambda: not self._swapping)
            self._reading_now += 1
        try:
            yield self._require()
        finally:
            with self._readers:
                self._reading_now -= 1
                self._readers.notify_all()

    def close(self) -> None:
        """Close the shard and let another process open it."""
        try:
            self._close_shard()
        finally:
            self._lock.release()

    def _close_shard(self) -> None:
        if self._shard is not None:
            shard, self._shard = self._shard, None
            with store_errors("close", self._where):
                if self._written:
                    shard.flush()
                shard.close()

    def drop(self) -> None:
        """Close and delete the shard directory, then its lock file (while still holding it)."""
        try:
            self._close_shard()
            shutil.rmtree(self.path, ignore_errors=True)
            sibling(self.path, LOCK).unlink(missing_ok=True)
        finally:
            self._lock.release()


def _engine_vector(value: VectorValue) -> Any:
    if isinstance(value, SparseValues):
        return qe.SparseVector(value.indices, value.values)
    return value


def _of_document(document_id: str) -> qe.Filter:
    return document_filter(DOCUMENT_KEY, document_id)


def _best_point(vector: Any, name: str, served: qe.Filter | None) -> qe.QueryRequest:
    """The request for the one best point of ``vector`` that ``served`` admits, with its vector."""
    nearest = qe.Query.Nearest(vector, using=name)
    return qe.QueryRequest(limit=1, query=nearest, filter=served, with_payload=True, with_vector=[name])


def _shard_lock(path: Path) -> FileLock:
    """The shard's own lock, taken before anything is touched: another process's build copy, or
    its swap half-way, is not an interrupted one to clean up (the WAL lock comes only with the
    open, after the cleanup)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(sibling(path, LOCK))
    try:
        acquired = lock.acquire()
    except OSError as exc:
        raise StoreError(f"cannot lock {lock.path} (the embedded store needs file locks): {exc}") from exc
    if not acquired:
        raise StoreError(_held_elsewhere(path))
    return lock


def _held_elsewhere(path: Path) -> str:
    return (
        f"the store at {path} is already open in another process (or twice in this one); the "
        "embedded store admits one process: stop the other process or send the request through "
        "the server that holds it"
    )
