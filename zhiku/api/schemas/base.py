"""What every request model shares: the base model, pagination, and the JSON schema hooks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

#: Marks a reference to a components schema by model name: pydantic refuses ``$ref`` values it did
#: not make itself, so the OpenAPI builder turns these into ``$ref`` afterwards.
SCHEMA_REF = "x-zhiku-schema"


class ApiModel(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Pagination(ApiModel):
    page: int = Field(1, ge=1, le=1_000_000)
    limit: int = Field(20, ge=1, le=100)


def deduplicated(values: list[str] | None) -> list[str] | None:
    """The same ids once each, in first-seen order (a list of duplicates costs one lookup each)."""
    return None if values is None else list(dict.fromkeys(values))


def enum_of(values: Callable[[], list[str]]) -> Callable[[dict[str, Any]], None]:
    """A JSON schema hook naming the values of a string field, read when the document is built
    (plugins register at import, so the document lists the server's own)."""

    def add(schema: dict[str, Any]) -> None:
        target = next(
            (item for item in schema.get("anyOf", [schema]) if item.get("type") == "string"), schema
        )
        target["enum"] = values()

    return add
