"""Run records: one run of an agent on one task in one arm of an A/B comparison (the A/B schema).

The JSON Schema `schemas/run_record.schema.json` is the exchange format; `RunRecord` is its typed
model, and the two accept and reject the same records. `read_run_records` loads record files into
a polars frame for the comparison: plain JSONL takes a columnar fast path (`polars.read_ndjson`
plus vectorised checks), anything else (JSON arrays, pretty-printed objects, files with type
errors) goes through `records.io`, so every problem still reads `file:line: field: problem`.
"""

from __future__ import annotations

import dataclasses
import math
import mmap
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from plumbline.core.timestamps import parse_utc
from plumbline.records.io import InvalidRecordError, RecordError, as_regular_file, read_records
from plumbline.records.lines import max_line_bytes
from plumbline.records.run_record_model import (
    COUNT_FIELDS,
    MAX_COST_USD,
    MAX_COUNT,
    MAX_SECONDS,
    MAX_TOKENS,
    REQUIRED_FIELDS,
    SCHEMA_VERSION,
    TOKEN_FIELDS,
    CostUsd,
    MeteredUsage,
    ModelUsage,
    NonNegativeInt,
    ReportedUsage,
    RunRecord,
    Seconds,
    TokenCount,
    run_record_schema,
    time_problems,
)

# Columns of the comparison frame, with the polars type each record field is read as.
FRAME_SCHEMA: dict[str, Any] = {
    "task_id": pl.String,
    "arm": pl.String,
    "repeat": pl.Int64,
    "success": pl.Boolean,
    "duration_seconds": pl.Float64,
    "total_cost_usd": pl.Float64,
    "input_tokens": pl.Int64,
    "output_tokens": pl.Int64,
    "cache_read_tokens": pl.Int64,
    "cache_write_tokens": pl.Int64,
    "step_count": pl.Int64,
    "tool_call_count": pl.Int64,
    "acceptance_cmd_count": pl.Int64,
    "timed_out": pl.Boolean,
    "infra_failure": pl.Boolean,
    "run_id": pl.String,
    "started_at_utc": pl.String,
    "ended_at_utc": pl.String,
    "sandbox": pl.String,
    "network": pl.String,
    "usage_source": pl.String,
    "usage_discrepancy_flagged": pl.Boolean,
    "model_usage": pl.List(
        pl.Struct(
            {
                "model": pl.String,
                **dict.fromkeys(TOKEN_FIELDS, pl.Int64),
                "total_cost_usd": pl.Float64,
            }
        )
    ),
}
USAGE_FIELDS = ("model", *TOKEN_FIELDS, "total_cost_usd")
_NOT_NULL = ("task_id", "arm", "repeat", "success", "duration_seconds")
_NULLABLE_REQUIRED = tuple(name for name in REQUIRED_FIELDS if name not in _NOT_NULL)
_NON_NEGATIVE = (
    "repeat",
    "duration_seconds",
    "total_cost_usd",
    *TOKEN_FIELDS,
    *COUNT_FIELDS,
)
# The schema's maxima, checked column-wise on the fast path.
_MAXIMA: dict[str, float] = {
    "repeat": MAX_COUNT,
    "duration_seconds": MAX_SECONDS,
    "total_cost_usd": MAX_COST_USD,
    **dict.fromkeys(TOKEN_FIELDS, MAX_TOKENS),
    **dict.fromkeys(COUNT_FIELDS, MAX_COUNT),
}


@dataclass
class RunRecordTable:
    """Valid run records as a polars frame (one row per record, with `file` and `line`)."""

    frame: pl.DataFrame
    errors: list[RecordError] = field(default_factory=list)
    records_read: int = 0
    invalid_records: int = 0
    files: list[str] = field(default_factory=list)


def empty_frame() -> pl.DataFrame:
    return pl.DataFrame(schema={**FRAME_SCHEMA, "file": pl.String, "line": pl.Int64})


