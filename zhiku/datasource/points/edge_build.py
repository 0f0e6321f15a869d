"""The index build of an embedded shard's copy, and the documents' payload written before it.

``edge.py`` runs this file as a child process (``python edge_build.py COPY PARTS [PAYLOADS]``:
the build holds the GIL of its process for minutes, so not the server's); it imports qdrant-edge
and nothing of zhiku, so it starts at once. ``PAYLOADS`` is a JSON file of documents' metadata
payloads (:func:`payloads_file`) written into the copy's points before its graph is built: a
point whose payload changes in the open shard is copied out of its segment's graph (Qdrant
writes it again in the unindexed segment), so a large change written there would make the
searches scan until the next build, while written into the copy the points keep their graph.

``PARTS`` of 2 or more rewrites the copy's points into that many segments of equal size
(:func:`split`). qdrant-edge-py keeps the GIL while it searches, so a search's channels run one
after the other in a process; what runs side by side is a shard's segments, one per thread of
its search pool. Qdrant's optimizer never splits a segment, and it merges the ones it has until
they reach ``max_segment_size`` (none by default: every build made one segment of all the
points, and rebuilt its whole graph); so a split writes the points into a new shard a part at a
time, indexing each part before the next, and caps the segments at one and a half parts, which
keeps the parts apart while later builds index the new points into segments of their own.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

#: The payload index of each kind a metadata key may need.
SCHEMA_OF = {"keyword": qe.PayloadSchemaType.Keyword, "float": qe.PayloadSchemaType.Float}
#: In a shard's directory, beside Qdrant's own config: into how many parts :func:`split` last
#: wrote its points, how many there were, and the segment size it capped the optimizer at.
PARTS_FILE = "parts.json"
#: Qdrant's config file in a shard's directory.
EDGE_CONFIG_FILE = "edge_config.json"
#: Beside the copy: the new shard a split writes, which then takes the copy's place.
SPLIT_SUFFIX = ".split"
#: Points read and written at a time by a split.
SPLIT_PAGE = 1_000
#: A split caps Qdrant's segments at this many parts' size (see the module docstring).
SEGMENT_CAP_PARTS = 1.5


def document_filter(document_key: str, document_id: str) -> qe.Filter:
    return qe.Filter(must=[qe.FieldCondition(document_key, match=qe.MatchValue(document_id))])


def payload_updates(of_document: qe.Filter, payload: dict[str, Any], remove: Sequence[str]) -> list[Any]:
    """The updates setting ``payload``'s keys and deleting the ``remove`` keys of a document's
    points."""
    updates = [qe.UpdateOperation.set_payload_by_filter(of_document, payload)] if payload else []
    if remove:
        updates.append(qe.UpdateOperation.delete_payload_by_filter(of_document, list(remove)))
    return updates


def index_keys(shard: qe.EdgeShard, keys: Mapping[str, str], prefix: str) -> None:
    """Create the payload index of each key that has none (``keys``: key → ``keyword`` or
    ``float``), and drop the index of each other key beginning with ``prefix`` (a field deleted)."""
    present = shard.info().payload_schema
    for key in present:
        if key.startswith(prefix) and key not in keys:
            shard.update(qe.UpdateOperation.delete_field_index(key))
    for key in keys:
        if key not in present:
            shard.update(qe.UpdateOperation.create_field_index(key, SCHEMA_OF[keys[key]]))


def write_payloads(
    shard: qe.EdgeShard,
    document_key: str,
    keys: Mapping[str, str],
    updates: Iterable[tuple[str, dict[str, Any], Sequence[str]]],
    prefix: str,
) -> None:
    """Index ``keys`` (see :func:`index_keys`), then set each document's payload and delete its
    ``remove`` keys."""
    index_keys(shard, keys, prefix)
    for document_id, payload, remove in updates:
        for operation in payload_updates(document_filter(document_key, document_id), payload, remove):
            shard.update(operation)


def payloads_file(
    path: Path,
    document_key: str,
    keys: Mapping[str, str],
    updates: Iterable[tuple[str, dict[str, Any], Sequence[str]]],
    prefix: str,
) -> None:
    """Write what :func:`build` reads from ``PAYLOADS``."""
    content = {
        "document_key": document_key,
        "keys": dict(keys),
        "updates": [list(u) for u in updates],
        "prefix": prefix,
    }
    path.write_text(json.dumps(content, ensure_ascii=False), encoding="utf-8")


def vector_bytes(point: Any) -> int:
    """What Qdrant counts of a point's vectors in a segment's size: 4 bytes a dense component, 6
    a sparse entry (at most: a BM25 shard split under caps of 1.2 and 1.5 parts at 8 bytes an
    entry kept its parts apart under the first and merged them under the second)."""
    size = 0
    for vector in point.vector.values():
        size += 6 * len(vector.indices) if hasattr(vector, "indices") else 4 * len(vector)
    return size


def pages(shard: qe.EdgeShard) -> Iterator[list[Any]]:
    """All the shard's points, with their vectors and payloads, :data:`SPLIT_PAGE` at a time."""
    offset = None
    while True:
        request = qe.ScrollRequest(offset=offset, limit=SPLIT_PAGE, with_payload=True, with_vector=True)
        points, offset = shard.scroll(request)
        if points:
            yield points
        if offset is None or not points:
            return


