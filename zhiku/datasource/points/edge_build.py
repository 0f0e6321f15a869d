"""The index build of an embedded shard's copy, and the documents' payload written before it.

``edge.py`` runs this file as a child process (``python edge_build.py COPY [PAYLOADS]``: the
build holds the GIL of its process for minutes, so not the server's); it imports qdrant-edge and
nothing of zhiku, so it starts at once. ``PAYLOADS`` is a JSON file of documents' metadata
payloads (:func:`payloads_file`) written into the copy's points before its graph is built: a
point whose payload changes in the open shard is copied out of its segment's graph (Qdrant
writes it again in the unindexed segment), so a large change written there would make the
searches scan until the next build, while written into the copy the points keep their graph.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

#: The payload index of each kind a metadata key may need.
SCHEMA_OF = {"keyword": qe.PayloadSchemaType.Keyword, "float": qe.PayloadSchemaType.Float}


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


def build(copy: str, payloads: str | None = None) -> None:
    """Write the payloads (if given) into the shard copy, build its index, flush it."""
    shard = qe.EdgeShard.load(copy)
    if payloads is not None:
        content = json.loads(Path(payloads).read_text(encoding="utf-8"))
        write_payloads(shard, content["document_key"], content["keys"], content["updates"], content["prefix"])
    shard.optimize()
    shard.flush()
    shard.close()


if __name__ == "__main__":
    build(*sys.argv[1:3])