def records_to_frame(records: list[RunRecord], path: str, lines: list[int]) -> pl.DataFrame:
    """Columns of validated records (the slow path; the fast path never builds models)."""
    columns: dict[str, list[Any]] = {name: [] for name in FRAME_SCHEMA}
    for record in records:
        for name, values in columns.items():
            values.append(getattr(record, name))
    columns["model_usage"] = [
        None if usage is None else [entry.model_dump(include=set(USAGE_FIELDS)) for entry in usage]
        for usage in columns["model_usage"]
    ]
    frame = pl.DataFrame(columns, schema=FRAME_SCHEMA)
    return frame.with_columns(
        pl.lit(path, dtype=pl.String).alias("file"), pl.Series("line", lines, dtype=pl.Int64)
    )


def _looks_like_jsonl(head: bytes) -> bool:
    # Only the head is inspected: the fast path never holds the whole file in Python.
    head = head.lstrip()
    if not head.startswith(b"{"):
        return False
    end = head.find(b"\n")
    first_line = head if end < 0 else head[:end]
    return first_line.rstrip().endswith(b"}")


_CHUNK = 1 << 23


def _scan(path: Path, needles: list[bytes]) -> tuple[list[int], bool]:
    """How often each needle occurs in the file, and whether it ends with a newline.

    Read in chunks into one reused buffer: no copy of the whole file, and the counts run at
    memchr speed. A needle straddling two chunks is counted once: the last bytes of a chunk
    are kept in front of the next, and only matches reaching past them are counted again.
    """
    counts = [0] * len(needles)
    keep = max(len(needle) for needle in needles) - 1
    buffer = bytearray(keep + _CHUNK)
    view = memoryview(buffer)
    octets = np.frombuffer(buffer, dtype=np.uint8)
    tail, last = 0, b""
    with path.open("rb") as handle:
        while read := handle.readinto(view[tail:]):
            end = tail + read
            for i, needle in enumerate(needles):
                start = max(tail - len(needle) + 1, 0)
                if len(needle) == 1:  # a vectorised compare beats bytes.count's byte loop
                    counts[i] += int(np.count_nonzero(octets[start:end] == needle[0]))
                else:
                    counts[i] += buffer.count(needle, start, end)
            last = bytes(buffer[end - 1 : end])
            tail = min(keep, end)
            buffer[:tail] = buffer[end - tail : end]
    return counts, last == b"\n"


def _newline_positions(path: Path) -> tuple[npt.NDArray[np.int64], int]:
    """Byte offsets of every newline in the file (chunked, vectorised), and the file's size."""
    found: list[npt.NDArray[np.int64]] = []
    buffer = bytearray(_CHUNK)
    octets = np.frombuffer(buffer, dtype=np.uint8)
    offset = 0
    with path.open("rb") as handle:
        while read := handle.readinto(buffer):
            found.append(np.flatnonzero(octets[:read] == 10).astype(np.int64) + offset)
            offset += read
    positions = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
    return positions, offset


def _line_count(breaks: npt.NDArray[np.int64], size: int) -> int:
    ends_with_newline = bool(breaks.size) and int(breaks[-1]) == size - 1
    return int(breaks.size) + (0 if not size or ends_with_newline else 1)


def _line_numbers(
    path: Path, rows: int, breaks: npt.NDArray[np.int64], size: int
) -> pl.Series | None:
    if _line_count(breaks, size) == rows:  # no blank lines: record i is on line i + 1
        return pl.int_range(1, rows + 1, eager=True, dtype=pl.Int64).alias("line")
    data = path.read_bytes()
    found = [i + 1 for i, text in enumerate(data.split(b"\n")) if text.strip()]
    if len(found) != rows:
        return None
    return pl.Series("line", found, dtype=pl.Int64)


def _keys_present(
    path: Path, frame: pl.DataFrame, names: list[str], breaks: npt.NDArray[np.int64], size: int
) -> bool:
    """Whether every record whose `names` column is null has that key (null, not missing).

    When record i is line i + 1, only the lines of the null rows are read and searched; with
    blank lines, or when nulls are common, every occurrence of the key in the file is counted
    instead (it must occur at least once per record).
    """
    rows = frame.height
    aligned = _line_count(breaks, size) == rows
    nulls = frame.select(pl.col(names).is_null())
    if aligned and int(nulls.select(pl.sum_horizontal(pl.all()).sum()).item()) <= max(
        rows // 20, 64
    ):
        ends = np.append(breaks, size)
        starts = np.concatenate(([0], breaks + 1))
        with (
            path.open("rb") as handle,
            mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view,
        ):
            for name in names:
                where = nulls[name].arg_true().to_numpy()
                lines = [
                    view[a:b]
                    for a, b in zip(starts[where].tolist(), ends[where].tolist(), strict=True)
                ]
                key = b'"' + name.encode() + b'"'
                if not pl.Series(lines, dtype=pl.Binary).bin.contains(key).all():
                    return False
        return True
    counts, _ = _scan(path, [b'"' + name.encode() + b'"' for name in names])
    return all(count >= rows for count in counts)


