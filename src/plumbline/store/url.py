"""What a store URL names: a plain path (SQLite), `sqlite:///path.db` or `postgresql://...`.

    address = store_address("night?1.db")      # the file `night?1.db`, taken literally
    address = store_address("postgresql://ci:pa/ss@db/plumbline")
    address.shown                              # postgresql://ci:***@db/plumbline

A value without a scheme is a file path, taken literally: `?`, `#` and `%` are characters of
the name, never a query or an escape. A URL is parsed once, by SQLAlchemy (`make_url`), and
every form of it is shown from the parsed URL with its password hidden: the password of
`user:password@host` (an unencoded `/` included) and any `?password=` or `?sslpassword=` in
its query. `hide` also blanks each secret (and its percent-encoded forms) out of any text,
such as a driver's error message. PostgreSQL is reached through psycopg 3 whatever driver the
URL names. The safest way to give a password is none in the URL at all: `PGPASSWORD` or a
`~/.pgpass` file, which psycopg reads (docs/tutorials/nightly-history.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, quote_plus

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

#: The environment variable that names the store when `--store` is not given.
STORE_ENV = "PLUMBLINE_STORE"
#: What a hidden secret is shown as.
HIDDEN = "***"

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_SECRET_KEYS = ("password", "sslpassword", "passwd", "pass")


class StoreUrlError(ValueError):
    """A store URL plumbline cannot use (the message says why, and what it accepts)."""


@dataclass(frozen=True)
class StoreAddress:
    """A store as parsed: the URL to connect with, its file (SQLite), how to show it."""

    url: URL
    path: Path | None
    shown: str
    secrets: tuple[str, ...] = ()

    def hide(self, text: str) -> str:
        """`text` with every secret of this address (as given, percent-encoded) blanked."""
        return hide_secrets(text, self.secrets)


def hide_secrets(text: str, secrets: tuple[str, ...]) -> str:
    """`text` with each secret, and its percent-encoded forms, replaced by `***`."""
    forms = {form for secret in secrets for form in _forms(secret) if form}
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, HIDDEN)
    return text


def _forms(secret: str) -> tuple[str, ...]:
    return (secret, quote(secret, safe=""), quote_plus(secret), quote(secret))


def _is_secret_key(key: str) -> bool:
    lowered = key.lower()
    return lowered in _SECRET_KEYS or lowered.endswith("password")


def store_address(given: str) -> StoreAddress:
    """The store `given` names (see the module); `StoreUrlError` saying what is wrong, with
    no secret of `given` in it."""
    if not given or not given.strip():
        raise StoreUrlError("an empty store URL: give a path, sqlite:///PATH or postgresql://...")
    if "\x00" in given:
        raise StoreUrlError("a store URL cannot hold a NUL byte")
    match = _SCHEME.match(given.strip())
    if match is None:
        return _file_address(Path(given))
    text = given.strip()
    scheme = match.group(1).lower()
    if scheme.startswith("sqlite"):
        return _sqlite_address(text)
    if scheme in ("postgresql", "postgres") or scheme.startswith("postgresql+"):
        return _postgresql_address(text)
    raise StoreUrlError(
        f"{unparsed_shown(text)}: not a store URL plumbline knows: give a path, sqlite:///PATH "
        "or postgresql://user@host/database"
    )


def _file_address(path: Path) -> StoreAddress:
    from sqlalchemy.engine import URL

    absolute = Path.cwd() / path if not path.is_absolute() else path
    return StoreAddress(
        url=URL.create("sqlite", database=str(absolute)), path=absolute, shown=str(path)
    )


def _sqlite_address(text: str) -> StoreAddress:
    url = _parse(text)
    database = url.database or ""
    if url.query or url.host or url.username or not database or database == ":memory:":
        raise StoreUrlError(
            f"{unparsed_shown(text)}: a SQLite store is a file: sqlite:///relative/path.db or "
            "sqlite:////absolute/path.db (give a name holding '?' or '#' as a plain path, "
            "or percent-encode it)"
        )
    address = _file_address(Path(database))
    return StoreAddress(url=address.url, path=address.path, shown=text)


def _postgresql_address(text: str) -> StoreAddress:
    url = _parse(text)
    if url.host is not None and "@" in url.host:
        raise StoreUrlError(
            f"{unparsed_shown(text)}: the user name or password holds an unencoded '@': "
            "percent-encode it as %40, or give the password in PGPASSWORD or ~/.pgpass"
        )
    secrets = [url.password] if url.password else []
    hidden_query: dict[str, str | tuple[str, ...]] = {}
    for key, value in url.query.items():
        values = (value,) if isinstance(value, str) else tuple(value)
        if _is_secret_key(key):
            secrets += [v for v in values if v]
            hidden_query[key] = tuple(HIDDEN for _ in values) if len(values) > 1 else HIDDEN
        else:
            hidden_query[key] = value
    rendered = url.set(query=hidden_query).render_as_string(hide_password=True)
    shown_url = rendered.replace(quote(HIDDEN, safe=""), HIDDEN)
    connect = url.set(drivername="postgresql+psycopg")
    return StoreAddress(
        url=connect,
        path=None,
        shown=hide_secrets(shown_url, tuple(secrets)),
        secrets=tuple(secrets),
    )


def _parse(text: str) -> URL:
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    shown = unparsed_shown(text)
    if text.count("[") != text.count("]"):
        raise StoreUrlError(f"{shown}: an IPv6 host is written in brackets: [::1]")
    try:
        url = make_url(text)
    except ValueError as error:
        raise StoreUrlError(f"{shown}: {_parse_problem(error)}") from None
    except ArgumentError:
        raise StoreUrlError(f"{shown}: not a URL: give postgresql://user@host:port/db") from None
    if url.port is not None and not 0 < url.port < 65536:
        raise StoreUrlError(f"{shown}: the port must be a number from 1 to 65535")
    return url


def _parse_problem(error: ValueError) -> str:
    if "int()" in str(error):
        return "the port must be a number from 1 to 65535 (host:5432)"
    return "not a URL: give postgresql://user@host:port/db"


def unparsed_shown(text: str) -> str:
    """A URL that may not parse, as it may be shown: its scheme and host, never the part
    before the last `@` (the user name and password) nor its query."""
    match = _SCHEME.match(text)
    if match is None:
        return text
    rest, has_query, _ = text[match.end() :].partition("?")
    before, at, host = rest.rpartition("@")
    user = before.split(":", 1)[0] if at else ""
    shown = f"{match.group(1)}://{user + ':' + HIDDEN + '@' if at else ''}{host}"
    return shown + ("?" + HIDDEN if has_query else "")


def shown_url(given: str) -> str:
    """A store URL as it may be shown and logged (see the module); never raises."""
    try:
        return store_address(given).shown
    except StoreUrlError:
        return unparsed_shown(given.strip())


def sqlite_path(given: str) -> Path | None:
    """The file of a SQLite store (`given` as the user gave it); None for any other database
    or a URL that does not parse."""
    try:
        return store_address(given).path
    except StoreUrlError:
        return None
