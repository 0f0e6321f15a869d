"""What an embedded shard is set up with: its config, its payload indexes, and up to how many
admitted points a filtered dense search surely scans.

**Payload indexes.** ``enabled``, ``summary``, ``document_id`` and ``sections`` are always
indexed, with a shard's own integer keys (BM25's document length): a search filters on the
first two while some point fails them (see ``edge_filters``), and an unindexed ``summary`` made
Qdrant read each candidate's payload (2.7 against 0.8 ms per dense search at 100k points).
``document_id`` has a UUID index: Qdrant keeps the ids as 128-bit integers, so a search
restricted to some documents tests each point it visits by comparing integers, not strings (the
100k-segment benchmark dataset, 100 candidates among 10% of the documents: dense 0.51 against
1.04 ms, BM25 1.07 against 1.91 ms with a keyword index). An index missing from an older shard,
or of another type, is built at open.

**int8 copies.** A dense shard keeps a scalar-quantized copy of each vector in memory (a quarter
of the vectors' size), built by ``optimize``: a search scores by the copies and rescores the best
``limit`` × :data:`RESCORE_OVERSAMPLING` by the vectors. At 100,000 points of 384 dimensions the
graph search of 100 candidates took 0.63 against 0.95 ms, recall@10 against exact 0.959 against
0.963, and the search among the 9,500 points a 10% filter admits 1.34 against 2.77 ms.

**Scans.** Qdrant plans each segment's filtered search itself: when the filter admits fewer
points than the segment's full-scan bound (in KB of vectors, fixed in the segment's config when
it was built), it scans them, by their int8 copies where the segment has them; else it walks the
graph, which a filter admitting a small share of the points strands (recall@10 0.18 at 10% of
100,000). So a search is left to Qdrant's plan only below the smallest bound of the shard's
graph segments, read from their configs (:func:`scanned_at_most`): a shard built before the bound
was raised keeps its old one until its next build, and a config that cannot be read gives no
bound (the search is then asked to be exact).

**The bound follows the shard's size** (:func:`full_scan_kb`): a fifth of its points, at least
:data:`FULL_SCAN_KB`'s and at most :data:`SCAN_MAX_POINTS`. A scan by the int8 copies costs
about 0.09 µs a point, against 0.14 for the exact search by the float vectors: at a million
points the 95,000 a 10% filter admits take 8.7–9 ms against 13.5–14 (recall@10 1.0 both). Qdrant
also scans an unfiltered search of a segment holding fewer points than its bound, which a fifth
of the shard's points keeps from happening to its graph segment. The shard's config keeps the
bound (:func:`opened_full_scan`), and it is rounded down to a power of two of points: Qdrant
rebuilds every graph segment whose bound differs from its shard's, so a build changes it only
once the shard has doubled or halved.

**BM25's scans.** A sparse shard's filtered search also scans the records the filter admits
while they are fewer than its bound (Qdrant's default: 5,000 records); above it, it walks the
query terms' postings and checks the filter on each, which costs about the same whatever the
filter keeps. At a million records the walk took 10 ms under a filter admitting 10,000 and the
scan 2.8 ms (17 ms for 100,000); at 100,000 records, 1.7 against 3.3 ms for 9,500. So a sparse
shard's bound is a twentieth of its records (of a part's, in a split shard), at least 5,000: a
10% filter at a million records split in two took 10.3–12.4 ms under the whole shard's bound,
whose 50,000 records each part scanned, and 4.2–4.8 ms under a part's. Qdrant keeps a sparse
segment's bound until it rebuilds the segment for another reason (a merge, or the vacuum after
a BM25 reweight), never for the bound alone, so no rounding is needed there.

**Parts.** qdrant-edge-py keeps the GIL while it searches, so the two channels of a hybrid search
run one after the other; what runs side by side is a shard's segments, each read by a thread of
its search pool. A shard of at least two :data:`PART_MIN_POINTS` is split by its build into as
many parts as ``edge_search_threads`` allows (see ``edge_build``), and searched with that many
threads; a smaller shard keeps one segment and one thread, as a pool's idle threads spin for
work and a second thread costs a small search more than it saves (at 100,000 points split in
two, a hybrid search under a 10% filter took 6.8–8.5 ms against 3.7–5.2 unsplit, unfiltered
3.5–5.6 against 2.2–5.0). A split shard is split again once it has
doubled or halved since (its later builds index new points into segments of their own).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from zhiku.datasource.points.collection import (
    DOCUMENT_KEY,
    ENABLED_KEY,
    SECTIONS_KEY,
    SUMMARY_KEY,
    VectorSpec,
)
from zhiku.datasource.points.edge_build import PARTS_FILE

#: Qdrant's full-scan bound of the dense shards, in KB of float vectors: twice its default
#: (10,000), as a scan by the vectors' int8 copies (then the best rescored by the vectors) costs
#: half as much a point: 1.2 against 2.4 ms for 9,500 points. About 13,000 points of 384 dimensions.
FULL_SCAN_KB = 20_000
#: The share of a dense shard's points its full-scan bound rises to, and the most points it
#: rises to: at a million points of 384 dimensions a scan of the 181,000 a filter admitted took
#: 17.3 ms, ACORN's walk 17.8 (recall@10 1.0 both).
SCAN_SHARE = 0.2
SCAN_MAX_POINTS = 1 << 17
#: A sparse shard's full-scan bound, in records: Qdrant's default, raised to this share of the
#: records (see the module docstring).
SPARSE_FULL_SCAN_MIN = 5_000
SPARSE_SCAN_SHARE = 0.05
#: Where a shard keeps its config.
CONFIG_FILE = "edge_config.json"
#: A shard is split into parts of at least this many points (see the module docstring).
PART_MIN_POINTS = 250_000
#: A dense search scores by the int8 copies, then the best ``limit`` times this by the vectors.
RESCORE_OVERSAMPLING = 2.0
#: How a dense search reads the int8 copies.
RESCORED = qe.QuantizationSearchParams(rescore=True, oversampling=RESCORE_OVERSAMPLING)
_INT8 = qe.ScalarQuantizationConfig(qe.ScalarType.Int8, quantile=0.99, always_ram=True)
#: Qdrant keeps each segment's config in ``segments/<id>/segment.json``.
_SEGMENT_CONFIGS = "segments/*/segment.json"


def full_scan_kb(index_threshold_kb: int | None, points: int = 0, dim: int = 0) -> int:
    """The full-scan bound of a dense shard of ``points`` vectors of ``dim`` components: its
    ``index_threshold_kb`` when given (segments under it have no graph), else
    :data:`FULL_SCAN_KB`, raised to :data:`SCAN_SHARE` of the points (rounded down to a power of
    two, at most :data:`SCAN_MAX_POINTS`)."""
    least = index_threshold_kb if index_threshold_kb is not None else FULL_SCAN_KB
    share = min(int(SCAN_SHARE * points), SCAN_MAX_POINTS)
    if share < 1 or dim < 1:
        return least
    return max(least, (1 << (share.bit_length() - 1)) * 4 * dim // 1024)


def sparse_full_scan(points: int) -> int:
    """The full-scan bound of a sparse shard of ``points`` records, in records:
    :data:`SPARSE_SCAN_SHARE` of them, at least Qdrant's default."""
    return max(SPARSE_FULL_SCAN_MIN, int(SPARSE_SCAN_SHARE * points))


