"""The A/B schema's metrics ("Scoring Schema"), computed column-wise with polars.

Per run: `total_tokens = input + output + cache_read + cache_write`, `non_cache_tokens = input +
output` (null when any part is null). Per arm: `runs`, `successes`, `success_rate`,
`total_cost_usd`, `avg_cost_usd`, `median_cost_usd`, `median_duration_seconds`,
`median_total_tokens`, `median_non_cache_tokens`, `solved_per_dollar`. Paired deltas for every
`(task_id, repeat)` present in both arms: `pass_delta`, `cost_delta_usd`,
`duration_delta_seconds`, `token_delta`, each with mean and median.

Fixes to the reference harness (REFERENCE-NOTES §2): null cost or tokens are excluded from that
metric and counted, never read as 0; medians of even counts average the two middle values
(polars' median, which matches `numpy.median`); a timed-out run is a failure; infrastructure
failures are excluded and counted per arm; a duplicated `(task_id, arm, repeat)` is reported
and kept out of the pairing instead of being silently reduced to its first record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

from plumbline.compare.result import (
    PRIMARY_DELTAS,
    SECONDARY_DELTAS,
    ArmSummary,
    DeltaSummary,
    Duplicate,
)
from plumbline.records.run_record import COUNT_FIELDS, TOKEN_FIELDS

PAIR_COLUMNS = tuple(dict.fromkeys([*PRIMARY_DELTAS.values(), *SECONDARY_DELTAS.values()]))


@dataclass
class PreparedRuns:
    """Runs ready for comparison, and what was set aside on the way."""

    runs: pl.DataFrame  # infrastructure failures removed; derived columns added
    infra_failures: dict[str, int]
    duplicates: list[Duplicate] = field(default_factory=list)
    #: `arm`, `task_id`, `repeat` of the infrastructure failures set aside: the trial ran but
    #: has no outcome (the sequential order counts its round as resolved).
    infra_runs: pl.DataFrame | None = None


def _max(column: pl.Series) -> int:
    value = column.max()
    return value if isinstance(value, int) else 0


def _pair_key(runs: pl.DataFrame) -> pl.Series:
    """One Int64 per `(task_id, repeat)`: equal exactly when both are, so pairing and
    duplicate detection join and count integers instead of strings."""
    tasks = runs["task_id"].cast(pl.Categorical).to_physical().cast(pl.Int64)
    repeats = runs["repeat"]
    if runs.height and (_max(repeats) >= 1 << 32 or _max(tasks) >= 1 << 30):
        pairs = pl.DataFrame({"t": runs["task_id"], "r": repeats})
        return pairs.select(pl.struct("t", "r").rank("dense").cast(pl.Int64))["t"]
    return (tasks * (1 << 32) + repeats).alias("pair_key")


def prepare_runs(frame: pl.DataFrame) -> PreparedRuns:
    """Derive the A/B schema's per-run columns, set aside infrastructure failures, find
    duplicates."""
    infra = frame.lazy().filter(pl.col("infra_failure")).group_by("arm").len().collect()
    infra_failures = {str(arm): int(n) for arm, n in infra.iter_rows()}
    # Filtering copies every column; most inputs have no infrastructure failure to remove.
    kept = frame.filter(~pl.col("infra_failure")) if infra.height else frame
    runs = kept.with_columns(
        # A timeout is the agent failing the task, whatever the acceptance check later said.
        (pl.col("success") & ~pl.col("timed_out")).alias("success"),
        pl.sum_horizontal(*TOKEN_FIELDS, ignore_nulls=False).alias("total_tokens"),
        pl.sum_horizontal("input_tokens", "output_tokens", ignore_nulls=False).alias(
            "non_cache_tokens"
        ),
    )
    runs = runs.with_columns(
        pl.col("success").cast(pl.Int64).alias("success_int"), _pair_key(runs).alias("pair_key")
    )
    # The common case, no duplicates, is settled by one count of distinct (pair, arm) keys.
    arms = runs["arm"].cast(pl.Categorical).to_physical().cast(pl.Int64)
    arm_count = _max(arms) + 1
    widest = _max(runs["pair_key"])
    if widest < (1 << 62) // arm_count:
        run_key = runs["pair_key"] * arm_count + arms
    else:
        run_key = pl.DataFrame({"p": runs["pair_key"], "a": arms}).select(
            pl.struct("p", "a").rank("dense").cast(pl.Int64)
        )["p"]
    if run_key.n_unique() == runs.height:
        runs = runs.with_columns(pl.lit(False).alias("duplicated"))
    else:
        runs = runs.with_columns(run_key.is_duplicated().alias("duplicated"))
    duplicated = runs.filter(pl.col("duplicated"))
    duplicates: list[Duplicate] = []
    if duplicated.height:
        grouped = (
            duplicated.group_by("task_id", "arm", "repeat", maintain_order=True)
            .agg((pl.col("file") + ":" + pl.col("line").cast(pl.String)).alias("locations"))
            .sort("arm", "task_id", "repeat")
        )
        duplicates = [
            Duplicate(task_id=str(task), arm=str(arm), repeat=int(repeat), locations=locations)
            for task, arm, repeat, locations in grouped.iter_rows()
        ]
    infra_runs = (
        frame.filter(pl.col("infra_failure")).select("arm", "task_id", "repeat")
        if infra.height
        else None
    )
    return PreparedRuns(runs, infra_failures, duplicates, infra_runs)


def _nullable(value: Any) -> float | None:
    return None if value is None else float(value)


def arm_summaries(prepared: PreparedRuns, arms: list[str]) -> dict[str, ArmSummary]:
    """Summaries for `arms` (in that order) from prepared runs, one polars aggregation."""
    costed = pl.col("total_cost_usd").is_not_null()
    chosen = prepared.runs.lazy().filter(pl.col("arm").is_in(arms))
    table = chosen.group_by("arm").agg(
        pl.len().alias("runs"),
        pl.col("success_int").sum().alias("successes"),
        pl.col("total_cost_usd").sum().alias("cost_sum"),
        costed.sum().alias("runs_with_cost"),
        pl.col("total_cost_usd").median().alias("median_cost_usd"),
        pl.col("duration_seconds").median().alias("median_duration_seconds"),
        pl.col("total_tokens").median().alias("median_total_tokens"),
        pl.col("non_cache_tokens").median().alias("median_non_cache_tokens"),
        pl.col("total_tokens").null_count().alias("null_total_tokens_runs"),
        pl.col("non_cache_tokens").null_count().alias("null_non_cache_tokens_runs"),
        pl.col("timed_out").sum().alias("timed_out_runs"),
        pl.col("success_int").filter(costed).sum().alias("successes_with_cost"),
        pl.col("task_id").n_unique().alias("tasks"),
    )
    repeats = (
        chosen.group_by("arm", "task_id")
        .len()
        .group_by("arm")
        .agg(pl.col("len").min().alias("min_repeats_per_task"))
    )
    joined = table.join(repeats, on="arm").collect()
    rows = {row["arm"]: row for row in joined.iter_rows(named=True)}
    summaries: dict[str, ArmSummary] = {}
    for arm in arms:
        row = rows.get(arm)
        infra = prepared.infra_failures.get(arm, 0)
        if row is None:
            summaries[arm] = ArmSummary(
                runs=0,
                successes=0,
                success_rate=None,
                total_cost_usd=None,
                avg_cost_usd=None,
                median_cost_usd=None,
                median_duration_seconds=None,
                median_total_tokens=None,
                median_non_cache_tokens=None,
                solved_per_dollar=None,
                runs_with_cost=0,
                null_cost_runs=0,
                null_total_tokens_runs=0,
                null_non_cache_tokens_runs=0,
                timed_out_runs=0,
                excluded_infra_failures=infra,
                tasks=0,
                min_repeats_per_task=0,
            )
            continue
        runs, with_cost = int(row["runs"]), int(row["runs_with_cost"])
        cost = float(row["cost_sum"]) if with_cost else None
        summaries[arm] = ArmSummary(
            runs=runs,
            successes=int(row["successes"]),
            success_rate=int(row["successes"]) / runs,
            total_cost_usd=cost,
            avg_cost_usd=None if cost is None else cost / with_cost,
            median_cost_usd=_nullable(row["median_cost_usd"]),
            median_duration_seconds=_nullable(row["median_duration_seconds"]),
            median_total_tokens=_nullable(row["median_total_tokens"]),
            median_non_cache_tokens=_nullable(row["median_non_cache_tokens"]),
            # Over the runs whose cost is known, so unknown costs never read as free successes.
            solved_per_dollar=(
                int(row["successes_with_cost"]) / cost if cost is not None and cost > 0 else None
            ),
            runs_with_cost=with_cost,
            null_cost_runs=runs - with_cost,
            null_total_tokens_runs=int(row["null_total_tokens_runs"]),
            null_non_cache_tokens_runs=int(row["null_non_cache_tokens_runs"]),
            timed_out_runs=int(row["timed_out_runs"]),
            excluded_infra_failures=infra,
            tasks=int(row["tasks"]),
            min_repeats_per_task=int(row["min_repeats_per_task"]),
        )
    return summaries


def pair_runs(prepared: PreparedRuns, treatment: str, control: str) -> pl.DataFrame:
    """One row per `(task_id, repeat)` present once in both arms, in the treatment's order.

    Columns: `task_id`, `repeat`, `<column>_t`, `<column>_c` for each paired column, and one
    column per delta (`treatment − control`; null when either side is null).
    """
    # Lazy, so each side's filter copies only the columns the pairing uses.
    usable = prepared.runs.lazy().filter(~pl.col("duplicated"))
    t, c = pl.collect_all(
        [
            usable.filter(pl.col("arm") == treatment).select(
                "task_id", "repeat", "pair_key", *PAIR_COLUMNS
            ),
            usable.filter(pl.col("arm") == control).select("pair_key", *PAIR_COLUMNS),
        ]
    )
    # Pairs keep the treatment's record order (the order of the input files). When both arms
    # list the same (task, repeat) keys in the same order, as harnesses usually write them,
    # row i pairs with row i (keys are unique within an arm here) and no join is needed.
    if t["pair_key"].equals(c["pair_key"]):
        pairs = pl.concat(
            [t.drop("pair_key"), c.drop("pair_key").rename(lambda name: f"{name}_c")],
            how="horizontal",
        )
    else:
        pairs = t.join(c, on="pair_key", how="inner", suffix="_c", maintain_order="left").drop(
            "pair_key"
        )
    pairs = pairs.rename({name: f"{name}_t" for name in PAIR_COLUMNS})
    deltas = {**PRIMARY_DELTAS, **SECONDARY_DELTAS}
    return pairs.with_columns(
        [(pl.col(f"{col}_t") - pl.col(f"{col}_c")).alias(name) for name, col in deltas.items()]
    )


def delta_summaries(pairs: pl.DataFrame, names: list[str]) -> dict[str, DeltaSummary]:
    """The A/B schema's aggregate paired metrics: mean and median of each delta, in one pass."""
    aggregated = pairs.select(
        *[pl.col(name).cast(pl.Float64).mean().alias(f"{name}:mean") for name in names],
        *[pl.col(name).cast(pl.Float64).median().alias(f"{name}:median") for name in names],
        *[pl.col(name).count().alias(f"{name}:n") for name in names],
        *[pl.col(name).null_count().alias(f"{name}:null") for name in names],
    ).row(0, named=True)
    return {
        name: DeltaSummary(
            mean=_nullable(aggregated[f"{name}:mean"]),
            median=_nullable(aggregated[f"{name}:median"]),
            n=int(aggregated[f"{name}:n"]),
            null_pairs=int(aggregated[f"{name}:null"]),
        )
        for name in names
    }


