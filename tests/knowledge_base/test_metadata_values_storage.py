"""The typed values table as stored: its migration fills it from the JSON values already there,
and every statement a filter on a field runs reads an index range of it (SQLite's plans)."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from alembic import command
from sqlalchemy import event, inspect, text

from zhiku import KnowledgeBase
from zhiku.core.db import make_engine
from zhiku.core.db.migrate import alembic_config
from zhiku.core.metadata import MetadataFilter


def _insert(connection: Any, table: str, row: dict[str, Any]) -> None:
    names = ", ".join(row)
    connection.execute(text(f"INSERT INTO {table} ({names}) VALUES ({', '.join(':' + n for n in row)})"), row)


def test_the_migration_fills_the_table_from_the_documents_json(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        with engine.begin() as connection:
            command.downgrade(alembic_config(connection), "0013")
        with engine.begin() as connection:
            assert not inspect(connection).has_table("document_metadata_values")
            _insert(
                connection,
                "datasets",
                {
                    "id": "d1",
                    "name": "old",
                    "description": "",
                    "embedding_model": "use",
                    "embedding_dim": 512,
                    "embedding_options": "{}",
                    "retrieval_config": "{}",
                    "llm_options": "{}",
                    "process_rule": "{}",
                    "tokenizer_settings": "{}",
                    "doc_form": "paragraph",
                    "metadata_fields": "[]",
                    "section_descriptions": "{}",
                    "created_at": "2026-01-01",
                    "updated_at": "2026-01-01",
                },
            )
            for document_id, values in {
                "a": {"f1": "Tea_%", "f2": 3.5, "f3": 1700000000},
                "b": {},
                "c": {"f1": ""},
            }.items():
                _insert(
                    connection,
                    "documents",
                    {
                        "id": document_id,
                        "dataset_id": "d1",
                        "name": f"{document_id}.txt",
                        "source": "",
                        "size": 0,
                        "status": "completed",
                        "enabled": True,
                        "segment_count": 0,
                        "token_count": 0,
                        "doc_metadata": "{}",
                        "metadata_values": json.dumps(values),
                        "created_at": "2026-01-01",
                    },
                )
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), "head")
        with engine.connect() as connection:
            rows = connection.execute(
                text(
                    "SELECT document_id, field_id, dataset_id, text_value, number_value "
                    "FROM document_metadata_values ORDER BY document_id, field_id"
                )
            ).all()
    finally:
        engine.dispose()
    assert [tuple(row) for row in rows] == [
        ("a", "f1", "d1", "Tea_%", None),
        ("a", "f2", "d1", None, 3.5),
        ("a", "f3", "d1", None, 1700000000.0),
        ("c", "f1", "d1", "", None),
    ]


@pytest.mark.skipif(bool(os.environ.get("ZHIKU_TEST_DATABASE_URL")), reason="SQLite's query plans")
def test_a_filter_on_a_field_reads_index_ranges_only(kb: KnowledgeBase) -> None:
    dataset = kb.create_dataset("plans")
    dataset.metadata.add_field("tag", "string")
    dataset.metadata.add_field("year", "number")
    doc = dataset.add_text("a.txt", "a document about tea")
    dataset.metadata.set_values(doc.id, {"tag": "Green", "year": 2020})
    statements: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        statements.append((statement, parameters))

    conditions = [
        {"name": "tag", "comparison_operator": "start with", "value": "gr"},
        {"name": "tag", "comparison_operator": "is", "value": "Green"},
        {"name": "tag", "comparison_operator": "in", "value": ["Green", "red"]},
        {"name": "tag", "comparison_operator": "not empty"},
        {"name": "year", "comparison_operator": "≥", "value": 2000},
        {"name": "year", "comparison_operator": "≠", "value": 1999},
    ]
    with kb.sessions() as session:
        engine = session.get_bind()
    event.listen(engine, "before_cursor_execute", record)
    try:
        for condition in conditions:
            scope = dataset.metadata.scope(MetadataFilter.model_validate({"conditions": [condition]}))
            assert scope is not None and scope.ids is not None  # its list read, as a store asks
    finally:
        event.remove(engine, "before_cursor_execute", record)
    reads = [(s, p) for s, p in statements if "document_metadata_values" in s]
    assert len(reads) == len(conditions)
    with engine.connect() as connection:
        plans = [
            " | ".join(row[3] for row in connection.exec_driver_sql("EXPLAIN QUERY PLAN " + s, p))
            for s, p in reads
        ]
    for plan in plans:  # a range of one of its indexes (the prefix's reads its rows in range too)
        assert plan.startswith("SEARCH document_metadata_values USING "), plan
        assert "INDEX ix_metadata_values_" in plan and "SCAN" not in plan, plan
    assert "ix_metadata_values_folded (dataset_id=? AND field_id=? AND <expr>>? AND <expr><?)" in plans[0]
    assert "ix_metadata_values_number (dataset_id=? AND field_id=? AND number_value>?)" in plans[4]
