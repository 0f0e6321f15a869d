"""A dataset's sections: the heading paths its segments carry, with counts and descriptions.

The paths come from the segments' ``section`` metadata (one grouped query); the descriptions are
the users' own, stored with the dataset, and are what an answer's intent step reads to route a
question to one section.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import String, cast, func, select
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db import DatasetRow, SegmentRow
from zhiku.core.errors import InvalidInput, NotFound
from zhiku.core.sections import SECTION_KEY, normalize_section

#: Most sections a listing returns (sorted by path) and a dataset may describe.
MAX_SECTIONS = 10_000
#: Longest description (characters).
MAX_DESCRIPTION_CHARS = 2000


@dataclass(frozen=True)
class SectionInfo:
    """One section: its path, how many segments it holds directly, and its description."""

    name: str
    segment_count: int
    description: str | None = None


class DatasetSections:
    """The sections of one dataset."""

    def __init__(self, sessions: sessionmaker[Session], dataset_id: str) -> None:
        self._sessions = sessions
        self.dataset_id = dataset_id

    def all(self) -> list[SectionInfo]:
        """Every section with segments (their count, sections under it not included) or with a
        description (count 0 until a document gives it segments), sorted by path;
        ``search(..., section=name)`` restricts a search to one and the sections under it."""
        path = cast(SegmentRow.seg_metadata[SECTION_KEY].as_string(), String)
        with self._sessions() as session:
            descriptions = dict(self._dataset(session).section_descriptions or {})
            rows = session.execute(
                select(path, func.count())
                .where(SegmentRow.dataset_id == self.dataset_id, path.is_not(None), path != "")
                .group_by(path)
                .order_by(path)
                .limit(MAX_SECTIONS)
            ).all()
        counts = {str(name): int(count) for name, count in rows}
        names = sorted(set(counts) | set(descriptions))[:MAX_SECTIONS]
        return [SectionInfo(name, counts.get(name, 0), descriptions.get(name)) for name in names]

    def descriptions(self) -> dict[str, str]:
        """Each described section's description, by path: the dataset row alone, no segment is
        counted (what an answer's understanding step reads on every question)."""
        with self._sessions() as session:
            stored = self._dataset(session).section_descriptions or {}
        return {str(name): str(text) for name, text in stored.items() if text}

    def describe_many(self, descriptions: dict[str, str | None]) -> list[SectionInfo]:
        """Set (or, with None or blank, remove) the descriptions of these sections, all or none.
        InvalidInput names ``name`` or ``description`` when one is malformed."""
        cleaned: dict[str, str | None] = {}
        for name, description in descriptions.items():
            path = normalize_section(name, "name")
            if description is not None and not isinstance(description, str):
                raise InvalidInput("description: must be a string or null")
            if description is not None and len(description) > MAX_DESCRIPTION_CHARS:
                raise InvalidInput(f"description: at most {MAX_DESCRIPTION_CHARS} characters")
            cleaned[path] = (description or "").strip() or None
        with self._sessions.begin() as session:
            row = self._dataset(session, lock=True)
            stored = dict(row.section_descriptions or {})
            for path, description in cleaned.items():
                if description is None:
                    stored.pop(path, None)
                else:
                    stored[path] = description
            if len(stored) > MAX_SECTIONS:
                raise InvalidInput(f"name: a dataset describes at most {MAX_SECTIONS} sections")
            row.section_descriptions = stored
        counts = {s.name: s.segment_count for s in self.all() if s.name in cleaned}
        return [SectionInfo(path, counts.get(path, 0), d) for path, d in cleaned.items()]

    def _dataset(self, session: Session, *, lock: bool = False) -> DatasetRow:
        statement = select(DatasetRow).where(DatasetRow.id == self.dataset_id)
        row = session.scalar(statement.with_for_update() if lock else statement)
        if row is None:
            raise NotFound(f"no dataset {self.dataset_id!r}")
        return row
