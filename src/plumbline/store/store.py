"""The results store: `Store.open(url)`, `add` a validated result, `query` the stored ones.

    with Store.open("results.db") as store:
        added = store.add(read_result(document), labels={"commit": "abc123"})
        entries = store.query(Query(model="gpt-4o", metric="overall"))

One engine (SQLAlchemy Core) for both backends. SQLite is made for several writers at once:
WAL mode (readers never wait for a writer), a busy timeout (a writer waits for the one
writing, it does not fail), and every write transaction begun with `BEGIN IMMEDIATE` (it takes
the write lock first, so two writers never deadlock upgrading a read). A result is written in
one transaction (row, metrics and labels together): a writer killed midway leaves nothing of
it. `add` of a result already stored (same key, `result_key`) stores nothing new but its new
labels.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from plumbline.core.closing import Closing
from plumbline.results.rows import METRIC_FIELDS, MetricRow
from plumbline.store.migrate import StoreError, ensure_schema
from plumbline.store.url import StoreAddress, store_address

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection, Engine
    from sqlalchemy.sql.elements import ColumnElement

    from plumbline.results.stored import ResultDocument

#: Seconds a SQLite writer waits for another writer before giving up.
BUSY_TIMEOUT_SECONDS = 60
#: Seconds to wait for a PostgreSQL server to answer a connection.
CONNECT_TIMEOUT_SECONDS = 10


@dataclass(frozen=True)
class Added:
    """What `Store.add` did: the result's id, and whether it was new (False: stored before)."""

    id: int
    created: bool


@dataclass(frozen=True)
class Query:
    """Which stored results to read: every filter given must hold (labels: each of them)."""

    kind: str | None = None
    suite: str | None = None
    model: str | None = None
    metric: str | None = None
    labels: tuple[tuple[str, str], ...] = ()
    since: datetime | None = None


@dataclass(frozen=True)
class StoredResult:
    """One stored result as `history` reads it (its metrics narrowed to the query's)."""

    id: int
    kind: str
    schema_version: str
    suite: str | None
    subjects: tuple[str, ...]
    created_at: datetime
    source: str | None
    digest: str
    labels: dict[str, str] = field(default_factory=dict)
    metrics: list[MetricRow] = field(default_factory=list)
    #: The SHA-256 digests of the input files it was made from.
    inputs: frozenset[str] = frozenset()


def _input_digests(text: str | None) -> frozenset[str]:
    try:
        loaded = json.loads(text or "[]")
    except ValueError:
        return frozenset()
    return frozenset(
        str(item["sha256"]) for item in loaded if isinstance(item, dict) and "sha256" in item
    )


def utc_naive(moment: datetime) -> datetime:
    """A time as the store keeps it: UTC, without a zone (a naive time is taken as UTC)."""
    if moment.tzinfo is None:
        return moment
    return moment.astimezone(UTC).replace(tzinfo=None)


def _sqlite_engine(address: StoreAddress, *, create: bool) -> Engine:
    from sqlalchemy import create_engine, event

    path = address.path
    assert path is not None
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
    elif not path.exists():
        raise StoreError(
            f"{address.shown}: no results store at this path (reading commands never create "
            "one): check the path, or store a result there first with --store",
            kind="missing",
        )
    engine = create_engine(address.url, connect_args={"timeout": BUSY_TIMEOUT_SECONDS})

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, record: Any) -> None:
        dbapi_connection.isolation_level = None  # transactions begun by `_begin` below
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_SECONDS * 1000}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        reading = connection.get_execution_options().get("plumbline_read", False)
        connection.exec_driver_sql("BEGIN" if reading else "BEGIN IMMEDIATE")

    return engine


def _postgresql_engine(address: StoreAddress) -> Engine:
    from sqlalchemy import create_engine

    return create_engine(
        address.url,
        pool_pre_ping=True,
        connect_args={"connect_timeout": CONNECT_TIMEOUT_SECONDS},
        hide_parameters=True,
    )


