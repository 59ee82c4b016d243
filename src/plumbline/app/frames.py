"""Results as dataframes (polars), written as Parquet: one row per sample, run or trial.

Column names follow Inspect's `samples_df` (`inspect_ai.analysis`) where the meaning is the same:
`eval_id`, `run_id`, `log` (absolute, as samples_df writes it), `created`, `task_name` (without
its registry namespace, as samples_df writes it), `model`, `id` (the sample id, as a string),
`epoch` (from 1), `error` ("" when none), `total_time`, `total_tokens`, `input`. plumbline's
own columns keep their record field names beside them. Scores are given as `scorer` and `value`
(converted to a float as the leaderboard reads it), not as `score_<name>`: samples_df's
`score_<name>` holds the raw value ("C"), and a column of one name should mean one thing.

- `leaderboard_frame`: every sample × epoch of every log a suite reads, with the category it
  feeds, the scorer the category read (`scorer`), its value (`value`, null when errored or
  unscored) and `superseded` (a newer log of the same model holds the same question and epoch:
  the leaderboard used the newer one). The logs are those the leaderboard uses, and
  `superseded` is its rule (`leaderboard.logs`): the rows where it is false are exactly the
  samples the leaderboard scores and the site's drill-down shows.
- `runs_frame`: the A/B schema's run records, the columns `compare` analyses plus `file` and
  `line` (`id` = task_id, `epoch` = repeat + 1, `total_time` = duration_seconds).
- `trials_frame`: CERT trial records (`id` = prompt_id, `epoch` = trial + 1, `input` = prompt,
  `total_time` = latency_seconds, `error` = error_message).
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from plumbline.records.io import write_atomic

if TYPE_CHECKING:
    from plumbline.leaderboard.suite import Suite
    from plumbline.records.trial_record import TrialRecord


def parquet_bytes(frame: pl.DataFrame) -> bytes:
    """A frame as the bytes of a Parquet file (for the one output writer)."""
    buffer = io.BytesIO()
    frame.write_parquet(buffer)
    return buffer.getvalue()


def write_parquet(frame: pl.DataFrame, path: str | Path) -> None:
    """Write a frame as Parquet with `write_atomic` (atomic for a regular file)."""
    write_atomic(path, parquet_bytes(frame))


LEADERBOARD_SCHEMA: dict[str, Any] = {
    "eval_id": pl.String,
    "run_id": pl.String,
    "log": pl.String,
    "created": pl.Datetime("us", "UTC"),
    "task_name": pl.String,
    "model": pl.String,
    "id": pl.String,
    "epoch": pl.Int64,
    "category": pl.String,
    "scorer": pl.String,
    "value": pl.Float64,
    "error": pl.String,
}


def _log_location(path: str) -> str:
    """A log's location as `samples_df` writes it: a local path made absolute (and normalised),
    a remote URL as it is."""
    from urllib.parse import urlparse
    from urllib.request import url2pathname

    from plumbline.records.log_files import is_remote

    if is_remote(path):
        return path
    if path.startswith("file://"):
        path = url2pathname(urlparse(path).path)
    return os.path.abspath(path)


def leaderboard_frame(
    paths: Iterable[str | Path], suite: Suite, *, workers: int | None = None, fast: bool = True
) -> pl.DataFrame:
    """One row per sample × epoch × category of every log the leaderboard uses under `paths`
    (read as `collect` reads them: `leaderboard.logs`), `superseded` where a newer log wins."""
    from plumbline.leaderboard.logs import newest_rows, question_key, suite_log
    from plumbline.records.adapters.inspect_log import task_name
    from plumbline.records.log_pool import LogReader

    rows: list[dict[str, Any]] = []
    keys: list[tuple[str, str, str, str]] = []
    headers = []
    with LogReader(paths, workers=workers, fast=fast) as reader:
        for read in reader:
            used = suite_log(read, suite)
            for category, scorer in used.parts:
                header, columns = used.header, used.columns
                values = columns.values.get(scorer)
                for row, sample_id in enumerate(columns.ids):
                    error = columns.errors.get(row)
                    value = None if values is None or error is not None else values[row]
                    rows.append(
                        {
                            "eval_id": header.eval_id,
                            "run_id": header.run_id,
                            "log": _log_location(header.path),
                            "created": header.created,
                            "task_name": task_name(header.task),
                            "model": header.model,
                            "id": str(sample_id),
                            "epoch": columns.epochs[row],
                            "category": category.key,
                            "scorer": scorer,
                            "value": None if value is None or math.isnan(value) else value,
                            "error": error or "",
                        }
                    )
                    keys.append(question_key(category, header, columns.id_keys[row]))
                    headers.append(header)
    frame = pl.DataFrame(rows, schema=LEADERBOARD_SCHEMA)
    kept = newest_rows(keys, frame["epoch"].to_list(), headers)
    return frame.with_columns(superseded=pl.Series(~kept, dtype=pl.Boolean))


def runs_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """Run records (as read by `read_run_records`) with samples_df-style columns added."""
    added = [
        pl.col("task_id").alias("id"),
        (pl.col("repeat") + 1).alias("epoch"),
        pl.col("duration_seconds").alias("total_time"),
        (pl.col("input_tokens") + pl.col("output_tokens")).alias("total_tokens"),
    ]
    if "failure_reason" in frame.columns:
        added.append(pl.col("failure_reason").fill_null("").alias("error"))
    return frame.with_columns(*added)


def trials_frame(records: Sequence[TrialRecord]) -> pl.DataFrame:
    """One row per trial record, with samples_df-style columns beside the record's fields."""
    rows = []
    for record in records:
        data = record.model_dump(mode="json", exclude={"config"})
        data.update({f"config_{key}": value for key, value in record.config.model_dump().items()})
        tokens = (
            None
            if record.input_tokens is None or record.output_tokens is None
            else record.input_tokens + record.output_tokens
        )
        data.update(
            id=record.prompt_id,
            epoch=record.trial + 1,
            input=record.prompt,
            total_time=record.latency_seconds,
            total_tokens=tokens,
            error=record.error_message or "",
        )
        rows.append(data)
    return pl.DataFrame(rows, infer_schema_length=None)
