"""The typed metadata values table: in step with each document's JSON values on every write
path, filled by its migration, read by index, and answering filters exactly as the JSON did."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import insert, select

from zhiku import KnowledgeBase
from zhiku.core.db import DocumentRow
from zhiku.core.db.models import MetadataValueRow
from zhiku.core.metadata import MetadataFilter, check_filter
from zhiku.knowledge_base.dataset import Dataset
from zhiku.knowledge_base.metadata_values import typed_value

from .json_metadata_oracle import json_scope
from .random_metadata import EPOCH, random_condition, random_text, set_random_values


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
                    "name": random_text(rng) + ".txt",
                    "source": random_text(rng),
                    "status": "completed",
                    "created_at": EPOCH + timedelta(days=rng.randint(0, 9)),
                    "doc_metadata": {},
                    "metadata_values": {},
                }
                for i in range(documents)
            ],
        )
    set_random_values(dataset, rng, [info.id for info in dataset.documents()])
    return dataset


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
                "conditions": [random_condition(rng, dataset, stored) for _ in range(rng.randint(1, 3))],
            }
        )
        scope = dataset.metadata.scope(where)
        with kb.sessions() as session:
            fields = {f.name: f for f in dataset.metadata.fields()}
            checked = check_filter(where, fields, builtin=True)
            expected = json_scope(session, dataset.id, checked, where.logical_operator)
        assert scope is not None
        assert scope.with_payload_filter(None) == expected, where.model_dump()
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
    set_random_values(dataset, rng, rng.sample(documents, len(documents) // 3))
    field = next(f for f in dataset.metadata.fields() if f.name == "s2")
    dataset.metadata.delete_field(field.id)
    dataset.metadata.add_field("s2", "string")
    set_random_values(dataset, rng, rng.sample(documents, len(documents) // 2))
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
