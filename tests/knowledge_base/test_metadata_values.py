"""The typed metadata values table: in step with each document's JSON values on every write
path, filled by its migration, read by index, and answering filters exactly as the JSON did."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import insert, select

from zhiku import KnowledgeBase
from zhiku.core.db import DocumentRow
from zhiku.core.db.models import MetadataValueRow
from zhiku.core.metadata import OPERATORS_OF_TYPE, MetadataFilter, check_filter
from zhiku.knowledge_base.dataset import Dataset
from zhiku.knowledge_base.metadata_values import typed_value

from .json_metadata_oracle import json_scope

#: Pieces of string values: case pairs (ASCII and not), LIKE's wildcards and escape, CJK, blanks.
PIECES = ["a", "A", "ab", "AB", "é", "É", "%", "_", "/", "\\", "中", "文", " ", "x1", "ß", "ǅ"]
OPERATOR_ORDER = {t: sorted(ops) for t, ops in OPERATORS_OF_TYPE.items()}
BUILTIN = {"document_name": "string", "source": "string", "upload_date": "time"}
EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 4)))


def _value(rng: random.Random, field_type: str) -> Any:
    """A value to store, None (no value) about one time in four."""
    if rng.random() < 0.25:
        return None
    if field_type == "string":
        return _text(rng)
    if field_type == "number":
        return rng.choice([rng.randint(-3, 3), rng.randint(-3, 3) + 0.5, 1e12, -0.0])
    return (EPOCH + timedelta(days=rng.randint(0, 9))).isoformat()


def _fill(kb: KnowledgeBase, rng: random.Random, documents: int) -> Dataset:
    dataset = kb.create_dataset(f"random-{rng.random()}")
    dataset.metadata.set_builtin(True)
    for name, field_type in (("s1", "string"), ("s2", "string"), ("n", "number"), ("t", "time")):
        dataset.metadata.add_field(name, field_type)  # type: ignore[arg-type]
    with kb.sessions.begin() as session:
        session.execute(
            insert(DocumentRow),
            [
                {
                    "id": f"{rng.getrandbits(64):016x}-{i:04d}",
                    "dataset_id": dataset.id,
                    "name": _text(rng) + ".txt",
                    "source": _text(rng),
                    "status": "completed",
                    "created_at": EPOCH + timedelta(days=rng.randint(0, 9)),
                    "doc_metadata": {},
                    "metadata_values": {},
                }
                for i in range(documents)
            ],
        )
    _set_random_values(dataset, rng, [info.id for info in dataset.documents()])
    return dataset


def _set_random_values(dataset: Dataset, rng: random.Random, documents: list[str]) -> None:
    types = {f.name: f.type for f in dataset.metadata.fields()}
    dataset.metadata.set_many({doc: {name: _value(rng, t) for name, t in types.items()} for doc in documents})


def _condition(rng: random.Random, dataset: Dataset, stored: list[Any]) -> dict[str, Any]:
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
        one = rng.choice([pick, pick[:cut], pick[cut:], pick.upper(), _text(rng) or "a"])
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


def _check_against_oracle(kb: KnowledgeBase, dataset: Dataset, rng: random.Random, filters: int) -> int:
    """Random filters, each resolved both ways; returns how many kept the other list (exclude)."""
    stored = [
        v
        for values in dataset.metadata.values_of([d.id for d in dataset.documents()]).values()
        for v in values.values()
    ]
    excluded = 0
    for _ in range(filters):
        where = MetadataFilter.model_validate(
            {
                "logical_operator": rng.choice(["and", "or"]),
                "conditions": [_condition(rng, dataset, stored) for _ in range(rng.randint(1, 3))],
            }
        )
        scope = dataset.metadata.scope(where)
        with kb.sessions() as session:
            fields = {f.name: f for f in dataset.metadata.fields()}
            checked = check_filter(where, fields, builtin=True)
            expected = json_scope(session, dataset.id, checked, where.logical_operator)
        assert scope == expected, where.model_dump()
        excluded += expected.exclude
    return excluded


def _rows_as_json(kb: KnowledgeBase) -> tuple[dict[Any, Any], dict[Any, Any]]:
    """Every document's values as the table has them, and as its JSON column has them."""
    with kb.sessions() as session:
        rows = {
            (r.dataset_id, r.document_id, r.field_id): (r.text_value, r.number_value)
            for r in session.scalars(select(MetadataValueRow))
        }
        from_json = {
            (d.dataset_id, d.id, field_id): tuple(typed.values())
            for d in session.scalars(select(DocumentRow))
            for field_id, value in (d.metadata_values or {}).items()
            if (typed := typed_value(value)) is not None
        }
    return rows, from_json


def _assert_in_step(kb: KnowledgeBase) -> None:
    rows, from_json = _rows_as_json(kb)
    assert rows == from_json


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_filter_answers_exactly_as_the_json_did(kb: KnowledgeBase, seed: int) -> None:
    rng = random.Random(seed)
    dataset = _fill(kb, rng, documents=rng.choice([7, 40, 61]))
    excluded = _check_against_oracle(kb, dataset, rng, filters=150)
    # values rewritten for some documents, a field deleted and added again: still the same answers
    documents = [info.id for info in dataset.documents()]
    _set_random_values(dataset, rng, rng.sample(documents, len(documents) // 3))
    field = next(f for f in dataset.metadata.fields() if f.name == "s2")
    dataset.metadata.delete_field(field.id)
    dataset.metadata.add_field("s2", "string")
    _set_random_values(dataset, rng, rng.sample(documents, len(documents) // 2))
    excluded += _check_against_oracle(kb, dataset, rng, filters=150)
    _assert_in_step(kb)
    assert 0 < excluded < 300  # both lists were chosen: the scope's form was compared too


def test_every_write_path_keeps_the_table_in_step(kb: KnowledgeBase, tmp_path: Any) -> None:
    dataset = kb.create_dataset("paths")
    meta = dataset.metadata
    meta.add_field("tag", "string")
    meta.add_field("year", "number")
    meta.add_field("seen", "time")
    docs = [dataset.add_text(f"d{i}.txt", f"document number {i} about tea").id for i in range(4)]
    meta.set_values(docs[0], {"tag": "Tea_%", "year": 2020, "seen": "2024-05-01"})
    meta.set_many({docs[1]: {"tag": "", "year": "7"}, docs[2]: {"tag": "green"}, docs[3]: {"year": 1}})
    _assert_in_step(kb)
    rows, _ = _rows_as_json(kb)
    assert len(rows) == 7
    meta.set_values(docs[0], {"tag": None, "year": 2021})  # replaced: tag and seen gone
    meta.delete_field(next(f.id for f in meta.fields() if f.name == "year"))
    _assert_in_step(kb)
    assert {key[2] for key in _rows_as_json(kb)[0]} == {next(f.id for f in meta.fields() if f.name == "tag")}
    dataset.delete_document(docs[2])
    _assert_in_step(kb)
    other = kb.create_dataset("other")
    other.metadata.add_field("tag", "string")
    other.metadata.set_values(other.add_text("o.txt", "other tea").id, {"tag": "kept"})
    target = KnowledgeBase.open(tmp_path / "target", embedding_model="use")
    try:
        from zhiku.knowledge_base.migrate import migrate

        migrate(kb, target)
        assert _rows_as_json(target)[0] == _rows_as_json(kb)[0]
        _assert_in_step(target)
    finally:
        target.close()
    kb.delete_dataset("paths")
    rows, from_json = _rows_as_json(kb)
    assert rows == from_json and {key[0] for key in rows} == {other.id}
