"""What a store URL names: `sqlite:///path.db`, a plain path (SQLite), or `postgresql://...`.

    store_url("results.db")                   → sqlite:////abs/results.db
    store_url("postgresql://ci@db/plumbline")  → postgresql+psycopg://ci@db/plumbline

A plain path is the embedded default: a SQLite file, created with its directory. PostgreSQL
is reached through psycopg 3 whatever driver the URL names; any password in the URL is never
shown (`shown_url`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

#: The environment variable that names the store when `--store` is not given.
STORE_ENV = "PLUMBLINE_STORE"

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


class StoreUrlError(ValueError):
    """A store URL plumbline cannot use (the message says why, and what it accepts)."""


def store_url(given: str) -> str:
    """The SQLAlchemy URL of a store given as a URL or a plain path (see the module)."""
    text = given.strip()
    if not text:
        raise StoreUrlError("an empty store URL: give a path, sqlite:///PATH or postgresql://...")
    if "\x00" in text:
        raise StoreUrlError("a store URL cannot hold a NUL byte")
    match = _SCHEME.match(text)
    if match is None:
        return "sqlite:///" + os.path.abspath(os.path.expanduser(text))
    scheme = match.group(1).lower()
    rest = text[match.end() :]
    if scheme.startswith("sqlite"):
        if not rest.startswith("/") or rest in ("/", "/:memory:"):
            raise StoreUrlError(
                f"{shown_url(text)}: a SQLite store is a file: sqlite:///relative/path.db or "
                "sqlite:////absolute/path.db"
            )
        return "sqlite:///" + os.path.abspath(rest[1:])
    if scheme in ("postgresql", "postgres") or scheme.startswith("postgresql+"):
        return "postgresql+psycopg://" + rest
    raise StoreUrlError(
        f"{shown_url(text)}: not a store URL plumbline knows: give a path, sqlite:///PATH or "
        "postgresql://user@host/database"
    )


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite store URL (from `store_url`); None for any other database."""
    return Path(url[len("sqlite:///") :]) if url.startswith("sqlite:///") else None


def shown_url(url: str) -> str:
    """A URL as it may be shown and logged: the password of `user:password@host` hidden."""
    return re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://[^/@:]*):[^/@]*@", r"\1:***@", url)
