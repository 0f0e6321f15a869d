"""Engine and session factory. Backend-specific settings live in ``sqlite.py`` only."""

from __future__ import annotations

from sqlalchemy import Engine, create_engine
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db import sqlite
from zhiku.core.db.models import Base


def make_engine(url: str) -> Engine:
    """Create the engine and the tables (idempotent)."""
    if url.startswith("sqlite"):
        engine = sqlite.make_sqlite_engine(url)
    else:
        engine = create_engine(url, pool_pre_ping=True)
    Base.metadata.create_all(engine)
    return engine


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)
