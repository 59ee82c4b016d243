"""The runs `compare` lists (and its page shows), and the per-run values its distribution plots
draw."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from plumbline.compare.metrics import PreparedRuns
from plumbline.compare.result import ArmDistribution, RunListing, RunRow, Sample

#: Runs listed in the report (and on its page); beyond it the report says how many were left out.
MAX_LISTED_RUNS = 2000


#: Values kept per arm and metric for the distribution plots; larger arms are thinned to evenly
#: spaced order statistics (min, max and the quartiles' neighbourhood kept).
MAX_POINTS = 4000


def thin_points(values: list[float]) -> list[float]:
    """At most MAX_POINTS values: evenly spaced order statistics (min and max kept)."""
    if len(values) <= MAX_POINTS:
        return values
    ordered = sorted(values)
    step = (len(ordered) - 1) / (MAX_POINTS - 1)
    return [ordered[round(i * step)] for i in range(MAX_POINTS)]


def run_listing(prepared: PreparedRuns, arms: Sequence[str]) -> RunListing:
    """The compared arms' runs, sorted by arm, task and repeat (the first MAX_LISTED_RUNS)."""
    runs = prepared.runs.filter(pl.col("arm").is_in(list(arms)))
    listed = runs.sort("arm", "task_id", "repeat").head(MAX_LISTED_RUNS)
    rows = [
        RunRow(
            task_id=str(row["task_id"]),
            arm=str(row["arm"]),
            repeat=int(row["repeat"]),
            outcome="timed out" if row["timed_out"] else "success" if row["success"] else "failure",
            duration_seconds=row["duration_seconds"],
            total_tokens=row["total_tokens"],
            non_cache_tokens=row["non_cache_tokens"],
            total_cost_usd=row["total_cost_usd"],
            location=f"{row['file']}:{row['line']}",
        )
        for row in listed.iter_rows(named=True)
    ]
    return RunListing(total=runs.height, listed=len(rows), rows=rows)


def arm_distributions(prepared: PreparedRuns, arms: Sequence[str]) -> dict[str, ArmDistribution]:
    """Per-run duration and token values per arm (thinned beyond MAX_POINTS)."""

    def sample(chosen: pl.DataFrame, metric: str) -> Sample:
        values = [float(v) for v in chosen[metric].drop_nulls().to_list()]
        return Sample(n=len(values), values=thin_points(values))

    distributions: dict[str, ArmDistribution] = {}
    for arm in arms:
        chosen = prepared.runs.filter(pl.col("arm") == arm)
        distributions[arm] = ArmDistribution(
            duration_seconds=sample(chosen, "duration_seconds"),
            non_cache_tokens=sample(chosen, "non_cache_tokens"),
            total_tokens=sample(chosen, "total_tokens"),
        )
    return distributions