def _all_valid() -> list[pl.Expr]:
    """One boolean per rule, true when no row breaks it: the same rules as the row checks in
    `_fast_jsonl`, as reductions."""
    return [
        *[(pl.col(name).null_count() == 0).alias(f"{name}:present") for name in _NOT_NULL],
        *[
            (pl.col(name).str.len_bytes().min().fill_null(1) > 0).alias(f"{name}:empty")
            for name in ("task_id", "arm")
        ],
        *[
            (pl.col(name).min().fill_null(0) >= 0).alias(f"{name}:negative")
            for name in _NON_NEGATIVE
        ],
        *[
            pl.col(name).is_finite().all().alias(f"{name}:finite")
            for name in ("duration_seconds", "total_cost_usd")
        ],
        *[
            (pl.col(name).max().fill_null(0) <= maximum).alias(f"{name}:maximum")
            for name, maximum in _MAXIMA.items()
        ],
        *[(~_bad_times(name).any()).alias(f"{name}:time") for name in _TIME_FIELDS],
    ]


_TIME_FIELDS = ("started_at_utc", "ended_at_utc")
_MOMENTS = ("_started", "_ended")


def _with_moments(frame: pl.DataFrame) -> pl.DataFrame:
    """Add `_started`/`_ended`: seconds since the epoch of each time, NaN when it is not ISO
    8601, null when absent (parsed in Python: ISO 8601 has more shapes than one format)."""
    columns: list[pl.Expr | pl.Series] = []
    for name, alias in zip(_TIME_FIELDS, _MOMENTS, strict=True):
        values = frame[name]
        if values.null_count() == frame.height:
            columns.append(pl.lit(None, dtype=pl.Float64).alias(alias))
        else:
            moments = [None if v is None else _moment(v) for v in values.to_list()]
            columns.append(pl.Series(alias, moments, dtype=pl.Float64))
    return frame.with_columns(columns)


def _bad_times(name: str) -> pl.Expr:
    """Rows whose `name` time is not ISO 8601, or (for the end) is before the start."""
    started, ended = pl.col("_started"), pl.col("_ended")
    own = started if name == "started_at_utc" else ended
    broken = own.is_nan().fill_null(False)
    if name == "started_at_utc":
        return broken
    return broken | (ended < started).fill_null(False)


def _moment(value: str) -> float:
    """Seconds since the epoch of an ISO 8601 date-time, NaN when it is not one."""
    try:
        return parse_utc(value).timestamp()
    except (ValueError, TypeError, OverflowError):
        return math.nan


def _usage_valid(column: pl.Series) -> bool:
    """Whether every `model_usage` entry holds what `ModelUsage` accepts (checked column-wise:
    a named model, counts and cost in range; the types were enforced by the read)."""
    if column.null_count() == column.len():
        return True
    # Only non-empty lists: each exploded row is then an entry (a null element included).
    entries = column.filter(column.list.len() > 0).explode().struct.unnest()
    if entries.height == 0:
        return True
    checks = [
        pl.col("model").is_not_null().all() & (pl.col("model").str.len_chars().min() > 0),
        *[
            (pl.col(name).min().fill_null(0) >= 0) & (pl.col(name).max().fill_null(0) <= MAX_TOKENS)
            for name in TOKEN_FIELDS
        ],
        (pl.col("total_cost_usd").min().fill_null(0) >= 0)
        & (pl.col("total_cost_usd").max().fill_null(0) <= MAX_COST_USD)
        & pl.col("total_cost_usd").is_finite().all(),
    ]
    return all(entries.select(checks).row(0))


