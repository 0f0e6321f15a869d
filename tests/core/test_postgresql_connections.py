"""A pooled PostgreSQL connection the server has closed is replaced before it is used (the pool
looks at its socket instead of sending a ping), and a live one is used again as it is."""

from __future__ import annotations

from sqlalchemy import create_engine, text

from zhiku.core.db.postgresql import make_postgresql_engine


def test_a_connection_the_server_closed_is_replaced_before_use(pgvector_url: str) -> None:
    engine = make_postgresql_engine(pgvector_url)
    admin = create_engine(pgvector_url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as connection:
            first = connection.scalar(text("SELECT pg_backend_pid()"))
        with engine.connect() as connection:
            assert connection.scalar(text("SELECT pg_backend_pid()")) == first  # pooled, alive
        with admin.connect() as connection:  # what a restart or an idle timeout does to it
            assert connection.scalar(text("SELECT pg_terminate_backend(:pid, 60000)"), {"pid": first})
        with engine.connect() as connection:
            replaced = connection.scalar(text("SELECT pg_backend_pid()"))
        assert replaced != first
    finally:
        engine.dispose()
        admin.dispose()


def test_a_checkout_sends_nothing_to_the_server(pgvector_url: str) -> None:
    """The session's last statement stays what it was through a checkout: no ping was sent."""
    engine = make_postgresql_engine(pgvector_url)
    admin = create_engine(pgvector_url, isolation_level="AUTOCOMMIT")
    last_statement = text("SELECT query FROM pg_stat_activity WHERE pid = :pid")
    try:
        with engine.connect() as connection:
            pid = connection.scalar(text("SELECT pg_backend_pid()"))
        with admin.connect() as watcher:
            before = watcher.scalar(last_statement, {"pid": pid})
            raw = engine.raw_connection()
            try:
                assert watcher.scalar(last_statement, {"pid": pid}) == before
            finally:
                raw.close()
    finally:
        engine.dispose()
        admin.dispose()
