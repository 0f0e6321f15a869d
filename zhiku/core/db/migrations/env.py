"""Alembic environment: migrations run on the connection that ``zhiku.core.db.migrate`` hands over,
inside the transaction it opened (and locked), so the upgrade and its lock end together."""

from alembic import context

context.configure(connection=context.config.attributes["connection"])
with context.begin_transaction():
    context.run_migrations()
