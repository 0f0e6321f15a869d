"""Metadata values as the user typed them, not as they are stored: a number stored as ``2025.0``
shows ``2025``; a time stored as Unix seconds shows as an ISO 8601 date (or date and time) that
the page's script renders in the user's locale and the edit form takes back unchanged."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from zhiku.core.metadata import FieldType


def typed(field_type: FieldType, value: Any) -> str:
    """``value`` as it would have been typed into a form (empty for none)."""
    if value is None:
        return ""
    if field_type == "number" and isinstance(value, int | float):
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    if field_type == "time" and isinstance(value, int | float):
        moment = datetime.fromtimestamp(float(value), UTC)
        if moment.time() == datetime.min.time():
            return moment.date().isoformat()
        return moment.isoformat().replace("+00:00", "Z")
    return str(value)


def is_date(field_type: FieldType, value: Any) -> bool:
    """A time value the page's script shows as a date in the user's locale."""
    return field_type == "time" and isinstance(value, int | float)


def moment(value: datetime) -> str:
    """A stored time as ISO 8601 in UTC (``…Z``), which the page's script shows in local time;
    SQLite gives times back without their zone, and they are UTC."""
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
