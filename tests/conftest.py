"""Where the tests' metadata databases live.

By default each knowledge base a test opens makes its SQLite file in its data directory. With
``ZHIKU_TEST_DATABASE_URL`` set to a PostgreSQL URL (a role that may create databases, and the
database to connect to while doing so), the run creates a database of its own and each data
directory a test (or a module's fixture) opens gets a new empty schema in it instead of a file,
so the tests that open knowledge bases, start the API or run the CLI use PostgreSQL unchanged.
Subprocesses get the first directory's schema through ``ZHIKU_DATABASE_URL``. The database is
dropped when the run ends.
"""

from __future__ import annotations

import itertools
import os
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, make_url, text

from zhiku.core.config import Settings

#: ``pgvector_server`` / ``pgvector_url``: a PostgreSQL with pgvector, for the tests that need one
pytest_plugins = ["tests.fixtures.pgvector"]

TEST_DATABASE_URL = os.environ.get("ZHIKU_TEST_DATABASE_URL")


class PostgresRun:
    """A database made for this test run, handing out one empty schema per test or module."""

    def __init__(self, admin_url: str) -> None:
        self._admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
        self.url = make_url(admin_url).set(database=f"zhiku_test_{uuid.uuid4().hex[:12]}")
        with self._admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{self.url.database}"'))
        self._engine = create_engine(self.url, isolation_level="AUTOCOMMIT")
        self._numbers = itertools.count(1)

    def new_schema(self) -> str:
        """A URL whose connections see only a new, empty schema."""
        schema = f"t{next(self._numbers):05d}"
        with self._engine.connect() as connection:
            connection.execute(text(f"CREATE SCHEMA {schema}"))
        url = self.url.update_query_dict({"options": f"-csearch_path={schema}"})
        return url.render_as_string(hide_password=False)

    def close(self) -> None:
        self._engine.dispose()
        with self._admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{self.url.database}" WITH (FORCE)'))
        self._admin.dispose()


@pytest.fixture(scope="session")
def postgres_run() -> Iterator[PostgresRun | None]:
    """The run's PostgreSQL database, or None when the tests run on SQLite."""
    if not TEST_DATABASE_URL:
        yield None
        return
    run = PostgresRun(TEST_DATABASE_URL)
    try:
        yield run
    finally:
        run.close()


class HomeDatabases:
    """The schema of each data directory opened within one test or module: the first directory
    gets the one subprocesses are given; every other directory gets its own, as on SQLite each
    gets its own file. A database URL set explicitly is left alone."""

    def __init__(self, run: PostgresRun) -> None:
        self._run = run
        self.url = run.new_schema()
        self._by_home: dict[Path, str] = {}
        self._lock = threading.Lock()

    def url_for(self, settings: Settings) -> str:
        if settings.database_url and settings.database_url != self.url:
            return settings.database_url
        with self._lock:
            home = settings.home.resolve()
            if home not in self._by_home:
                self._by_home[home] = self._run.new_schema() if self._by_home else self.url
            return self._by_home[home]

    def install(self, patch: pytest.MonkeyPatch) -> None:
        patch.setenv("ZHIKU_DATABASE_URL", self.url)
        patch.setattr(Settings, "resolved_database_url", property(self.url_for))


@pytest.fixture(scope="module", autouse=True)
def _module_databases(postgres_run: PostgresRun | None) -> Iterator[None]:
    """Module-scoped knowledge bases (opened before any test's own fixtures) get schemas too."""
    with pytest.MonkeyPatch.context() as patch:
        if postgres_run is not None:
            HomeDatabases(postgres_run).install(patch)
        yield


@pytest.fixture(autouse=True)
def _test_databases(postgres_run: PostgresRun | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if postgres_run is not None:
        HomeDatabases(postgres_run).install(monkeypatch)


@pytest.fixture
def database_url(postgres_run: PostgresRun | None, tmp_path: Path) -> str:
    """An empty database for tests that make their own engine: this run's backend."""
    if postgres_run is None:
        return f"sqlite:///{tmp_path / 'zhiku.db'}"
    return postgres_run.new_schema()
