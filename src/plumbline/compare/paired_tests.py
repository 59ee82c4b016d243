"""The paired intervals and tests of `compare`: cluster-bootstrap intervals on a paired delta's
mean and on a geometric-mean ratio (tasks resampled, then repeats within task), McNemar,
Wilcoxon, Hodges–Lehmann and the geometric-mean ratio, and the minimum detectable pass-rate
difference (McNemar design, Connor 1987).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np
import polars as pl

from plumbline import stats
from plumbline.compare.result import CompareSettings, PairedTest, PowerAnalysis
from plumbline.core.result import Interval
from plumbline.stats.result import ConfidenceInterval

#: Below this many tasks the percentile cluster bootstrap's coverage is not shown to reach 95%
#: (docs/statistics.md), so its interval is labelled approximate.
APPROXIMATE_TASKS = 10


def codes(column: pl.Series) -> np.ndarray[Any, Any]:
    return column.rank("dense").cast(pl.Int64).to_numpy()


def bootstrap_mean(
    pairs: pl.DataFrame, column: str | pl.Expr, settings: CompareSettings
) -> ConfidenceInterval | None:
    expr = pl.col(column) if isinstance(column, str) else column
    data = pairs.select(expr.cast(pl.Float64).alias("v"), "task_id").drop_nulls("v")
    if data.height < 2:
        return None
    values = data["v"].to_numpy()
    if data["task_id"].n_unique() < 2:
        # One task: only its repeats can be resampled; the interval speaks for this task alone.
        single = stats.bootstrap_interval(
            values, n_resamples=settings.n_resamples, level=settings.level, seed=settings.seed
        )
        return replace(single.interval, method=f"{single.interval.method} (one task: repeats)")
    result = stats.cluster_bootstrap(
        values,
        codes(data["task_id"]),
        statistic="mean",
        n_resamples=settings.n_resamples,
        level=settings.level,
        seed=settings.seed,
    )
    tasks = int(data["task_id"].n_unique())
    approximate = f", approximate: {tasks} tasks" if tasks < APPROXIMATE_TASKS else ""
    return replace(
        result.interval, method=f"{result.interval.method} (tasks, then repeats{approximate})"
    )


def log_ratio_interval(
    pairs: pl.DataFrame, column: str, settings: CompareSettings
) -> tuple[ConfidenceInterval | None, int]:
    """Interval for the paired geometric-mean ratio T/C: exp of the cluster-bootstrap interval
    of the mean log ratio. Pairs with a zero or missing side cannot be logged; they are counted."""
    t, c = pl.col(f"{column}_t").cast(pl.Float64), pl.col(f"{column}_c").cast(pl.Float64)
    usable = pairs.filter((t > 0) & (c > 0))
    excluded = pairs.height - usable.height
    interval = bootstrap_mean(usable, (t.log() - c.log()), settings)
    if interval is None:
        return None, excluded
    ratio = ConfidenceInterval(
        float(np.exp(interval.low)),
        float(np.exp(interval.high)),
        interval.level,
        f"exp({interval.method}) of mean log ratio",
    )
    return ratio, excluded


_TOO_FEW = re.compile(r"needs at least (\d+) (?:values?|observations?|pairs?)\S*,? got (\d+)")


def skipped_reason(message: str) -> str:
    """Why a test was not computed, in words for the reader (not the statistic's argument
    names): "needs at least 2 values, got 0" reads "too few paired runs with a value"."""
    match = _TOO_FEW.search(message)
    if match:
        need, got = match.groups()
        return f"not computed: {got} paired runs have a value here ({need} needed)"
    if "at least one pair" in message:
        return "not computed: no paired runs have a value here"
    if "zero" in message or "identical" in message or "all differences" in message:
        return "not computed: every paired difference is zero"
    return "not computed: these data do not allow it"


def attempt(function: Callable[[], Any]) -> PairedTest:
    # Degenerate data (no pairs, every difference zero) makes a test undefined; say so.
    try:
        result = function()
    except ValueError as error:
        return PairedTest(skipped=str(error), skipped_reason=skipped_reason(str(error)))
    payload: dict[str, Any] = result.to_dict()
    interval = payload.pop("interval", None)
    return PairedTest.model_validate(
        {
            **payload,
            "interval": None if interval is None else Interval.of(result.interval),
        }
    )


def paired_arrays(pairs: pl.DataFrame, column: str) -> tuple[np.ndarray[Any, Any], ...]:
    both = pairs.select(f"{column}_t", f"{column}_c").drop_nulls()
    return (
        both[f"{column}_t"].cast(pl.Float64).to_numpy(),
        both[f"{column}_c"].cast(pl.Float64).to_numpy(),
    )


def positive_pairs(pairs: pl.DataFrame, column: str) -> tuple[np.ndarray[Any, Any], ...]:
    t, c = paired_arrays(pairs, column)
    keep = (t > 0) & (c > 0)
    return t[keep], c[keep]


def paired_tests(pairs: pl.DataFrame, settings: CompareSettings) -> dict[str, PairedTest]:
    """McNemar on success; Wilcoxon and Hodges–Lehmann on duration and tokens; geometric means."""
    tests: dict[str, PairedTest] = {}
    success_t, success_c = paired_arrays(pairs, "success_int")
    tests["mcnemar_success"] = attempt(
        lambda: stats.mcnemar_exact(success_t.astype(bool), success_c.astype(bool))
    )
    # The gate metrics; the Hodges–Lehmann interval costs O(n log n) per bisection step, so it
    # is computed for what decides, not for every token count.
    for label, column in (
        ("duration_seconds", "duration_seconds"),
        ("non_cache_tokens", "non_cache_tokens"),
    ):
        t, c = paired_arrays(pairs, column)
        tests[f"wilcoxon_{label}"] = attempt(partial(stats.wilcoxon_signed_rank, t, c))
        tests[f"hodges_lehmann_{label}"] = attempt(
            partial(stats.hodges_lehmann, t, c, level=settings.level)
        )
    for label, column in (
        ("total_tokens", "total_tokens"),
        ("non_cache_tokens", "non_cache_tokens"),
        ("cost_usd", "total_cost_usd"),
    ):
        t, c = positive_pairs(pairs, column)
        tests[f"geometric_mean_ratio_{label}"] = attempt(
            partial(stats.geometric_mean_ratio, t, c, paired=True, level=settings.level)
        )
    return tests


def power_analysis(
    pairs: pl.DataFrame, control_rate: float | None, settings: CompareSettings
) -> PowerAnalysis:
    """Smallest pass-rate difference these pairs can detect (McNemar design, Connor 1987).

    The unit is the task: `n` tasks, each with K paired repeats (K = the median pairs per
    task), and the repeat factor uses the observed within-task share of the pass-delta variance;
    the discordant share is the observed share of pairs whose outcomes differ. The direction is
    the one with more room from the control's pass rate.
    """
    if pairs.height < 2 or control_rate is None:
        return PowerAnalysis(reason="fewer than 2 pairs")
    per_task = pairs.group_by("task_id").agg(
        pl.len().alias("k"),
        pl.col("pass_delta").cast(pl.Float64).var(ddof=0).alias("within"),
    )
    tasks = per_task.height
    moments = pairs.select(pl.col("pass_delta").cast(pl.Float64).var(ddof=0)).item()
    spread = per_task.select(pl.col("k").median(), pl.col("within").mean()).row(0)
    epochs = max(int(spread[0] or 1), 1)
    total_var = float(moments or 0.0)
    within = float(spread[1] or 0.0)
    within_share = min(max(within / total_var, 0.0), 1.0) if total_var > 0 else 0.0
    discordant = float(pairs.select((pl.col("pass_delta") != 0).mean()).item())
    details: dict[str, Any] = {
        "tasks": tasks,
        "epochs": epochs,
        "within_share": within_share,
        "discordant": discordant,
        "baseline": control_rate,
        "alpha": settings.alpha,
        "power": settings.power,
    }
    try:
        result = stats.mcnemar_minimum_detectable_effect(
            control_rate,
            tasks,
            alpha=settings.alpha,
            power=settings.power,
            discordant=discordant if discordant > 0 else None,
            epochs=epochs,
            within_share=within_share,
            increase=control_rate <= 0.5,
        )
    except ValueError as error:
        return PowerAnalysis(reason=str(error), **details)
    return PowerAnalysis(
        minimum_detectable_pass_delta=abs(result.effect), method=result.method, **details
    )