def _fast_jsonl(path: str, source: Path) -> tuple[pl.DataFrame, list[RecordError]] | None:
    """Read plain JSONL column-wise; None when the file needs the record-by-record reader
    (which also reads pipes and FIFOs, and names a line longer than the bound)."""
    if not stat.S_ISREG(source.stat().st_mode):
        return None  # a pipe or FIFO is read once, as a stream
    with source.open("rb") as handle:
        head = handle.read(65536)
    if not _looks_like_jsonl(head):
        return None
    breaks, size = _newline_positions(source)
    starts = np.concatenate(([-1], breaks))
    ends = np.append(breaks, size)
    if starts.size and int((ends - starts - 1).max()) > max_line_bytes():
        return None
    try:
        # An explicit schema: no type inference, and polars maps the file itself.
        frame = pl.read_ndjson(source, schema=FRAME_SCHEMA, ignore_errors=False)
    except (pl.exceptions.PolarsError, ValueError):
        return None  # a type error: the slow path names the record and the field
    if not _usage_valid(frame["model_usage"]):
        return None  # the record-by-record reader names the entry and the field
    rows = frame.height
    # polars reads a missing key as null, but a nullable required key must be present (null
    # means "not reported"); the record-by-record reader names the record that lacks one.
    # Only a column with nulls can hide a missing key, so only its null rows are checked.
    # (A missing non-nullable key is caught below as a null.)
    nulls = frame.select(pl.col(_NULLABLE_REQUIRED).null_count()).row(0)
    nullable = [name for name, count in zip(_NULLABLE_REQUIRED, nulls, strict=True) if count]
    if nullable and not _keys_present(source, frame, nullable, breaks, size):
        return None
    lines = _line_numbers(source, rows, breaks, size)
    if lines is None:
        return None
    frame = frame.with_columns(
        pl.col("timed_out").fill_null(False),
        pl.col("infra_failure").fill_null(False),
        pl.lit(path, dtype=pl.String).alias("file"),
        lines,
    )
    frame = _with_moments(frame)
    checks: list[tuple[str, pl.Expr, str]] = [
        (name, pl.col(name).is_null(), "Field required (missing or null)") for name in _NOT_NULL
    ]
    checks += [(name, pl.col("task_id") == "", "must not be empty") for name in ("task_id",)]
    checks += [(name, pl.col("arm") == "", "must not be empty") for name in ("arm",)]
    checks += [
        (name, pl.col(name) < 0, "Input should be greater than or equal to 0")
        for name in _NON_NEGATIVE
    ]
    checks += [
        (
            name,
            pl.col(name).is_infinite() | pl.col(name).is_nan(),
            "Input should be a finite number",
        )
        for name in ("duration_seconds", "total_cost_usd")
    ]
    checks += [
        (name, pl.col(name) > maximum, f"Input should be less than or equal to {maximum:.15g}")
        for name, maximum in _MAXIMA.items()
    ]
    checks += [(name, _bad_times(name), "") for name in _TIME_FIELDS]
    # First pass: column reductions only (no per-row mask); valid files end here.
    if all(frame.select(_all_valid()).row(0)):
        return frame.drop(_MOMENTS), []
    # Second pass, only for a file with a problem: which rows, located by line.
    flags = [expr.fill_null(False).alias(f"{i}") for i, (_, expr, _) in enumerate(checks)]
    bad = frame.select(pl.any_horizontal(flags).alias("bad")).to_series()
    # Only the (few) bad rows are looked at one by one, to name each problem.
    flagged = frame.filter(bad).select("line", *flags)
    errors: list[RecordError] = []
    for line, *row in flagged.iter_rows():
        for (name, _, problem), failed in zip(checks, row, strict=True):
            if failed and problem:
                errors.append(RecordError(path, line, name, problem))
    times = frame.filter(bad).select("line", *_TIME_FIELDS)
    for line, started, ended in times.iter_rows():
        errors += [RecordError(path, line, n, p) for n, p in time_problems(started, ended)]
    errors.sort(key=lambda error: error.line)
    return frame.filter(~bad).drop(_MOMENTS), errors


