"""Alembic migrations: they build exactly the models' schema, adopt databases made before
migrations existed, and run once when several openers race on a new database.

These run on the run's backend: SQLite, or PostgreSQL under ``ZHIKU_TEST_DATABASE_URL``.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, create_engine, inspect, select, text

from zhiku.core.db import DatasetRow, make_engine, make_session_factory
from zhiku.core.db.migrate import (
    alembic_config,
    current_revision,
    head_revision,
    packaged_head,
    recorded_revision,
)
from zhiku.core.db.models import Base
from zhiku.core.errors import ConfigError

MODEL_TABLES = set(Base.metadata.tables)
LEGACY_DATASET = {
    "id": "'d1'",
    "name": "'old'",
    "description": "''",
    "embedding_model": "'use'",
    "embedding_dim": "512",
    **{
        column: "'{}'"
        for column in ("embedding_options", "retrieval_config", "process_rule", "tokenizer_settings")
    },
    "doc_form": "'paragraph'",
    "created_at": "CURRENT_TIMESTAMP",
    "updated_at": "CURRENT_TIMESTAMP",
}


def _schema_differences(engine: Engine) -> list[Any]:
    with engine.connect() as connection:
        return list(compare_metadata(MigrationContext.configure(connection), Base.metadata))


def test_migrations_build_exactly_the_models_schema(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        assert _schema_differences(engine) == []
        assert set(inspect(engine).get_table_names()) == MODEL_TABLES | {"alembic_version"}
        with engine.connect() as connection:
            assert current_revision(connection) == head_revision() == "0019"
    finally:
        engine.dispose()


def test_opening_again_changes_nothing(database_url: str) -> None:
    make_engine(database_url).dispose()
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            assert connection.execute(text("SELECT count(*) FROM alembic_version")).scalar() == 1
    finally:
        engine.dispose()


def test_a_database_from_a_newer_release_is_refused(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        with engine.begin() as connection:
            connection.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    finally:
        engine.dispose()
    with pytest.raises(ConfigError, match="revision '9999', made by a newer zhiku"):
        make_engine(database_url)


def test_downgrade_to_base_removes_every_table(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        with engine.begin() as connection:
            command.downgrade(alembic_config(connection), "base")
        assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    finally:
        engine.dispose()


def _database_before_migrations(url: str, *, first_release: bool) -> None:
    """What ``create_all`` made before there were migrations, with one dataset in it.

    ``first_release``: the schema of the first release, before ``datasets.llm_options``, the HTTP
    API's tables and the wider ``documents.status``; otherwise the models as they were when
    migrations were introduced."""
    engine = create_engine(url)
    try:
        Base.metadata.create_all(engine)
        with engine.begin() as connection:
            if first_release:
                connection.execute(text("DROP TABLE api_keys"))
                connection.execute(text("DROP TABLE document_jobs"))
                connection.execute(text("ALTER TABLE datasets DROP COLUMN llm_options"))
                if connection.dialect.name != "sqlite":
                    connection.execute(text("ALTER TABLE documents ALTER COLUMN status TYPE VARCHAR(16)"))
            row = dict(LEGACY_DATASET, **({} if first_release else {"llm_options": "'{}'"}))
            connection.execute(
                text(f"INSERT INTO datasets ({', '.join(row)}) VALUES ({', '.join(row.values())})")
            )
    finally:
        engine.dispose()


@pytest.mark.parametrize("first_release", [True, False], ids=["first-release", "before-migrations"])
def test_database_made_before_migrations_is_adopted(database_url: str, first_release: bool) -> None:
    _database_before_migrations(database_url, first_release=first_release)
    engine = make_engine(database_url)
    try:
        assert _schema_differences(engine) == []
        with engine.connect() as connection:
            assert current_revision(connection) == head_revision()
        with make_session_factory(engine)() as session:
            dataset = session.scalars(select(DatasetRow)).one()
        assert (dataset.name, dataset.llm_options) == ("old", {})
    finally:
        engine.dispose()


def test_concurrent_openers_of_a_new_database_migrate_it_once(database_url: str) -> None:
    errors: list[BaseException] = []
    engines: list[Engine] = []
    start = threading.Barrier(4)

    def open_database() -> None:
        start.wait()
        try:
            engines.append(make_engine(database_url))
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=open_database) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    try:
        assert errors == []
        assert len(engines) == 4
        with engines[0].connect() as connection:
            assert connection.execute(text("SELECT version_num FROM alembic_version")).scalars().all() == [
                "0019"
            ]
        assert _schema_differences(engines[0]) == []
    finally:
        for engine in engines:
            engine.dispose()


def test_the_quick_revision_check_agrees_with_alembic(database_url: str) -> None:
    """Opening a database at the newest revision reads it without Alembic: the file names must
    name the same head, and the version table the same revision."""
    assert packaged_head() == head_revision()
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            assert recorded_revision(connection) == current_revision(connection) == packaged_head()
    finally:
        engine.dispose()
    blank = create_engine("sqlite://")
    with blank.connect() as connection:
        assert recorded_revision(connection) is None
    blank.dispose()


def test_upgrading_to_relevance_gives_every_dataset_the_default_threshold(database_url: str) -> None:
    """Scores became relevance in 0011: a stored threshold (absent, or on the old fusion scale) is
    replaced by the default relevance threshold."""
    from zhiku.core.retrieval_config import DEFAULT_SCORE_THRESHOLD

    engine = make_engine(database_url)
    try:
        # rows written by the model as it is now, then the schema taken back to 0010 (the model
        # may have columns that revision's table lacks)
        sessions = make_session_factory(engine)
        with sessions.begin() as session:
            session.add(DatasetRow(name="old", embedding_model="use", embedding_dim=512,
                                   retrieval_config={"top_k": 3, "score_threshold": None}))
            session.add(DatasetRow(name="strict", embedding_model="use", embedding_dim=512,
                                   retrieval_config={"score_threshold": 0.8}))
        with engine.begin() as connection:
            command.downgrade(alembic_config(connection), "0010")
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), "head")
        with sessions() as session:
            stored = {row.name: row.retrieval_config for row in session.scalars(select(DatasetRow))}
        assert stored["old"] == {"top_k": 3, "score_threshold": DEFAULT_SCORE_THRESHOLD}
        assert stored["strict"] == {"score_threshold": DEFAULT_SCORE_THRESHOLD}
    finally:
        engine.dispose()


def test_upgrading_to_change_counts_counts_every_existing_point(database_url: str, tmp_path: Path) -> None:
    """0017: each dataset that has points starts as changed by all of them, so the background
    optimize builds it once (one filled through the API before had never been built)."""
    import zhiku.benchmarking  # noqa: F401 - registers the fast "synthetic" embedding model
    from zhiku import KnowledgeBase
    from zhiku.core.db.models import DatasetChangesRow

    with KnowledgeBase.open(tmp_path / "home", database_url=database_url, embedding_model="synthetic") as kb:
        filled, empty = kb.create_dataset("filled"), kb.create_dataset("empty")
        filled.add_text("a.md", "明前龙井。\n\n碧螺春。")
        filled.add_text("b.md", "普洱茶。")
        points = sum(document.segment_count for document in filled.documents())
    engine = make_engine(database_url)
    try:
        with engine.begin() as connection:
            command.downgrade(alembic_config(connection), "0016")
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), "head")
        with make_session_factory(engine)() as session:
            rows = {row.dataset_id: row.points_changed for row in session.scalars(select(DatasetChangesRow))}
        assert rows == {filled.id: points} and empty.id not in rows
    finally:
        engine.dispose()


def test_upgrading_keeps_the_rows_that_refer_to_a_copied_table(database_url: str, tmp_path: Path) -> None:
    """On SQLite some revisions add a column by copying the table (0004 copies ``datasets``);
    dropping the old table with foreign keys on would delete, by cascade, every document and
    segment. A filled database taken back to 0003 and upgraded keeps them all."""
    import zhiku.benchmarking  # noqa: F401 - registers the fast "synthetic" embedding model
    from zhiku import KnowledgeBase

    with KnowledgeBase.open(tmp_path / "home", database_url=database_url, embedding_model="synthetic") as kb:
        kb.create_dataset("filled").add_text("a.md", "明前龙井。\n\n碧螺春。\n\n普洱茶。")
    counts = "SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM segments)"
    plain = create_engine(database_url)  # no foreign keys on SQLite: the downgrade cascades nothing
    try:
        with plain.begin() as connection:
            before = tuple(connection.execute(text(counts)).one())
            command.downgrade(alembic_config(connection), "0003")
            assert tuple(connection.execute(text(counts)).one()) == before
    finally:
        plain.dispose()
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            assert current_revision(connection) == head_revision()
            assert tuple(connection.execute(text(counts)).one()) == before != (0, 0)
    finally:
        engine.dispose()


def test_a_row_referring_to_a_missing_row_fails_the_check(tmp_path: Path) -> None:
    """What a migration run with foreign keys off must not leave is refused, not committed."""
    from zhiku.core.db.sqlite import check_foreign_keys

    engine = create_engine(f"sqlite:///{tmp_path / 'broken.db'}")
    try:
        with engine.begin() as connection:
            connection.execute(text("CREATE TABLE parent (id INTEGER PRIMARY KEY)"))
            connection.execute(text("CREATE TABLE child (id INTEGER PRIMARY KEY, up REFERENCES parent(id))"))
            check_foreign_keys(connection)
            connection.execute(text("INSERT INTO child VALUES (1, 7)"))
            with pytest.raises(ConfigError, match="left 1 rows referring to missing rows"):
                check_foreign_keys(connection)
    finally:
        engine.dispose()
