"""Schema migrations: every open brings the database to the newest Alembic revision.

The revisions live in ``migrations/versions`` inside the package, so an installed wheel migrates
the databases it opens; nobody runs ``alembic`` by hand. A database already at the newest
revision costs one query, and Alembic is not even imported: the newest revision is read from the
file names. Otherwise the upgrade runs in one transaction that first takes a lock
(an exclusive write transaction on SQLite, an advisory lock on PostgreSQL), so processes opening
the same new database at once migrate it once; the others wait, then find nothing to do.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, inspect, text

from zhiku.core.db import sqlite
from zhiku.core.errors import ConfigError

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

MIGRATIONS = Path(__file__).with_name("migrations")
#: Alembic's table of the revision a database is at.
VERSION_TABLE = "alembic_version"


def alembic_config(connection: Connection | None = None) -> Config:
    """A configuration for the packaged migrations; ``connection`` is the one they run on."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


@functools.cache
def _scripts() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config())


@functools.cache
def packaged_head() -> str:
    """The newest packaged revision by file name: ``NNNN_what.py`` holds revision ``NNNN`` in a
    single line of revisions (a test checks this against Alembic's own head)."""
    return max(path.name.split("_", 1)[0] for path in (MIGRATIONS / "versions").glob("[0-9]*_*.py"))


def recorded_revision(connection: Connection) -> str | None:
    """The revision in the database's version table, read without Alembic (None when absent)."""
    if not inspect(connection).has_table(VERSION_TABLE):
        return None
    return connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar()


def head_revision() -> str | None:
    return _scripts().get_current_head()


def current_revision(connection: Connection) -> str | None:
    """The revision recorded in the database; None for a new database or one made before migrations."""
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine) -> None:
    """Bring the database to the newest revision (creating the tables of a new database)."""
    with engine.connect() as connection:
        if recorded_revision(connection) == packaged_head():
            return
        current = current_revision(connection)
    if current == head_revision():
        return
    if current is not None and current not in {script.revision for script in _scripts().walk_revisions()}:
        raise ConfigError(
            f"the database is at schema revision {current!r}, made by a newer zhiku; upgrade zhiku"
        )
    with engine.connect() as connection:
        if connection.dialect.name == "sqlite":
            with sqlite.foreign_keys_off(connection):
                sqlite.begin_exclusive(connection)
                _upgrade_on(connection)
                sqlite.check_foreign_keys(connection)
                connection.commit()
            return
        if connection.dialect.name == "postgresql":
            from zhiku.core.db.postgresql import lock_migrations  # psycopg is an optional extra

            lock_migrations(connection)
        _upgrade_on(connection)
        connection.commit()


def _upgrade_on(connection: Connection) -> None:
    from alembic import command

    command.upgrade(alembic_config(connection), "head")