def _first_line(error: BaseException) -> str:
    original = getattr(error, "orig", None) or error
    text = " ".join(str(original).split()) or type(original).__name__
    return text[:300]


def _error_kind(error: BaseException) -> str:
    """What a database error says about the store: `refused` (no permission), `lost` (the
    connection broke), else `unreachable`."""
    original = getattr(error, "orig", None) or error
    state = str(getattr(original, "sqlstate", "") or "")
    if state == "42501" or "permission denied" in str(original).lower():
        return "refused"
    if getattr(error, "connection_invalidated", False) or state.startswith(("57P", "08")):
        return "lost"
    if "readonly" in str(original).lower() or "read-only" in str(original).lower():
        return "refused"
    return "unreachable"


class Store(Closing):
    """A results store open on one database (see the module)."""

    def __init__(self, engine: Engine, shown: str, address: StoreAddress | None = None) -> None:
        self.engine = engine
        self.shown = shown
        self.address = address

    @classmethod
    def open(cls, given: str, *, create: bool = True) -> Store:
        """Open the store `given` (a URL or a plain path), creating or upgrading its schema;
        `StoreError` when it cannot be reached, is newer than this plumbline, or (with
        `create=False`, for reading commands) does not exist. `StoreUrlError` for a URL that
        cannot name a store."""
        address = store_address(given)
        try:
            return cls._open(address, create=create)
        except StoreError as error:
            raise StoreError(address.hide(str(error)), kind=error.kind) from None

    @classmethod
    def _open(cls, address: StoreAddress, *, create: bool) -> Store:
        from sqlalchemy.exc import SQLAlchemyError

        shown = address.shown
        try:
            if address.path is not None:
                engine = _sqlite_engine(address, create=create)
            else:
                engine = _postgresql_engine(address)
        except ImportError as error:
            raise StoreError(
                f"{shown}: a PostgreSQL store needs psycopg ({_first_line(error)}): "
                "pip install 'plumbline[postgresql]'"
            ) from None
        except (SQLAlchemyError, OSError) as error:
            raise StoreError(f"{shown}: cannot open the store: {_first_line(error)}") from None
        try:
            ensure_schema(engine, shown, create=create)
        except StoreError:
            engine.dispose()
            raise
        except (SQLAlchemyError, OSError) as error:
            engine.dispose()
            kind = _error_kind(error)
            what = "the server refused" if kind == "refused" else "cannot reach the store"
            raise StoreError(f"{shown}: {what}: {_first_line(error)}", kind=kind) from None
        return cls(engine, shown, address)

    def _failed(self, doing: str, error: BaseException) -> StoreError:
        """The one-line `StoreError` of a database error while `doing` (secrets hidden)."""
        kind = _error_kind(error)
        why = {
            "refused": "the server refused (the role lacks the permission)",
            "lost": "the connection to the store was lost",
        }.get(kind, "")
        detail = f"{why}: {_first_line(error)}" if why else _first_line(error)
        message = f"{self.shown}: cannot {doing}: {detail}"
        if self.address is not None:
            message = self.address.hide(message)
        return StoreError(message, kind=kind)

    def close(self) -> None:
        self.engine.dispose()

    # --- writing ---------------------------------------------------------------------------

    def add(
        self,
        result: ResultDocument,
        *,
        labels: Mapping[str, str] | None = None,
        source: str | None = None,
        inputs: Sequence[Mapping[str, str]] = (),
        created_at: datetime | None = None,
        as_file: bool = False,
    ) -> Added:
        """Store `result` (one transaction): its row, metrics and labels. A result stored
        before (same key, see `result_key`; with `as_file`, also any result whose whole
        document is this one) gets only the labels it did not have. Its time is the one the
        document records, else `created_at`, else now."""
        from sqlalchemy.exc import SQLAlchemyError

        moment = result.created_at or created_at or datetime.now(UTC)
        try:
            with self.engine.begin() as connection:
                return self._add(connection, result, labels or {}, source, inputs, moment, as_file)
        except SQLAlchemyError as error:
            raise self._failed("write the result", error) from None

    def _add(
        self,
        connection: Connection,
        result: ResultDocument,
        labels: Mapping[str, str],
        source: str | None,
        inputs: Sequence[Mapping[str, str]],
        moment: datetime,
        as_file: bool,
    ) -> Added:
        from sqlalchemy import insert, select

        from plumbline.store.tables import metrics, results

        if as_file:
            found = connection.execute(
                select(results.c.id)
                .where(results.c.document_digest == result.document_digest)
                .order_by(results.c.id)
                .limit(1)
            ).scalar_one_or_none()
            if found is not None:
                self._add_labels(connection, int(found), labels)
                return Added(id=int(found), created=False)
        key = result_key(result, inputs, as_file=as_file)
        values = {
            "digest": key,
            "document_digest": result.document_digest,
            "kind": result.kind,
            "schema_version": result.schema_version,
            "suite": result.suite,
            "subjects": json.dumps(list(result.subjects), ensure_ascii=False),
            "created_at": utc_naive(moment),
            "stored_at": utc_naive(datetime.now(UTC)),
            "source": source,
            "inputs": json.dumps(list(map(dict, inputs)), ensure_ascii=False),
            "document": json.dumps(result.document, ensure_ascii=False, allow_nan=False),
        }
        statement = _insert_new(connection, results, values, "digest").returning(results.c.id)
        row = connection.execute(statement).first()
        created = row is not None
        if row is None:
            existing = connection.execute(
                select(results.c.id).where(results.c.digest == key)
            ).scalar_one()
            result_id = int(existing)
        else:
            result_id = int(row[0])
            if result.metrics:
                connection.execute(
                    insert(metrics),
                    [{"result_id": result_id, **asdict(m)} for m in result.metrics],
                )
        self._add_labels(connection, result_id, labels)
        return Added(id=result_id, created=created)

    def _add_labels(self, connection: Connection, result_id: int, given: Mapping[str, str]) -> None:
        from plumbline.store.tables import labels

        for key, value in given.items():
            values = {"result_id": result_id, "key": key, "value": value}
            connection.execute(_insert_new(connection, labels, values, "result_id", "key"))

    # --- reading ---------------------------------------------------------------------------

    def count(self) -> int:
        from sqlalchemy import func, select

        from plumbline.store.tables import results

        with self._reading() as connection:
            return int(connection.execute(select(func.count()).select_from(results)).scalar_one())

    def document(self, result_id: int) -> dict[str, Any] | None:
        """The whole document of a stored result (None: no such id)."""
        from sqlalchemy import select

        from plumbline.store.tables import results

        with self._reading() as connection:
            text = connection.execute(
                select(results.c.document).where(results.c.id == result_id)
            ).scalar_one_or_none()
        loaded: dict[str, Any] | None = None if text is None else json.loads(text)
        return loaded

    def query(self, query: Query) -> list[StoredResult]:
        """The stored results `query` selects, in time order (then by id), each with its
        labels and its metrics (only the queried model's and metric's when given)."""
        from sqlalchemy import select

        from plumbline.store.tables import labels, metrics, results

        wanted = select(results.c.id).where(*_result_conditions(query))
        with self._reading() as connection:
            rows = connection.execute(
                select(
                    results.c.id,
                    results.c.kind,
                    results.c.schema_version,
                    results.c.suite,
                    results.c.subjects,
                    results.c.created_at,
                    results.c.source,
                    results.c.digest,
                    results.c.inputs,
                )
                .where(results.c.id.in_(wanted))
                .order_by(results.c.created_at, results.c.id)
            ).all()
            found = {
                row.id: StoredResult(
                    id=row.id,
                    kind=row.kind,
                    schema_version=row.schema_version,
                    suite=row.suite,
                    subjects=tuple(json.loads(row.subjects)),
                    created_at=row.created_at.replace(tzinfo=UTC),
                    source=row.source,
                    digest=row.digest,
                    inputs=_input_digests(row.inputs),
                )
                for row in rows
            }
            metric_rows = connection.execute(
                select(metrics)
                .where(metrics.c.result_id.in_(wanted), *_metric_conditions(query))
                .order_by(metrics.c.result_id, metrics.c.id)
            ).all()
            label_rows = connection.execute(
                select(labels).where(labels.c.result_id.in_(wanted)).order_by(labels.c.key)
            ).all()
        for metric in metric_rows:
            entry = found.get(metric.result_id)
            if entry is not None:
                entry.metrics.append(
                    MetricRow(**{name: getattr(metric, name) for name in METRIC_FIELDS})
                )
        for label in label_rows:
            entry = found.get(label.result_id)
            if entry is not None:
                entry.labels[label.key] = label.value
        return list(found.values())

    @contextlib.contextmanager
    def _reading(self) -> Iterator[Connection]:
        """A connection for reading (SQLite: a plain `BEGIN`, never the write lock)."""
        from sqlalchemy.exc import SQLAlchemyError

        try:
            with self.engine.connect().execution_options(plumbline_read=True) as connection:
                yield connection
        except SQLAlchemyError as error:
            raise self._failed("read the store", error) from None


