"""Document metadata fields and the conditions that filter a search by them, in Dify's shapes.

A dataset declares its fields (``string``, ``number`` or ``time``); built-in fields read the
document's own columns. A :class:`MetadataFilter` (Dify's ``metadata_filtering_conditions``) is
checked against those fields by :func:`check_filter`, which names the offending condition in
its error, and turned into SQL over the documents table by
:mod:`zhiku.knowledge_base.metadata`; the resulting set of documents is pushed into every search
channel, so a filtered search still returns ``top_k`` hits when they exist.

Values: ``time`` values are Unix seconds (an ISO 8601 date or time is accepted and converted, a
naive one taken as UTC). Negative operators (``not contains``, ``is not``, ``not in``, ``≠``)
also match documents that have no value for the field: "not tagged X" includes the untagged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr, field_validator

from zhiku.core.errors import InvalidInput

FieldType = Literal["string", "number", "time"]
Operator = Literal[
    "contains",
    "not contains",
    "start with",
    "end with",
    "is",
    "is not",
    "empty",
    "not empty",
    "in",
    "not in",
    "=",
    "≠",
    ">",
    "<",
    "≥",
    "≤",
    "before",
    "after",
]
OPERATORS: tuple[str, ...] = get_args(Operator)
#: ASCII spellings accepted for the comparison operators.
OPERATOR_ALIASES = {"!=": "≠", ">=": "≥", "<=": "≤", "==": "="}

#: Fields every document has, read from its own columns; a dataset enables them as a group.
BUILTIN_FIELDS: dict[str, FieldType] = {
    "document_name": "string",
    "source": "string",
    "upload_date": "time",
    "last_update_date": "time",
}

_COMPARISONS = ("=", "≠", ">", "<", "≥", "≤")
OPERATORS_OF_TYPE: dict[FieldType, frozenset[str]] = {
    "string": frozenset(
        {"contains", "not contains", "start with", "end with", "is", "is not", "empty", "not empty",
         "in", "not in"}
    ),
    "number": frozenset({*_COMPARISONS, "empty", "not empty", "in", "not in"}),
    "time": frozenset({*_COMPARISONS, "before", "after", "empty", "not empty"}),
}
NEGATIVE_OPERATORS = frozenset({"not contains", "is not", "not in", "≠"})

MAX_CONDITIONS = 50
MAX_VALUE_CHARS = 1000
MAX_LIST_VALUES = 1000


class MetadataField(BaseModel):
    """A field a dataset's documents may carry. ``id`` is stable across renames."""

    model_config = ConfigDict(extra="forbid")

    id: str
    name: str = Field(min_length=1, max_length=255)
    type: FieldType


class Condition(BaseModel):
    """One test of one field; ``value`` is left out for ``empty`` and ``not empty``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=255)
    comparison_operator: Operator
    #: strict: JSON ``true`` would otherwise pass as the number 1 (and the string "1")
    value: StrictStr | StrictInt | StrictFloat | list[StrictStr] | None = None

    @field_validator("comparison_operator", mode="before")
    @classmethod
    def _alias(cls, value: Any) -> Any:
        return OPERATOR_ALIASES.get(value, value) if isinstance(value, str) else value

    @field_validator("value")
    @classmethod
    def _bounded(cls, value: Any) -> Any:
        if isinstance(value, str) and len(value) > MAX_VALUE_CHARS:
            raise ValueError(f"at most {MAX_VALUE_CHARS} characters")
        if isinstance(value, list):
            if len(value) > MAX_LIST_VALUES:
                raise ValueError(f"at most {MAX_LIST_VALUES} values")
            if any(len(item) > MAX_VALUE_CHARS for item in value):
                raise ValueError(f"each value at most {MAX_VALUE_CHARS} characters")
        return value


class MetadataFilter(BaseModel):
    """Dify's ``metadata_filtering_conditions``: conditions joined by ``and`` or ``or``."""

    model_config = ConfigDict(extra="forbid")

    logical_operator: Literal["and", "or"] = "and"
    conditions: list[Condition] = Field(default_factory=list, max_length=MAX_CONDITIONS)


@dataclass(frozen=True)
class CheckedCondition:
    """A condition whose field is known and whose value has the type its operator needs.

    ``field_id`` is None for a built-in field; ``value`` is a str, a float, a list of str or of
    float (``in``), or None (``empty``/``not empty``).
    """

    field_id: str | None
    name: str
    type: FieldType
    operator: str
    value: Any


def check_filter(
    metadata_filter: MetadataFilter, fields: Mapping[str, MetadataField], *, builtin: bool
) -> list[CheckedCondition]:
    """The filter's conditions checked against a dataset's ``fields`` (by name) and, when
    ``builtin`` is on, the built-in ones. Raises InvalidInput naming the condition at fault."""
    checked = []
    for i, condition in enumerate(metadata_filter.conditions):
        where = f"metadata_filtering_conditions.conditions[{i}]"
        field = fields.get(condition.name)
        if field is not None:
            field_id, field_type = field.id, field.type
        elif builtin and condition.name in BUILTIN_FIELDS:
            field_id, field_type = None, BUILTIN_FIELDS[condition.name]
        else:
            known = sorted([*fields, *(BUILTIN_FIELDS if builtin else ())])
            raise InvalidInput(
                f"{where}.name: no metadata field {condition.name!r} in this dataset "
                f"(fields: {', '.join(known) or 'none'})"
            )
        operator = condition.comparison_operator
        if operator not in OPERATORS_OF_TYPE[field_type]:
            raise InvalidInput(
                f"{where}.comparison_operator: {operator!r} does not apply to {field_type} field "
                f"{condition.name!r} (use one of: {', '.join(sorted(OPERATORS_OF_TYPE[field_type]))})"
            )
        try:
            value = _value_for(field_type, operator, condition.value)
        except ValueError as exc:
            raise InvalidInput(f"{where}.value: {exc}") from None
        checked.append(CheckedCondition(field_id, condition.name, field_type, operator, value))
    return checked


def _value_for(field_type: FieldType, operator: str, value: Any) -> Any:
    if operator in ("empty", "not empty"):
        return None
    if value is None:
        raise ValueError(f"{operator!r} needs a value")
    if operator in ("in", "not in"):
        items = value if isinstance(value, list) else [p.strip() for p in str(value).split(",")]
        items = [i for i in items if i != ""]
        if not items:
            raise ValueError(f"{operator!r} needs at least one value")
        return [coerce_value(field_type, item) for item in items]
    if isinstance(value, list):
        raise ValueError(f"{operator!r} takes one value, not a list")
    return coerce_value(field_type, value)


def coerce_value(field_type: FieldType, value: Any) -> str | float:
    """A value as stored for ``field_type``: str for strings, float (Unix seconds for time).

    Raises ValueError saying what was expected."""
    if field_type == "string":
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ValueError("expected a string")
        return str(value)
    if isinstance(value, bool):
        raise ValueError(f"expected a {'number' if field_type == 'number' else 'time'}")
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            if field_type == "number":
                raise ValueError(f"expected a number, got {value[:40]!r}") from None
            number = _parse_time(value)
    else:
        raise ValueError(f"expected a {field_type}")
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError("expected a finite number")
    return number


def _parse_time(value: str) -> float:
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(f"expected Unix seconds or an ISO 8601 date, got {value[:40]!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