def per_task_table(
    prepared: PreparedRuns, pairs: pl.DataFrame, treatment: str, control: str
) -> pl.DataFrame:
    """One row per task: runs, success rate and medians in each arm, and the mean pass delta."""
    per_arm = (
        prepared.runs.filter(pl.col("arm").is_in([treatment, control]))
        .group_by("task_id", "arm")
        .agg(
            pl.len().alias("runs"),
            pl.col("success_int").mean().alias("success_rate"),
            pl.col("duration_seconds").median().alias("median_duration_seconds"),
            pl.col("non_cache_tokens").median().alias("median_non_cache_tokens"),
        )
    )
    metrics = ["runs", "success_rate", "median_duration_seconds", "median_non_cache_tokens"]
    t = per_arm.filter(pl.col("arm") == treatment).drop("arm")
    c = per_arm.filter(pl.col("arm") == control).drop("arm")
    table = t.rename({m: f"{m}_treatment" for m in metrics}).join(
        c.rename({m: f"{m}_control" for m in metrics}), on="task_id", how="full", coalesce=True
    )
    paired = pairs.group_by("task_id").agg(
        pl.len().alias("pairs"),
        pl.col("pass_delta").cast(pl.Float64).mean().alias("mean_pass_delta"),
        pl.col("duration_delta_seconds").median().alias("median_duration_delta_seconds"),
        pl.col("non_cache_token_delta")
        .cast(pl.Float64)
        .median()
        .alias("median_non_cache_token_delta"),
    )
    return (
        table.join(paired, on="task_id", how="left")
        .with_columns(
            pl.col("pairs").fill_null(0),
            *[pl.col(f"runs_{s}").fill_null(0) for s in ("treatment", "control")],
        )
        .sort("task_id")
    )


__all__ = [
    "COUNT_FIELDS",
    "PRIMARY_DELTAS",
    "SECONDARY_DELTAS",
    "ArmSummary",
    "DeltaSummary",
    "Duplicate",
    "PreparedRuns",
    "arm_summaries",
    "delta_summaries",
    "pair_runs",
    "per_task_table",
    "prepare_runs",
]