def result_key(
    result: ResultDocument, inputs: Sequence[Mapping[str, str]] = (), *, as_file: bool = False
) -> str:
    """The key a result is stored under (one entry per key).

    A result made by a command is keyed by its content without the moment it was made and the
    digests of the input files it was made from: rebuilt from the same inputs it is the same
    entry, and two runs whose numbers happen to agree but whose inputs differ are two. A
    result file added on its own (`as_file`, inputs unknown) is keyed by its whole document:
    the same file added twice is one entry, two nights' files are two.
    """
    import hashlib

    if as_file:
        return result.document_digest
    shas = sorted(str(item.get("sha256", "")) for item in inputs)
    if not shas:
        return result.digest
    text = json.dumps([result.digest, shas], separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _insert_new(connection: Connection, table: Any, values: dict[str, Any], *keys: str) -> Any:
    """`INSERT ... ON CONFLICT (keys) DO NOTHING` in the connection's dialect."""
    if connection.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(table).values(values).on_conflict_do_nothing(index_elements=list(keys))
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(table).values(values).on_conflict_do_nothing(index_elements=list(keys))


def _result_conditions(query: Query) -> list[ColumnElement[bool]]:
    from sqlalchemy import and_, exists, select

    from plumbline.store.tables import labels, metrics, results

    conditions = _equal((results.c.kind, query.kind), (results.c.suite, query.suite))
    if query.since is not None:
        conditions.append(results.c.created_at >= utc_naive(query.since))
    for key, value in query.labels:
        conditions.append(
            exists(
                select(labels.c.result_id).where(
                    and_(
                        labels.c.result_id == results.c.id,
                        labels.c.key == key,
                        labels.c.value == value,
                    )
                )
            )
        )
    narrowed = _metric_conditions(query)
    if narrowed:
        conditions.append(results.c.id.in_(select(metrics.c.result_id).where(*narrowed).distinct()))
    return conditions


def _metric_conditions(query: Query) -> list[ColumnElement[bool]]:
    from plumbline.store.tables import metrics

    return _equal((metrics.c.subject, query.model), (metrics.c.metric, query.metric))


def _equal(*filters: tuple[ColumnElement[Any], str | None]) -> list[ColumnElement[bool]]:
    """`column == value` for each filter the query gives (a None value filters nothing)."""
    return [column == value for column, value in filters if value is not None]


def file_digest(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes (the digest of an input)."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