def split(shard: qe.EdgeShard, copy: Path, parts: int) -> qe.EdgeShard:
    """Write the points of ``shard`` (open at ``copy``) into a new shard in ``parts`` indexed
    segments, its config and payload indexes the same and its segments capped (see the module
    docstring), and put the new shard in the copy's place; the new shard, open. The last part
    is left for the build's own optimize."""
    points = int(shard.count(qe.CountRequest(exact=True)))
    per_part = -(-points // parts)
    schema = {key: index.data_type for key, index in shard.info().payload_schema.items()}
    target = copy.with_name(copy.name + SPLIT_SUFFIX)
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    new: qe.EdgeShard | None = None
    written, cap_kb = 0, 0
    for page in pages(shard):
        if new is None:
            part_bytes = per_part * sum(vector_bytes(point) for point in page) / len(page)
            cap_kb = int(SEGMENT_CAP_PARTS * part_bytes / 1024) + 1
            new = _open_capped(copy, target, cap_kb, schema)
        new.update(qe.UpdateOperation.upsert_points([qe.Point(p.id, p.vector, p.payload) for p in page]))
        before, written = written, written + len(page)
        if written < points and written // per_part > before // per_part:
            new.optimize()  # a part is complete: index it into a segment of its own
            new.flush()  # and let the write-ahead log drop it
    if new is None:  # no points: nothing to split
        shutil.rmtree(target)
        return shard
    marker = {"parts": parts, "points": points, "max_segment_kb": cap_kb}
    (target / PARTS_FILE).write_text(json.dumps(marker), encoding="utf-8")
    new.flush()
    new.close()
    shard.close()
    shutil.rmtree(copy)
    target.rename(copy)
    return qe.EdgeShard.load(str(copy))


def _open_capped(copy: Path, target: Path, cap_kb: int, schema: Mapping[str, Any]) -> qe.EdgeShard:
    """A new, empty shard at ``target`` with the config of the one at ``copy``, its segments
    capped at ``cap_kb``, and the same payload indexes."""
    config = json.loads((copy / EDGE_CONFIG_FILE).read_text(encoding="utf-8"))
    config["optimizers"] = {**(config.get("optimizers") or {}), "max_segment_size": cap_kb}
    (target / EDGE_CONFIG_FILE).write_text(json.dumps(config), encoding="utf-8")
    new = qe.EdgeShard.load(str(target))
    for key, data_type in schema.items():
        new.update(qe.UpdateOperation.create_field_index(key, data_type))
    return new


def build(copy: str, parts: str = "0", payloads: str | None = None) -> None:
    """Write the payloads (if given) into the shard copy, split it into ``parts`` (2 or more),
    build its index, flush it."""
    shard = qe.EdgeShard.load(copy)
    if payloads is not None:
        content = json.loads(Path(payloads).read_text(encoding="utf-8"))
        write_payloads(shard, content["document_key"], content["keys"], content["updates"], content["prefix"])
    if int(parts) >= 2:
        shard = split(shard, Path(copy), int(parts))
    shard.optimize()
    shard.flush()
    shard.close()


if __name__ == "__main__":
    build(*sys.argv[1:4])
