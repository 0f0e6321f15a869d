"""Uploaded files kept until their document is deleted, where every indexing worker reads them.

The indexing workers read a document from its stored upload, so a server restarted mid-indexing
can index it again, and a Celery worker on another machine can index a file uploaded through any
API process. Setting ``upload_store`` picks the place:

- ``data_dir`` (default) and ``shared_dir``: a folder per document, ``<root>/<document id>/``,
  holding one file whose name is the client's file name made safe (:func:`safe_filename`); the
  reference kept in the job row is that file's path, so a shared directory must be mounted at
  the same path on every machine;
- ``database``: a row of ``stored_uploads``; the reference is ``db:<document id>/<name>``.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import unicodedata
from collections.abc import Collection
from pathlib import Path
from typing import Protocol

from sqlalchemy import delete, select
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.config import Settings
from zhiku.core.db.models import StoredUploadRow

#: Characters no file system of the supported platforms accepts in a name, plus the separators.
_FORBIDDEN = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]')
_WINDOWS_RESERVED = {
    "CON",
    "PRN",
    "AUX",
    "NUL",
    *(f"COM{i}" for i in range(1, 10)),
    *(f"LPT{i}" for i in range(1, 10)),
}
#: Bytes of UTF-8 a stored name may take (file systems allow 255; room is left for a temp suffix).
_MAX_NAME_BYTES = 200
FALLBACK_NAME = "upload"
#: How a reference to an upload kept in the database starts.
DATABASE_PREFIX = "db:"


def safe_filename(name: str) -> str:
    """A client's file name reduced to a safe last path component.

    Directories (``../``, ``C:\\``) are dropped, unicode is NFC-normalised (Chinese names are
    kept as they are), control and reserved characters become ``_``, leading dots and spaces go
    (no hidden files, no ``..``), and an over-long name is shortened keeping its suffix.
    """
    text = unicodedata.normalize("NFC", name or "")
    text = text.replace("\\", "/").rsplit("/", 1)[-1]
    text = _FORBIDDEN.sub("_", text).strip().lstrip(". ").rstrip(". ")
    if not text:
        return FALLBACK_NAME
    stem, dot, suffix = text.rpartition(".")
    if not dot:
        stem, suffix = text, ""
    if stem.upper() in _WINDOWS_RESERVED:
        stem = f"_{stem}"
    suffix = _truncate(suffix, 16)
    stem = _truncate(stem, _MAX_NAME_BYTES - len(suffix.encode("utf-8")) - 1)
    return f"{stem}.{suffix}" if suffix else stem


def _truncate(text: str, max_bytes: int) -> str:
    encoded = text.encode("utf-8")[: max(max_bytes, 1)]
    return encoded.decode("utf-8", errors="ignore")


class UploadStore(Protocol):
    """Where stored uploads are kept; a reference (``store``'s result) is what a job row holds."""

    def store(self, document_id: str, name: str, data: bytes) -> str: ...

    def exists(self, reference: str) -> bool: ...

    def content(self, reference: str) -> Path | bytes: ...

    def remove(self, document_id: str) -> None: ...

    def sweep(self, known: Collection[str]) -> int: ...


def reference_name(reference: str) -> str:
    """The stored file name a reference ends with (what the extractor sees)."""
    return reference.replace("\\", "/").rsplit("/", 1)[-1]


class Uploads:
    """The folder of stored uploads, one sub-folder per document id."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def exists(self, reference: str) -> bool:
        return Path(reference).is_file()

    def content(self, reference: str) -> Path | bytes:
        return Path(reference)

    def sweep(self, known: Collection[str]) -> int:
        """Remove the folders of documents not in ``known``; how many."""
        if not self.root.is_dir():
            return 0
        removed = 0
        for folder in self.root.iterdir():
            if folder.is_dir() and folder.name not in known:
                self.remove(folder.name)
                removed += 1
        return removed

    def store(self, document_id: str, name: str, data: bytes) -> str:
        return str(self.save(document_id, name, data))

    def save(self, document_id: str, name: str, data: bytes) -> Path:
        """Store ``data`` as the document's upload, replacing any earlier one; returns its path.

        The file is written under a temporary name and renamed, so a crash never leaves a
        truncated upload where the workers would read it.
        """
        folder = self._folder(document_id)
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        target = folder / safe_filename(name)
        handle, temp = tempfile.mkstemp(dir=folder, prefix=".part-")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temp, target)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        for other in folder.iterdir():
            if other != target:
                other.unlink(missing_ok=True)
        return target

    def remove(self, document_id: str) -> None:
        shutil.rmtree(self._folder(document_id), ignore_errors=True)

    def _folder(self, document_id: str) -> Path:
        folder = self.root / safe_filename(document_id)
        if folder.parent != self.root:
            raise ValueError(f"invalid document id {document_id!r}")
        return folder


class DatabaseUploads:
    """Uploads kept as rows of ``stored_uploads``: every process on the database reads them."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions

    def store(self, document_id: str, name: str, data: bytes) -> str:
        safe = safe_filename(name)
        with self._sessions.begin() as session:
            row = session.get(StoredUploadRow, document_id)
            if row is None:
                session.add(StoredUploadRow(document_id=document_id, name=safe, data=data))
            else:
                row.name, row.data = safe, data
        return f"{DATABASE_PREFIX}{document_id}/{safe}"

    def exists(self, reference: str) -> bool:
        if not reference.startswith(DATABASE_PREFIX):
            return Path(reference).is_file()  # stored before the setting changed
        with self._sessions() as session:
            return session.get(StoredUploadRow, self._document_id(reference)) is not None

    def content(self, reference: str) -> Path | bytes:
        if not reference.startswith(DATABASE_PREFIX):
            return Path(reference)
        with self._sessions() as session:
            document_id = self._document_id(reference)
            data = session.scalar(
                select(StoredUploadRow.data).where(StoredUploadRow.document_id == document_id)
            )
        if data is None:
            raise FileNotFoundError(f"no stored upload {reference!r}")
        return bytes(data)

    def remove(self, document_id: str) -> None:
        with self._sessions.begin() as session:
            session.execute(delete(StoredUploadRow).where(StoredUploadRow.document_id == document_id))

    def sweep(self, known: Collection[str]) -> int:
        with self._sessions() as session:
            stored = set(session.scalars(select(StoredUploadRow.document_id)))
        orphans = sorted(stored - set(known))
        for document_id in orphans:
            self.remove(document_id)
        return len(orphans)

    @staticmethod
    def _document_id(reference: str) -> str:
        return reference[len(DATABASE_PREFIX) :].split("/", 1)[0]


def open_uploads(settings: Settings, sessions: sessionmaker[Session]) -> Uploads | DatabaseUploads:
    """The upload store the settings name (``upload_store``)."""
    if settings.upload_store == "database":
        return DatabaseUploads(sessions)
    return Uploads(settings.uploads_path)
