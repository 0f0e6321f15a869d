"""Uploaded files kept under the data directory until their document is deleted.

The indexing workers read a document from its stored upload, so a server restarted mid-indexing
can index it again. Each document has its own folder, ``<home>/uploads/<document id>/``, holding
one file whose name is the client's file name made safe (:func:`safe_filename`).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import unicodedata
from pathlib import Path

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


class Uploads:
    """The folder of stored uploads, one sub-folder per document id."""

    def __init__(self, root: Path) -> None:
        self.root = root

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
