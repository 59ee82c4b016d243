"""One reading of an ISO 8601 time for every reader (issue 38, item 7).

A time written without a zone (`2026-01-02T03:04:05`) is UTC, everywhere plumbline reads one:
run records (`started_at_utc`, `ended_at_utc`, whose names state the zone), trial records'
`timestamp`, Inspect logs' `eval.created` (as Inspect itself normalises it), and the order of
`compare --sequential`. UTC rather than refusal: the A/B schema's fields are named `_utc`, so a
naive value there can only mean UTC, and `records validate` has always accepted them; the local
zone of the machine reading a file is never a property of the file.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime


def parse_utc(value: str) -> datetime:
    """An ISO 8601 date-time (`Z` allowed) as an aware datetime; a naive one is UTC.

    Raises ValueError (not ISO 8601) or TypeError (not a string)."""
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    return as_utc(datetime.fromisoformat(text))


def as_utc(moment: datetime) -> datetime:
    """`moment` with its zone, a naive one taken as UTC (never the machine's local zone)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def epoch_seconds(value: object) -> float | None:
    """Seconds since the epoch of an ISO 8601 time read by `parse_utc`; None when `value` is
    absent or not one (the caller says what it does without it)."""
    if not isinstance(value, str):
        return None
    try:
        seconds = parse_utc(value).timestamp()
    except (ValueError, OverflowError):
        return None
    return seconds if math.isfinite(seconds) else None


__all__ = ["as_utc", "epoch_seconds", "parse_utc"]
