"""Metadata values shown as typed: numbers without a stored ``.0``, times as ISO 8601 dates."""

from __future__ import annotations

from zhiku.console.values import is_date, typed


def test_numbers_read_as_typed() -> None:
    assert typed("number", 2025.0) == "2025"
    assert typed("number", 2.5) == "2.5"
    assert typed("number", -3.0) == "-3"
    assert typed("number", None) == ""


def test_times_read_as_dates_or_moments() -> None:
    assert typed("time", 1735689600.0) == "2025-01-01"
    assert typed("time", 1735723800.0) == "2025-01-01T09:30:00Z"
    assert is_date("time", 1735689600.0) and not is_date("number", 2025.0)


def test_strings_stay_as_they_are() -> None:
    assert typed("string", "2025.0") == "2025.0"


def test_stored_moments_read_as_utc() -> None:
    from datetime import UTC, datetime

    from zhiku.console.values import moment

    assert moment(datetime(2026, 1, 2, 3, 4, 5, 678)) == "2026-01-02T03:04:05Z"  # SQLite: no zone
    assert moment(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2026-01-02T03:04:05Z"
