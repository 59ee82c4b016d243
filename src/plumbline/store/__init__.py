"""The results store: every result document plumbline produces, kept in a database with its
metrics as indexed rows, for `plumbline history` and `plumbline history check`.

- `url`: what a store URL means (`sqlite:///path.db`, a plain path, `postgresql://...`);
- `tables`: the tables (SQLAlchemy Core) and `migrations/`: their Alembic migrations;
- `migrate`: bring a store to this plumbline's schema on first use (or refuse a newer one);
- `store`: `Store.open(url)`, `add`, `query`;
- `history`: the `history` and `history check` documents (`results.history_document`).

What a result document is, and which metrics it publishes, is `plumbline.results`'s.

Modules import SQLAlchemy and Alembic when they are used, never for `--help`.
"""