def read_run_records(paths: list[str | Path], *, strict: bool = False) -> RunRecordTable:
    """Read and validate run record files (JSONL, JSON array or concatenated objects).

    Invalid records are excluded, counted and reported as `file:line: field: problem`;
    with `strict`, the first one raises `InvalidRecordError`.
    """
    frames: list[pl.DataFrame] = []
    table = RunRecordTable(frame=empty_frame())
    for path in paths:
        name = str(path)
        table.files.append(name)
        # a pipe (`<(cat runs.jsonl)`) or FIFO is read once, into a temporary file
        with as_regular_file(path) as source:
            fast = _fast_jsonl(name, source)
            if fast is not None:
                frame, errors = fast
                if errors and strict:
                    raise InvalidRecordError(min(errors, key=lambda e: e.line))
                invalid = len({e.line for e in errors})
            else:
                try:
                    result = read_records([source], RunRecord, strict=strict)
                except InvalidRecordError as error:
                    raise InvalidRecordError(dataclasses.replace(error.error, path=name)) from None
                locations = [loc.line for loc in result.locations]
                frame = records_to_frame(result.records, name, locations)
                errors = [dataclasses.replace(error, path=name) for error in result.errors]
                invalid = len({(e.path, e.line) for e in errors})
        frames.append(frame)
        table.errors.extend(errors)
        table.invalid_records += invalid
        table.records_read += frame.height + invalid
    if len(frames) == 1:
        table.frame = frames[0]
    elif frames:
        table.frame = pl.concat(frames, how="vertical")
    duplicates = _duplicate_run_ids(table.frame)
    if duplicates:
        if strict:
            raise InvalidRecordError(duplicates[0])
        table.errors.extend(duplicates)
        table.invalid_records += len(duplicates)
        table.frame = table.frame.filter(
            ~pl.col("run_id").is_not_null() | pl.col("run_id").is_first_distinct()
        )
    return table


def _duplicate_run_ids(frame: pl.DataFrame) -> list[RecordError]:
    """A problem for every record whose `run_id` an earlier record already has (a run counted
    twice, e.g. a journal copied into two files); the first one is kept."""
    if frame.height == 0 or frame["run_id"].null_count() == frame.height:
        return []
    ids = frame.select("run_id", "file", "line").with_row_index("_row")
    repeated = ids.filter(pl.col("run_id").is_not_null() & pl.col("run_id").is_duplicated())
    if repeated.height == 0:
        return []
    first: dict[str, str] = {}
    problems = []
    for _, run_id, path, line in repeated.sort("_row").iter_rows():
        if run_id not in first:
            first[run_id] = f"{path}:{line}"
            continue
        problems.append(
            RecordError(
                path, line, "run_id", f"duplicate run_id {run_id!r} (first at {first[run_id]})"
            )
        )
    return problems


def duplicate_units(frame: pl.DataFrame) -> list[RecordError]:
    """A problem for every record whose `(task_id, arm, repeat)` an earlier record already has.

    Each unit of an A/B comparison is one run: a second record of it is a rerun, a copied file,
    or task ids that collide (sample 1 of two tasks). The comparison keeps such records out of
    its pairing and says so; `records validate` reports them here, first location named.
    """
    if frame.height == 0:
        return []
    keys = frame.select("task_id", "arm", "repeat", "file", "line").with_row_index("_row")
    repeated = keys.filter(pl.struct("task_id", "arm", "repeat").is_duplicated())
    if repeated.height == 0:
        return []
    first: dict[tuple[str, str, int], str] = {}
    problems = []
    for _, task, arm, repeat, path, line in repeated.sort("_row").iter_rows():
        unit = (task, arm, repeat)
        if unit not in first:
            first[unit] = f"{path}:{line}"
            continue
        problems.append(
            RecordError(
                path,
                line,
                "task_id",
                f"duplicate run: task {task!r}, arm {arm!r}, repeat {repeat} "
                f"(first at {first[unit]}); a comparison leaves both out of its pairing",
            )
        )
    return problems


__all__ = [
    "COUNT_FIELDS",
    "FRAME_SCHEMA",
    "MAX_COST_USD",
    "MAX_COUNT",
    "MAX_SECONDS",
    "MAX_TOKENS",
    "REQUIRED_FIELDS",
    "SCHEMA_VERSION",
    "TOKEN_FIELDS",
    "USAGE_FIELDS",
    "CostUsd",
    "MeteredUsage",
    "ModelUsage",
    "NonNegativeInt",
    "ReportedUsage",
    "RunRecord",
    "RunRecordTable",
    "Seconds",
    "TokenCount",
    "duplicate_units",
    "empty_frame",
    "read_run_records",
    "records_to_frame",
    "run_record_schema",
    "time_problems",
]
