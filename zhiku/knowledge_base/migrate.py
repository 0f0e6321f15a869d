"""Copy a knowledge base into another one, typically from the embedded default to PostgreSQL and a
Qdrant server, without re-embedding anything.

The embedding cache goes first, so writing the segments through the target's normal write path
(:meth:`DatasetIndex.write_documents`) finds every vector cached; the stores and keyword postings
are then built exactly as an ingest builds them, and rows keep their ids and timestamps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import inspect, select, update
from sqlalchemy.orm import Session

from zhiku.core.db.inserts import insert_missing
from zhiku.core.db.models import Base, DatasetRow, DocumentRow, EmbeddingCacheRow
from zhiku.core.document_status import FINISHED, DocumentStatus
from zhiku.core.errors import AlreadyExists
from zhiku.knowledge_base.indexing.dataset_index import DocumentVersion
from zhiku.knowledge_base.indexing.ingestion import WRITE_BATCH_SEGMENTS, Progress
from zhiku.knowledge_base.metadata_values import replace_values

if TYPE_CHECKING:
    from zhiku.knowledge_base.knowledge_base import KnowledgeBase

_CACHE_BATCH = 500


@dataclass
class MigrationReport:
    """What was copied; ``skipped`` names the documents left behind (``dataset/document: status``)."""

    datasets: int = 0
    documents: int = 0
    segments: int = 0
    cache_rows: int = 0
    skipped: list[str] = field(default_factory=list)


def migrate(
    source: KnowledgeBase, target: KnowledgeBase, *, on_progress: Progress | None = None
) -> MigrationReport:
    """Copy every dataset of ``source`` into ``target``, which must hold none of the same names.

    Served documents are re-indexed from their segment rows (vectors come from the copied cache),
    documents in ``error`` are copied as they are, and documents still waiting or being indexed
    are skipped. ``on_progress(dataset name, documents done, documents)`` follows each dataset.
    """
    names = {ds.name for ds in source.datasets()}
    clashes = sorted(names & {ds.name for ds in target.datasets()})
    if clashes:
        raise AlreadyExists(f"the target already has datasets named {', '.join(clashes)}")
    report = MigrationReport(cache_rows=_copy_cache(source, target))
    for dataset in source.datasets():
        _copy_dataset(source, target, dataset.id, report, on_progress)
        report.datasets += 1
    return report


def _columns(row: Base) -> dict[str, Any]:
    """A row's column values; naive datetimes (SQLite drops the zone) are read as the UTC they are."""
    values = {attr.key: getattr(row, attr.key) for attr in inspect(type(row)).column_attrs}
    return {
        key: value.replace(tzinfo=UTC) if isinstance(value, datetime) and value.tzinfo is None else value
        for key, value in values.items()
    }


def _copy_cache(source: KnowledgeBase, target: KnowledgeBase) -> int:
    copied = 0
    columns = list(EmbeddingCacheRow.__table__.columns)
    with source.sessions() as reading:
        result = reading.execute(select(*columns).execution_options(yield_per=_CACHE_BATCH))
        for rows in result.partitions():
            with target.sessions.begin() as writing:
                writing.execute(insert_missing(writing, EmbeddingCacheRow), [r._asdict() for r in rows])
            copied += len(rows)
    return copied


def _copy_dataset(
    source: KnowledgeBase,
    target: KnowledgeBase,
    dataset_id: str,
    report: MigrationReport,
    on_progress: Progress | None,
) -> None:
    with source.sessions() as session:
        dataset = session.get(DatasetRow, dataset_id)
        assert dataset is not None
        name = dataset.name
        documents = [
            _columns(row)
            for row in session.scalars(
                select(DocumentRow)
                .where(DocumentRow.dataset_id == dataset_id)
                .order_by(DocumentRow.created_at)
            )
        ]
        with target.sessions.begin() as writing:
            writing.add(DatasetRow(**_columns(dataset)))
    segments_of = source.dataset(dataset_id).segments
    index = target.dataset_index(dataset_id)
    pending: list[DocumentVersion] = []
    originals: list[dict[str, Any]] = []

    def flush() -> None:
        if pending:
            index.write_documents(pending)
            _restore(target, originals)
            report.segments += sum(len(version.segments) for version in pending)
            pending.clear()
            originals.clear()

    for done, document in enumerate(documents, start=1):
        status = document["status"]
        if status in FINISHED:  # written as an ingest writes them: indexing → completed
            with target.sessions.begin() as writing:
                writing.add(DocumentRow(**{**document, "status": str(DocumentStatus.INDEXING)}))
                _copy_values(writing, document)
            failed = (document["doc_metadata"] or {}).get("failed_chunks") or []
            pending.append(DocumentVersion(document["id"], segments_of(document["id"]), failed))
            originals.append(document)
            report.documents += 1
        elif status == DocumentStatus.ERROR:
            with target.sessions.begin() as writing:
                writing.add(DocumentRow(**document))
                _copy_values(writing, document)
            report.documents += 1
        else:
            report.skipped.append(f"{name}/{document['name']}: {status}")
        if sum(len(version.segments) for version in pending) >= WRITE_BATCH_SEGMENTS:
            flush()
        if on_progress:
            on_progress(name, done, len(documents))
    flush()


def _copy_values(session: Session, document: dict[str, Any]) -> None:
    """The rows of a copied document's metadata values, with the document."""
    replace_values(session, document["dataset_id"], {document["id"]: document["metadata_values"] or {}})


def _restore(target: KnowledgeBase, documents: Sequence[dict[str, Any]]) -> None:
    """Put back what the write path set anew (error text, completion time) as the source had it."""
    with target.sessions.begin() as session:
        for document in documents:
            session.execute(
                update(DocumentRow)
                .where(DocumentRow.id == document["id"])
                .values(error=document["error"], completed_at=document["completed_at"])
            )
