"""Browsing datasets and documents page by page, as an admin API needs.

Queries here read one page at a time with its total, so a listing costs the same at 10 or
100,000 documents. Changing one dataset's documents is :mod:`.dataset_documents`' job.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select, tuple_
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db.models import DatasetRow, DocumentRow, SegmentRow
from zhiku.core.document_status import DocumentStatus
from zhiku.core.errors import NotFound
from zhiku.core.retrieval_config import RetrievalConfig
from zhiku.knowledge_base.indexing.pipeline import PipelineSpec
from zhiku.knowledge_base.records import DocumentInfo


@dataclass(frozen=True)
class DatasetSummary:
    """A dataset's settings as stored (one query for a whole page, unlike the facade's properties)."""

    id: str
    name: str
    description: str
    embedding_model: str
    retrieval: RetrievalConfig
    process_rule: PipelineSpec
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, row: DatasetRow) -> DatasetSummary:
        return cls(
            id=row.id,
            name=row.name,
            description=row.description,
            embedding_model=row.embedding_model,
            retrieval=RetrievalConfig.model_validate(row.retrieval_config),
            process_rule=PipelineSpec.model_validate(row.process_rule),
            created_at=row.created_at,
            updated_at=row.updated_at,
        )


@dataclass(frozen=True)
class DatasetCounts:
    documents: int = 0
    segments: int = 0
    words: int = 0


class Catalog:
    """Pages of datasets and documents, and their counts."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions

    def dataset_ids(
        self, *, offset: int, limit: int, keyword: str | None = None, within: Collection[str] | None = None
    ) -> tuple[list[str], int]:
        """One page of dataset ids, newest first, and how many match in all.

        ``keyword`` matches names case-insensitively; ``within`` restricts to those ids.
        """
        query = select(DatasetRow.id).where(DatasetRow.deleting.is_(False))
        if keyword:
            query = query.where(DatasetRow.name.icontains(keyword, autoescape=True))
        if within is not None:
            query = query.where(DatasetRow.id.in_(list(within)))
        with self._sessions() as session:
            total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
            ids = list(
                session.scalars(
                    query.order_by(DatasetRow.created_at.desc(), DatasetRow.id).offset(offset).limit(limit)
                )
            )
        return ids, int(total)

    def datasets(self, dataset_ids: Sequence[str]) -> list[DatasetSummary]:
        """Summaries of these datasets, in the order given (unknown ids are left out)."""
        with self._sessions() as session:
            rows = {
                row.id: row
                for row in session.scalars(
                    select(DatasetRow).where(
                        DatasetRow.id.in_(list(dataset_ids)), DatasetRow.deleting.is_(False)
                    )
                )
            }
        return [DatasetSummary.of(rows[i]) for i in dataset_ids if i in rows]

    def dataset_counts(self, dataset_ids: Sequence[str]) -> dict[str, DatasetCounts]:
        """Documents, segments and characters of segment text per dataset."""
        with self._sessions() as session:
            documents = dict(
                session.execute(
                    select(DocumentRow.dataset_id, func.count())
                    .where(DocumentRow.dataset_id.in_(list(dataset_ids)))
                    .group_by(DocumentRow.dataset_id)
                ).all()
            )
            segments = {
                dataset_id: (count, words)
                for dataset_id, count, words in session.execute(
                    select(SegmentRow.dataset_id, func.count(), func.sum(func.length(SegmentRow.content)))
                    .where(SegmentRow.dataset_id.in_(list(dataset_ids)))
                    .group_by(SegmentRow.dataset_id)
                ).all()
            }
        return {
            dataset_id: DatasetCounts(
                documents=int(documents.get(dataset_id, 0)),
                segments=int(segments.get(dataset_id, (0, 0))[0]),
                words=int(segments.get(dataset_id, (0, 0))[1] or 0),
            )
            for dataset_id in dataset_ids
        }

    def status_counts(self, dataset_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """How many documents of each dataset are in each status (one grouped query)."""
        counts: dict[str, dict[str, int]] = {dataset_id: {} for dataset_id in dataset_ids}
        with self._sessions() as session:
            rows = session.execute(
                select(DocumentRow.dataset_id, DocumentRow.status, func.count())
                .where(DocumentRow.dataset_id.in_(list(dataset_ids)))
                .group_by(DocumentRow.dataset_id, DocumentRow.status)
            ).all()
        for dataset_id, status, count in rows:
            counts[dataset_id][status] = int(count)
        return counts

    def documents(
        self, dataset_id: str, *, offset: int, limit: int, keyword: str | None = None
    ) -> tuple[list[DocumentInfo], int]:
        """One page of a dataset's documents, newest first; ``keyword`` matches names."""
        query = select(DocumentRow).where(DocumentRow.dataset_id == dataset_id)
        if keyword:
            query = query.where(DocumentRow.name.icontains(keyword, autoescape=True))
        with self._sessions() as session:
            total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
            rows = session.scalars(
                query.order_by(DocumentRow.created_at.desc(), DocumentRow.id.desc())
                .offset(offset)
                .limit(limit)
            ).all()
            return [DocumentInfo.of(row) for row in rows], int(total)

    def document_with_content(self, dataset_id: str, file_hash: str) -> DocumentInfo | None:
        """The dataset's oldest document holding content of this sha256 that is served or under
        way; a failed one is no duplicate (sending its content again is how to try again)."""
        with self._sessions() as session:
            row = session.scalars(
                select(DocumentRow)
                .where(
                    DocumentRow.dataset_id == dataset_id,
                    DocumentRow.file_hash == file_hash,
                    DocumentRow.status != str(DocumentStatus.ERROR),
                )
                .order_by(DocumentRow.created_at, DocumentRow.id)
                .limit(1)
            ).first()
            return DocumentInfo.of(row) if row is not None else None

    def document_choices(self, dataset_id: str, limit: int) -> dict[str, str]:
        """The names of a dataset's newest ``limit`` documents by id, newest first: a filter's
        choices, read from the ordering index and the names alone (no whole rows)."""
        with self._sessions() as session:
            rows = session.execute(
                select(DocumentRow.id, DocumentRow.name)
                .where(DocumentRow.dataset_id == dataset_id)
                .order_by(DocumentRow.created_at.desc(), DocumentRow.id.desc())
                .limit(limit)
            ).all()
            return {document_id: name for document_id, name in rows}

    def document_names(self, dataset_id: str, document_ids: Collection[str]) -> dict[str, str]:
        """The names of a dataset's documents by id, in one query (a page of segments names the
        documents it shows; at one segment a document, that is 50 documents)."""
        with self._sessions() as session:
            rows = session.execute(
                select(DocumentRow.id, DocumentRow.name).where(
                    DocumentRow.id.in_(sorted(document_ids)), DocumentRow.dataset_id == dataset_id
                )
            ).all()
            return {document_id: name for document_id, name in rows}

    def document_words(self, document_ids: Sequence[str]) -> dict[str, int]:
        """Characters of segment text per document."""
        with self._sessions() as session:
            rows = session.execute(
                select(SegmentRow.document_id, func.sum(func.length(SegmentRow.content)))
                .where(SegmentRow.document_id.in_(list(document_ids)))
                .group_by(SegmentRow.document_id)
            ).all()
            return {document_id: int(words or 0) for document_id, words in rows}

    def document_hits(self, document_ids: Sequence[str]) -> dict[str, int]:
        """Retrievals that returned a segment of each document, summed over its segments."""
        with self._sessions() as session:
            rows = session.execute(
                select(SegmentRow.document_id, func.sum(SegmentRow.hit_count))
                .where(SegmentRow.document_id.in_(list(document_ids)))
                .group_by(SegmentRow.document_id)
            ).all()
            return {document_id: int(hits or 0) for document_id, hits in rows}

    def document_positions(self, dataset_id: str, document_ids: Sequence[str]) -> dict[str, int]:
        """1-based order of creation of documents within their dataset.

        The documents before the first one asked for are counted from the ordering index, and
        only the span from the first to the last is numbered: a page of a dataset of 10,000
        documents numbers its 50, not all 10,000."""
        order = tuple_(DocumentRow.created_at, DocumentRow.id)
        of_dataset = DocumentRow.dataset_id == dataset_id
        with self._sessions() as session:
            keys = session.execute(
                select(DocumentRow.created_at, DocumentRow.id).where(
                    DocumentRow.id.in_(list(document_ids)), of_dataset
                )
            ).all()
            if not keys:
                return {}
            first, last = tuple(min(keys)), tuple(max(keys))
            before = session.scalar(select(func.count()).where(of_dataset, order < first)) or 0
            position = func.row_number().over(order_by=(DocumentRow.created_at, DocumentRow.id))
            numbered = (
                select(DocumentRow.id, position.label("position"))
                .where(of_dataset, order >= first, order <= last)
                .subquery()
            )
            rows = session.execute(
                select(numbered.c.id, numbered.c.position).where(numbered.c.id.in_(list(document_ids)))
            ).all()
            return {document_id: int(before) + int(position) for document_id, position in rows}


def dataset_row_named(session: Session, name_or_id: str) -> DatasetRow:
    """A dataset's row by id or by name; :class:`NotFound` otherwise."""
    row = session.get(DatasetRow, name_or_id) or session.scalar(
        select(DatasetRow).where(DatasetRow.name == name_or_id)
    )
    if row is None or row.deleting:
        raise NotFound(f"no dataset {name_or_id!r}")
    return row
