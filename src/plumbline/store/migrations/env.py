"""Alembic's environment for the results store: always given a connection by
`plumbline.store.migrate` (inside the transaction that holds the store's migration lock)."""

from __future__ import annotations

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=None)
with context.begin_transaction():
    context.run_migrations()
