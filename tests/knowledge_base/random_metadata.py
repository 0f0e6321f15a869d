"""Random metadata values and filters over them, for the tests comparing two ways of answering
one filter: string pieces that trip case folding and LIKE's wildcards, numbers with halves and
extremes, times, every operator of every type (built-in fields included)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from zhiku.core.metadata import OPERATORS_OF_TYPE
from zhiku.knowledge_base.dataset import Dataset

#: Pieces of string values: case pairs (ASCII and not), LIKE's wildcards and escape, CJK, blanks.
PIECES = ["a", "A", "ab", "AB", "é", "É", "%", "_", "/", "\\", "中", "文", " ", "x1", "ß", "ǅ"]
OPERATOR_ORDER = {t: sorted(ops) for t, ops in OPERATORS_OF_TYPE.items()}
BUILTIN = {"document_name": "string", "source": "string", "upload_date": "time"}
EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


def random_text(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 4)))


def random_value(rng: random.Random, field_type: str) -> Any:
    """A value to store, None (no value) about one time in four."""
    if rng.random() < 0.25:
        return None
    if field_type == "string":
        return random_text(rng)
    if field_type == "number":
        return rng.choice([rng.randint(-3, 3), rng.randint(-3, 3) + 0.5, 1e12, -0.0])
    return (EPOCH + timedelta(days=rng.randint(0, 9))).isoformat()


def set_random_values(dataset: Dataset, rng: random.Random, documents: list[str]) -> None:
    types = {f.name: f.type for f in dataset.metadata.fields()}
    values = {doc: {name: random_value(rng, t) for name, t in types.items()} for doc in documents}
    dataset.metadata.set_many(values)


def random_condition(rng: random.Random, dataset: Dataset, stored: list[Any]) -> dict[str, Any]:
    types = {f.name: f.type for f in dataset.metadata.fields()} | BUILTIN
    name = rng.choice(sorted(types))
    field_type = types[name]
    operator = rng.choice(OPERATOR_ORDER[field_type])  # type: ignore[index]
    condition: dict[str, Any] = {"name": name, "comparison_operator": operator}
    if operator in ("empty", "not empty"):
        return condition
    if field_type == "string":
        known = [v for v in stored if isinstance(v, str) and v] or ["a"]
        pick = rng.choice(known)
        cut = rng.randint(0, len(pick))
        one = rng.choice([pick, pick[:cut], pick[cut:], pick.upper(), random_text(rng) or "a"])
        if operator in ("in", "not in"):
            condition["value"] = [one or "a", *(rng.choice(known) for _ in range(rng.randint(0, 2)))]
        else:
            condition["value"] = one  # "" too: every value contains it, "is" finds the empty
    elif field_type == "number":
        numbers = [rng.randint(-3, 3) + rng.choice([0, 0.5]) for _ in range(3)]
        condition["value"] = [str(n) for n in numbers] if operator in ("in", "not in") else numbers[0]
    else:
        condition["value"] = (
            EPOCH + timedelta(days=rng.randint(0, 9), hours=rng.choice([0, 12]))
        ).isoformat()
    return condition
