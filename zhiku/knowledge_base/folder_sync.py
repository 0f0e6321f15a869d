"""Making a dataset mirror a folder: new files added, changed ones (by content hash) indexed
again, documents whose file is gone deleted, the rest left alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from zhiku.core.document_status import IN_PROGRESS, DocumentStatus
from zhiku.core.errors import InvalidInput
from zhiku.knowledge_base.dataset_documents import DatasetDocuments
from zhiku.knowledge_base.document_intake import DocumentIntake
from zhiku.knowledge_base.indexing.ingestion import Progress, Source
from zhiku.knowledge_base.indexing.pipeline import Pipeline
from zhiku.knowledge_base.records import DocumentInfo

S = DocumentStatus


@dataclass(frozen=True)
class SyncReport:
    """What :meth:`Dataset.sync_folder` did, by file."""

    added: list[DocumentInfo] = field(default_factory=list)
    updated: list[DocumentInfo] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[DocumentInfo]:
        return [info for info in (*self.added, *self.updated) if info.status == S.ERROR]


class FolderSync:
    """Mirrors folders into one dataset."""

    def __init__(self, documents: DatasetDocuments, intake: DocumentIntake) -> None:
        self._documents = documents
        self._intake = intake

    def sync_folder(
        self, folder: str | Path, *, pipeline: Pipeline | None = None, on_progress: Progress | None = None
    ) -> SyncReport:
        """Make the dataset mirror a folder: new files are added, changed files (by content hash)
        re-indexed atomically, documents whose file is gone deleted, the rest left alone — a run
        with nothing changed reads and hashes the files and embeds nothing (hidden files and
        folders are left out; a document being indexed is left for the next run to look at)."""
        root = Path(folder).resolve()
        if not root.is_dir():
            raise InvalidInput(f"{folder}: not a folder")
        files = {
            str(path): path
            for path in sorted(root.rglob("*"))
            if path.is_file() and not any(part.startswith(".") for part in path.relative_to(root).parts)
        }
        known = self._documents.under(root)
        report = SyncReport()
        new_paths: list[Path] = []
        changed: list[tuple[str, Path]] = []
        for origin, path in files.items():
            if origin not in known:
                new_paths.append(path)
                continue
            document_id, file_hash, status = known[origin]
            if status in IN_PROGRESS or status in (S.WAITING, S.PAUSED):
                report.unchanged.append(origin)  # a run of it is under way; the next sync looks again
            elif status == S.ERROR or file_hash != Source.file(path).sha256():
                changed.append((document_id, path))
            else:
                report.unchanged.append(origin)
        for origin, (document_id, _, _) in known.items():
            if origin not in files:
                self._documents.delete(document_id)
                report.deleted.append(origin)
        report.added.extend(
            self._intake.add_files(new_paths, pipeline=pipeline, on_progress=on_progress, on_duplicate="keep")
        )
        for document_id, path in changed:
            report.updated.append(self._intake.replace_file(document_id, path, pipeline=pipeline))
        return report
