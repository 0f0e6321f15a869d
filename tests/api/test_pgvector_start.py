"""``zhiku serve`` on the pgvector stores checks their database before it listens: one without
the extension (and a role that may not create it) stops the start with the fix, instead of every
request that touches a store failing later."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from sqlalchemy import create_engine, make_url, text

from zhiku.api.app import create_app
from zhiku.core.config import Settings
from zhiku.core.errors import StoreError


def test_a_database_without_pgvector_stops_the_server_start_naming_the_fix(
    tmp_path: Path, pgvector_server: str
) -> None:
    database, role = f"plain_{uuid.uuid4().hex[:8]}", f"reader_{uuid.uuid4().hex[:8]}"
    admin = create_engine(pgvector_server, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f"CREATE DATABASE {database}"))
        connection.execute(text(f"CREATE ROLE {role} LOGIN"))
    admin.dispose()
    plain = make_url(pgvector_server).set(database=database, username=role)
    settings = Settings.load(
        tmp_path / "home",
        pgvector_url=plain.render_as_string(hide_password=False),
        vector_backend="pgvector",
        fulltext_backend="pgvector",
    )
    with pytest.raises(StoreError, match=r"pgvector extension is missing.*CREATE EXTENSION vector"):
        create_app(settings)
