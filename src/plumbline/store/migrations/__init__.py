"""Alembic migrations of the results store (run by `plumbline.store.migrate`, never by hand)."""
