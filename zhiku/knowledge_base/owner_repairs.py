"""What the process that owns the stores puts right as it opens the knowledge base.

A crash leaves documents mid-ingest; an older version left dataset keys unsealed. Both are
repaired by the owner only (on PostgreSQL, recovery only when no other process is connected).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import exists, select
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.config import Settings
from zhiku.core.db import DatasetRow, DocumentRow
from zhiku.core.db.models import DocumentJobRow, PreparedVersionRow
from zhiku.core.document_status import IN_PROGRESS, DocumentStatus
from zhiku.core.secrets import SecretBox
from zhiku.knowledge_base import llm_options
from zhiku.knowledge_base.indexing.document_states import DocumentStates
from zhiku.knowledge_base.runtime.uploads import open_uploads


def seal_stored_keys(sessions: sessionmaker[Session], secrets: SecretBox) -> None:
    """Datasets made before keys were sealed hold a chat or embedding model's ``api_key`` in plain
    text: seal them."""
    with sessions.begin() as session:
        for row in session.scalars(select(DatasetRow)):
            if _plain_key(row.llm_options):
                row.llm_options = llm_options.seal(secrets, row.llm_options)
            if _plain_key(row.embedding_options):
                row.embedding_options = llm_options.seal(secrets, row.embedding_options)


def _plain_key(stored: dict[str, Any] | None) -> bool:
    key = (stored or {}).get(llm_options.KEY)
    return key is not None and not llm_options.is_sealed(key)


def recover_interrupted(
    settings: Settings, sessions: sessionmaker[Session], states: DocumentStates, recovered: list[str]
) -> None:
    """Documents caught mid-ingest by a crash: those queued through the HTTP API whose upload
    is still stored go back to ``waiting`` (their ids appended to ``recovered``) and the indexing
    workers run them again; the others (the later files of an ``add_files`` call, a
    ``replace_file`` not yet started) would wait forever, so their run ends as failed — ``error``,
    or back to the version they still serve."""
    uploads = open_uploads(settings, sessions)
    with sessions() as session:
        rows = session.execute(
            select(DocumentRow.id, DocumentRow.status, DocumentJobRow.upload)
            .outerjoin(DocumentJobRow, DocumentJobRow.document_id == DocumentRow.id)
            .where(DocumentRow.status.in_([str(s) for s in (*IN_PROGRESS, DocumentStatus.WAITING)]))
            # a Celery worker's document is its lease's business, a handed-over one the writer's
            .where(DocumentJobRow.lease_owner.is_(None))
            .where(~exists().where(PreparedVersionRow.document_id == DocumentRow.id))
        ).all()
    for document_id, status, upload in rows:
        if upload and uploads.exists(upload):
            if states.move(document_id, DocumentStatus.WAITING, only_from=IN_PROGRESS):
                recovered.append(document_id)
            continue
        stage = "before indexing" if status == DocumentStatus.WAITING else f"during {status}"
        states.fail(document_id, f"interrupted {stage}: the process stopped; ingest the file again")
