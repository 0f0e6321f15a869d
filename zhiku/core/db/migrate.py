"""Schema migrations: every open brings the database to the newest Alembic revision.

The revisions live in ``migrations/versions`` inside the package, so an installed wheel migrates
the databases it opens; nobody runs ``alembic`` by hand. A database already at the newest
revision costs one query. Otherwise the upgrade runs in one transaction that first takes a lock
(an exclusive write transaction on SQLite, an advisory lock on PostgreSQL), so processes opening
the same new database at once migrate it once; the others wait, then find nothing to do.
"""

from __future__ import annotations

import functools
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine

from zhiku.core.db import sqlite
from zhiku.core.errors import ConfigError

MIGRATIONS = Path(__file__).with_name("migrations")


def alembic_config(connection: Connection | None = None) -> Config:
    """A configuration for the packaged migrations; ``connection`` is the one they run on."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


@functools.cache
def _scripts() -> ScriptDirectory:
    return ScriptDirectory.from_config(alembic_config())


def head_revision() -> str | None:
    return _scripts().get_current_head()


def current_revision(connection: Connection) -> str | None:
    """The revision recorded in the database; None for a new database or one made before migrations."""
    return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine) -> None:
    """Bring the database to the newest revision (creating the tables of a new database)."""
    with engine.connect() as connection:
        current = current_revision(connection)
    if current == head_revision():
        return
    if current is not None and current not in {script.revision for script in _scripts().walk_revisions()}:
        raise ConfigError(
            f"the database is at schema revision {current!r}, made by a newer zhiku; upgrade zhiku"
        )
    with engine.connect() as connection:
        if connection.dialect.name == "sqlite":
            sqlite.begin_exclusive(connection)
        elif connection.dialect.name == "postgresql":
            from zhiku.core.db.postgresql import lock_migrations  # psycopg is an optional extra

            lock_migrations(connection)
        command.upgrade(alembic_config(connection), "head")
        connection.commit()
