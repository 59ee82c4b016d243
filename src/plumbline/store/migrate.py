"""Bring a store to this plumbline's schema on first use, or refuse one a newer plumbline made.

The store's schema version is Alembic's revision, kept in the store's `alembic_version` table.
`ensure_schema` runs inside one write transaction that first takes the store's migration
lock (SQLite: `BEGIN IMMEDIATE`, set up by `store.engine`; PostgreSQL: a transaction-level
advisory lock), so writers opening a new or older store at once migrate it once, and a reader
never sees half a schema (both backends' DDL is transactional).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from alembic.script import ScriptDirectory
    from sqlalchemy.engine import Connection, Engine

MIGRATIONS = Path(__file__).parent / "migrations"

#: The PostgreSQL advisory lock key of the migration lock ("plumblin" as a 64-bit integer).
_LOCK_KEY = int.from_bytes(b"plumblin", "big") >> 1


class StoreError(RuntimeError):
    """A store that cannot be used (the message says why, and what to do); `kind` says
    which: `missing` (a reading command found no store), `unreachable`, `refused` (the server
    refused the role), `lost` (the connection broke midway) or `newer` (made by a newer
    plumbline)."""

    def __init__(self, message: str, *, kind: str = "unreachable") -> None:
        super().__init__(message)
        self.kind = kind


@cache
def _scripts() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory(str(MIGRATIONS))


def head_revision() -> str:
    """The schema version this plumbline writes (the newest migration)."""
    head = _scripts().get_current_head()
    assert head is not None
    return head


def known_revisions() -> set[str]:
    return {script.revision for script in _scripts().walk_revisions()}


def current_revision(connection: Connection) -> str | None:
    """The store's schema version (None: a new, empty store)."""
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(connection).get_current_revision()


def ensure_schema(engine: Engine, shown: str, *, create: bool = True) -> str:
    """Create or upgrade the store's tables to `head_revision()`; return the revision the store
    had before (`"new"` for a new store). A store at an unknown (newer) revision is refused
    with `StoreError`, and so is a database without a store when not `create` (a reading
    command); `shown` names the store in messages."""
    head = head_revision()
    # the usual case: read the version without the write lock (SQLite: a plain BEGIN)
    with engine.connect().execution_options(plumbline_read=True) as connection:
        found = current_revision(connection)
        if found == head:
            return head
    if found is None and not create:
        raise StoreError(
            f"{shown}: no results store in this database (reading commands never create one): "
            "check the URL, or store a result there first with --store",
            kind="missing",
        )
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            from sqlalchemy import text

            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
        before = current_revision(connection)
        if before == head:  # another writer migrated it meanwhile
            return head
        if before is not None and before not in known_revisions():
            raise StoreError(
                f"{shown}: this store's schema version is {before}, newer than this plumbline "
                f"knows (it writes {head}): upgrade plumbline to use it",
                kind="newer",
            )
        _upgrade(connection)
        return before or "new"


def _upgrade(connection: Connection) -> None:
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


def upgrade_to(engine: Engine, revision: str) -> None:
    """Migrate a store to `revision` exactly (tests make an older store with it)."""
    from alembic import command
    from alembic.config import Config

    with engine.begin() as connection:
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        config.attributes["connection"] = connection
        command.upgrade(config, revision)
