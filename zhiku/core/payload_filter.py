"""A metadata filter as tests on the store points' own payload, for the stores that can run them.

A document's metadata values are also written into the payload of its points on the Qdrant
backends (embedded and server; see :mod:`zhiku.knowledge_base.metadata_points`), one key per
field (:func:`metadata_key`), a string as a keyword and a number or a time as a float. A filter
on those keys reads one payload index range instead of a list of documents the engine must
gather point by point, and lets the engine count what it admits per value.

:func:`payload_filter` says the same as the SQL of :mod:`zhiku.knowledge_base.metadata_filter`
or gives None: a test needing what a keyword index cannot do (``contains``, a prefix or suffix:
case-insensitive in SQL), a built-in field (a column of the document, not a value), or an empty
string (not written to the payload, see :func:`payload_value`). The scope keeps the list of
documents beside it for every other store (PostgreSQL, the keyword postings).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from zhiku.core.metadata import CheckedCondition, FieldType

#: The payload index a field's values need: exact strings, or numbers compared by range.
PayloadKind = Literal["keyword", "float"]
#: A numeric ``in`` (equality to any value) is a range per value: past this many, the list of
#: documents is used instead.
MAX_NUMBER_VALUES = 64
#: A negative operator's positive twin: SQL keeps the documents without a value, as ``must_not``
#: of the twin does (a point without the key never matches it).
_POSITIVE_OF = {"is not": "is", "≠": "=", "not in": "in"}
_RANGE_OF = {">": "gt", "after": "gt", "<": "lt", "before": "lt", "≥": "gte", "≤": "lte"}


#: What every metadata payload key begins with.
METADATA_PREFIX = "meta_"


def metadata_key(field_id: str) -> str:
    """The payload key of a metadata field (its id, stable across renames; only letters, digits
    and ``_``, so no engine reads it as a path)."""
    return METADATA_PREFIX + re.sub(r"[^0-9A-Za-z]", "_", field_id)


def payload_kind(field_type: FieldType) -> PayloadKind:
    return "keyword" if field_type == "string" else "float"


def payload_value(value: Any) -> str | float | None:
    """A stored value as the payload holds it; None (no key) for an empty string or a value no
    filter could match."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


@dataclass(frozen=True)
class FieldTest:
    """One test of a payload key: its value is one of ``strings`` or of ``numbers``, or within
    the bounds, or (with ``empty``) the key is absent; ``negate`` inverts it (a point without the
    key then passes)."""

    key: str
    strings: tuple[str, ...] = ()
    numbers: tuple[float, ...] = ()
    gt: float | None = None
    gte: float | None = None
    lt: float | None = None
    lte: float | None = None
    empty: bool = False
    negate: bool = False


@dataclass(frozen=True)
class PayloadFilter:
    """Tests joined by ``and`` (all pass) or ``or`` (``any_of``: one passes)."""

    tests: tuple[FieldTest, ...]
    any_of: bool = False


def payload_filter(conditions: Sequence[CheckedCondition], logical_operator: str) -> PayloadFilter | None:
    """The conditions as payload tests; None when one of them has none (see the module)."""
    tests = []
    for condition in conditions:
        test = _test(condition)
        if test is None:
            return None
        tests.append(test)
    return PayloadFilter(tuple(tests), any_of=logical_operator == "or") if tests else None


def _test(condition: CheckedCondition) -> FieldTest | None:
    if condition.field_id is None:
        return None
    key, op, value = metadata_key(condition.field_id), condition.operator, condition.value
    if op in ("empty", "not empty"):
        return FieldTest(key, empty=True, negate=op == "not empty")
    positive = _POSITIVE_OF.get(op, op)
    negate = positive != op
    if positive in _RANGE_OF:
        bound = _RANGE_OF[positive]
        return FieldTest(
            key,
            gt=float(value) if bound == "gt" else None,
            gte=float(value) if bound == "gte" else None,
            lt=float(value) if bound == "lt" else None,
            lte=float(value) if bound == "lte" else None,
            negate=negate,
        )
    listed = value if isinstance(value, list) else [value]
    if positive not in ("is", "=", "in") or not listed:
        return None  # contains, start with, end with
    if condition.type == "string":
        if any(not isinstance(v, str) or v == "" for v in listed):
            return None
        return FieldTest(key, strings=tuple(listed), negate=negate)
    if len(listed) > MAX_NUMBER_VALUES:
        return None
    return FieldTest(key, numbers=tuple(float(v) for v in listed), negate=negate)
