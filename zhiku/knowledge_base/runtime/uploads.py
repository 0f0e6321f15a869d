"""Uploaded files kept until their document is deleted, where every indexing worker reads them.

The indexing workers read a document from its stored upload, so a server restarted mid-indexing
can index it again, and a Celery worker on another machine can index a file uploaded through any
API process. Setting ``upload_store`` picks the place:

- ``data_dir`` (default) and ``shared_dir``: a folder per document, ``<root>/<document id>/``,
  holding one file whose name is the client's file name made safe (:func:`safe_filename`) —
  a new version sent later sits in a sub-folder of its own until it replaces the first; the
  reference kept in the job row is that file's path, so a shared directory must be mounted at
  the same path on every machine;
- ``database``: a row of ``stored_uploads``; the reference is ``db:<document id>/<name>``.

A new version of an existing document is *staged* (:meth:`UploadStore.stage`): it is written
beside the upload the document is queued with, becomes the document's upload in the same
transaction that queues it again, and the old one is removed only once that has committed. An
update the queue refuses therefore leaves the queued upload as it was.
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


class StagedUpload(Protocol):
    """A new version of a document's upload, not yet the one its job row points to.

    The caller writes it in the transaction that queues the document again (:meth:`write`),
    then, after the commit, calls :meth:`keep` (the earlier upload goes); if the transaction
    fails or is refused, :meth:`discard` (the earlier upload stays, untouched)."""

    @property
    def reference(self) -> str:
        """What the job row will hold once the version is written."""
        ...

    def write(self, session: Session) -> None:
        """Make the version part of ``session``'s transaction."""
        ...

    def keep(self) -> None: ...

    def discard(self) -> None: ...


class UploadStore(Protocol):
    """Where stored uploads are kept; a reference (``store``'s result) is what a job row holds."""

    def store(self, document_id: str, name: str, data: bytes) -> str: ...

    def stage(self, document_id: str, name: str, data: bytes) -> StagedUpload: ...

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
        target = self._write(folder, safe_filename(name), data)
        _remove_all_but(folder, target)
        return target

    @staticmethod
    def _write(folder: Path, name: str, data: bytes) -> Path:
        target = folder / name
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
        return target

    def stage(self, document_id: str, name: str, data: bytes) -> StagedFile:
        """Write ``data`` as a new version in a fresh sub-folder, the current upload untouched."""
        folder = self._folder(document_id)
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        version = Path(tempfile.mkdtemp(dir=folder, prefix="v-"))
        try:
            path = self._write(version, safe_filename(name), data)
        except BaseException:
            shutil.rmtree(version, ignore_errors=True)
            raise
        return StagedFile(folder, path)

    def remove(self, document_id: str) -> None:
        shutil.rmtree(self._folder(document_id), ignore_errors=True)

    def _folder(self, document_id: str) -> Path:
        folder = self.root / safe_filename(document_id)
        if folder.parent != self.root:
            raise ValueError(f"invalid document id {document_id!r}")
        return folder


def _remove_all_but(folder: Path, keep: Path) -> None:
    """Remove everything in a document's folder but ``keep`` (and the sub-folder holding it)."""
    for other in folder.iterdir():
        if other in (keep, keep.parent):
            continue
        if other.is_dir() and not other.is_symlink():
            shutil.rmtree(other, ignore_errors=True)
        else:
            other.unlink(missing_ok=True)
    if keep.parent != folder:
        for other in keep.parent.iterdir():
            if other != keep:
                other.unlink(missing_ok=True)


class StagedFile:
    """A version written to its own sub-folder; ``keep`` removes the document's other files."""

    def __init__(self, folder: Path, path: Path) -> None:
        self.folder, self.path = folder, path

    @property
    def reference(self) -> str:
        return str(self.path)

    def write(self, session: Session) -> None:
        pass  # written already, beside the current upload

    def keep(self) -> None:
        _remove_all_but(self.folder, self.path)

    def discard(self) -> None:
        shutil.rmtree(self.path.parent, ignore_errors=True)


class StagedRow:
    """A version for the ``stored_uploads`` row, written in the caller's transaction: the row is
    replaced only if that transaction commits, so there is nothing to clean up either way."""

    def __init__(self, document_id: str, name: str, data: bytes) -> None:
        self.document_id, self.name, self.data = document_id, safe_filename(name), data

    @property
    def reference(self) -> str:
        return f"{DATABASE_PREFIX}{self.document_id}/{self.name}"

    def write(self, session: Session) -> None:
        _put_row(session, self.document_id, self.name, self.data)

    def keep(self) -> None:
        pass

    def discard(self) -> None:
        pass


def _put_row(session: Session, document_id: str, name: str, data: bytes) -> str:
    safe = safe_filename(name)
    row = session.get(StoredUploadRow, document_id)
    if row is None:
        session.add(StoredUploadRow(document_id=document_id, name=safe, data=data))
    else:
        row.name, row.data = safe, data
    return f"{DATABASE_PREFIX}{document_id}/{safe}"


class DatabaseUploads:
    """Uploads kept as rows of ``stored_uploads``: every process on the database reads them."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions

    def store(self, document_id: str, name: str, data: bytes) -> str:
        with self._sessions.begin() as session:
            return _put_row(session, document_id, name, data)

    def stage(self, document_id: str, name: str, data: bytes) -> StagedRow:
        """The row is written by the transaction that queues the document again (same database)."""
        return StagedRow(document_id, name, data)

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
