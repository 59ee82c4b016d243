"""Acknowledged changes: `plumbline history ack` restarts a series from a run.

A series (subject × metric) that changed stays changed until someone accepts the new level.
`acknowledge` stores "this series restarts at result R" (with a note and the time); the change
check then starts the series, and counts its false-alarm guarantee, from R. The newest
acknowledgement of a series counts; earlier ones stay stored as its record.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from plumbline.store.migrate import StoreError

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

    from plumbline.store.store import Store


@dataclass(frozen=True)
class Acknowledgement:
    """Series `(subject, metric)` restarts at stored result `result_id`."""

    subject: str
    metric: str
    result_id: int
    acknowledged_at: datetime
    note: str | None
    #: when result `result_id` was made: the series keeps the runs from it on
    restart_at: datetime


@contextmanager
def _connection(store: Store, *, write: bool) -> Iterator[Connection]:
    from sqlalchemy.exc import SQLAlchemyError

    action = "write" if write else "read"
    try:
        if write:
            with store.engine.begin() as connection:
                yield connection
        else:
            with store.engine.connect().execution_options(plumbline_read=True) as connection:
                yield connection
    except SQLAlchemyError as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise StoreError(f"{store.shown}: cannot {action} acknowledgements: {first}") from None


def acknowledge(
    store: Store, subject: str, metric: str, result_id: int, note: str | None = None
) -> Acknowledgement:
    """Store that series `(subject, metric)` restarts at result `result_id` (which must hold a
    value of that metric for that subject, else ValueError saying so)."""
    from sqlalchemy import insert, select

    from plumbline.store.tables import acknowledgements, metrics, results

    moment = datetime.now(UTC)
    with _connection(store, write=True) as connection:
        found = connection.execute(
            select(results.c.created_at)
            .join(metrics, metrics.c.result_id == results.c.id)
            .where(
                metrics.c.result_id == result_id,
                metrics.c.subject == subject,
                metrics.c.metric == metric,
            )
        ).first()
        if found is None:
            raise ValueError(
                f"result {result_id} has no value of {metric!r} for {subject!r}: give a run of "
                "that series (`plumbline history check` names the run where it changed)"
            )
        connection.execute(
            insert(acknowledgements).values(
                subject=subject,
                metric=metric,
                result_id=result_id,
                acknowledged_at=moment.replace(tzinfo=None),
                note=note,
            )
        )
    made = found.created_at.replace(tzinfo=UTC)
    return Acknowledgement(subject, metric, result_id, moment, note, made)


def restarts(store: Store) -> dict[tuple[str, str], Acknowledgement]:
    """The newest acknowledgement of every series that has one."""
    from sqlalchemy import select

    from plumbline.store.tables import acknowledgements, results

    newest: dict[tuple[str, str], Acknowledgement] = {}
    with _connection(store, write=False) as connection:
        rows = connection.execute(
            select(acknowledgements, results.c.created_at)
            .join(results, results.c.id == acknowledgements.c.result_id)
            .order_by(acknowledgements.c.id)
        ).all()
    for row in rows:
        newest[(row.subject, row.metric)] = Acknowledgement(
            subject=row.subject,
            metric=row.metric,
            result_id=row.result_id,
            acknowledged_at=row.acknowledged_at.replace(tzinfo=UTC),
            note=row.note,
            restart_at=row.created_at.replace(tzinfo=UTC),
        )
    return newest