def build_full_scan(spec: VectorSpec, index_threshold_kb: int | None, points: int, parts: int = 1) -> int:
    """The full-scan bound a build of ``points`` in ``parts`` gives a shard of ``spec``: in KB of
    vectors for a dense one (:func:`full_scan_kb`), in records of a part for a sparse one
    (:func:`sparse_full_scan`: each segment weighs its own records against it)."""
    if spec.sparse:
        return sparse_full_scan(points // max(parts, 1))
    assert spec.dim is not None
    return full_scan_kb(index_threshold_kb, points, spec.dim)


def opened_full_scan(shard: Path, spec: VectorSpec, index_threshold_kb: int | None) -> int | None:
    """The full-scan bound to open the shard at ``shard`` with: the one its config keeps (its
    last build's; a dense one at least :func:`full_scan_kb`'s least), else the least (None for a
    sparse shard: Qdrant's default)."""
    try:
        config = json.loads((shard / CONFIG_FILE).read_text(encoding="utf-8"))
        saved: int | None = int(_full_scan_holder(config, spec)["full_scan_threshold"])
    except (OSError, ValueError, KeyError, TypeError):
        saved = None
    if spec.sparse:
        return saved
    least = full_scan_kb(index_threshold_kb)
    return least if saved is None else max(saved, least)


def save_full_scan(shard: Path, spec: VectorSpec, bound: int) -> None:
    """Keep ``bound`` as the full-scan bound in the config of the shard at ``shard`` (closed: a
    copy about to be built), so that its build uses it. A config that cannot be read is left as
    it is: the build keeps the bound it had, which dense searches read from the segments."""
    path = shard / CONFIG_FILE
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
        _full_scan_holder(config, spec)["full_scan_threshold"] = bound
    except (OSError, ValueError, KeyError, TypeError):
        return
    path.write_text(json.dumps(config), encoding="utf-8")


def _full_scan_holder(config: dict[str, Any], spec: VectorSpec) -> dict[str, Any]:
    """The part of a shard's saved config that holds its full-scan bound."""
    holder: dict[str, Any] = config["sparse_vectors"][spec.name] if spec.sparse else config["hnsw_config"]
    return holder


@dataclass(frozen=True)
class ShardParts:
    """How a shard was last split: into ``parts``, of ``points`` in all, its segments capped at
    ``max_segment_kb`` (Qdrant's measure) since."""

    parts: int
    points: int
    max_segment_kb: int


def read_parts(shard: Path) -> ShardParts | None:
    """How the shard at ``shard`` was last split; None if it never was (or the record is
    unreadable: its next build splits it again if it is large)."""
    try:
        saved = json.loads((shard / PARTS_FILE).read_text(encoding="utf-8"))
        return ShardParts(int(saved["parts"]), int(saved["points"]), int(saved["max_segment_kb"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def parts_after_build(shard: Path, due: int) -> int:
    """How many parts the shard at ``shard`` has after a build that splits it into ``due`` (0:
    as many as it had, 1 if it never was split)."""
    last = read_parts(shard)
    return due or (last.parts if last is not None else 1)


def parts_due(shard: Path, points: int, search_threads: int, part_min_points: int = PART_MIN_POINTS) -> int:
    """Into how many parts a build of the shard at ``shard``, holding ``points``, splits it: as
    many as ``search_threads``, each of at least ``part_min_points``; 0 (none) when it has fewer
    than two such parts, or was split into as many since it last doubled or halved."""
    parts = min(search_threads, points // max(part_min_points, 1))
    if parts < 2:
        return 0
    last = read_parts(shard)
    if last is not None and last.parts == parts and last.points / 2 < points < 2 * last.points:
        return 0
    return parts


def shard_config(
    spec: VectorSpec,
    index_threshold_kb: int | None,
    search_threads: int,
    full_scan: int | None = None,
    parts: ShardParts | None = None,
) -> qe.EdgeConfig:
    """The config a shard of ``spec`` is created or loaded with (a loaded shard takes it);
    ``full_scan``: its full-scan bound (None: a dense shard's least, Qdrant's for a sparse one);
    ``parts``: how it was split (its segment cap, and up to ``search_threads`` threads, one a
    part; one thread if it was not)."""
    threads = min(search_threads, parts.parts) if parts is not None else 1
    cap = parts.max_segment_kb if parts is not None else None
    if spec.sparse:
        sparse = qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf, full_scan_threshold=full_scan)
        return qe.EdgeConfig(
            sparse_vectors={spec.name: sparse},
            optimizers=qe.EdgeOptimizersConfig(
                deleted_threshold=1e-9,
                vacuum_min_vector_number=1,
                indexing_threshold=index_threshold_kb,
                max_segment_size=cap,
            ),
            max_search_threads=threads,
        )
    assert spec.dim is not None
    threshold = index_threshold_kb
    scan_kb = full_scan if full_scan is not None else full_scan_kb(threshold)
    optimizers = None
    if threshold is not None or cap is not None:
        optimizers = qe.EdgeOptimizersConfig(indexing_threshold=threshold, max_segment_size=cap)
    return qe.EdgeConfig(
        vectors={spec.name: qe.EdgeVectorParams(size=spec.dim, distance=qe.Distance.Cosine)},
        hnsw_config=qe.HnswIndexConfig(16, 100, scan_kb),
        quantization_config=_INT8,
        optimizers=optimizers,
        max_search_threads=threads,
    )


def payload_indexes(integer_keys: Sequence[str]) -> list[tuple[str, qe.PayloadSchemaType]]:
    """The payload indexes of a shard whose own integer keys are ``integer_keys``."""
    integers = (ENABLED_KEY, SUMMARY_KEY, *integer_keys)
    return [(DOCUMENT_KEY, qe.PayloadSchemaType.Uuid), (SECTIONS_KEY, qe.PayloadSchemaType.Keyword)] + [
        (key, qe.PayloadSchemaType.Integer) for key in integers
    ]


def ensure_indexes(shard: qe.EdgeShard, indexes: Sequence[tuple[str, qe.PayloadSchemaType]]) -> bool:
    """Create each payload index missing, and replace one of another type (a shard made by an
    older version indexed ``document_id`` as a keyword; 0.25 s at 100k points); whether any was."""
    present = shard.info().payload_schema
    changed = False
    for key, schema in indexes:
        if key in present and present[key].data_type == schema:
            continue
        changed = True
        if key in present:
            shard.update(qe.UpdateOperation.delete_field_index(key))
        shard.update(qe.UpdateOperation.create_field_index(key, schema))
    return changed


def scanned_at_most(shard: Path, vector: str, dim: int, configured_kb: int) -> int:
    """The smallest full-scan bound of the shard's graph segments, in points of ``dim`` float32
    components, less one (a segment scans when the most its filter may admit is under the
    bound); ``configured_kb``'s where no segment has a graph yet (every search scans); 0 when a
    segment's config cannot be read."""
    bounds: list[int] = []
    for config in Path(shard).glob(_SEGMENT_CONFIGS):
        try:
            index = json.loads(config.read_text(encoding="utf-8"))["config"]["vector_data"][vector]["index"]
            if index["type"] == "hnsw":
                bounds.append(int(index["options"]["full_scan_threshold"]))
        except (OSError, ValueError, KeyError, TypeError):
            return 0
    return max(min(bounds, default=configured_kb) * 1024 // (4 * dim) - 1, 0)
