"""Engine and session factory. Backend-specific settings live in ``sqlite.py`` and ``postgresql.py``."""

from __future__ import annotations

from sqlalchemy import Engine, create_engine
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db import migrate, sqlite
from zhiku.core.errors import ConfigError


def make_engine(url: str) -> Engine:
    """Create the engine and migrate the database to the newest schema revision."""
    backend = make_url(url).get_backend_name()
    if backend == "sqlite":
        engine = sqlite.make_sqlite_engine(url)
    elif backend == "postgresql":
        try:
            from zhiku.core.db.postgresql import make_postgresql_engine
        except ModuleNotFoundError as exc:
            raise ConfigError(f"PostgreSQL needs psycopg ({exc}): pip install 'zhiku[postgres]'") from exc
        engine = make_postgresql_engine(url)
    else:
        engine = create_engine(url, pool_pre_ping=True)
    try:
        migrate.upgrade(engine)
    except BaseException:
        engine.dispose()
        raise
    return engine


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)
