"""`compare --sequential`: the anytime-valid sequential verdict on paired success, in time order.

Runs are put in the order they happened: by `started_at_utc` when every compared run has one,
else in file order (the files as given, then line). A pair `(task_id, repeat)` arrives when its
second run does; pairs are fed to `stats.run_sequential` in that order, which looks after every
pair and stops at the first decision or at the plan's cap. The plan (planned effect, baseline
rate) is fixed by the settings, never tuned on the outcomes being tested. Under `--sequential`
the success gate of the three-gate rule reads the verdict: it holds for the treatment when the
verdict is `better` or `equivalent`, for the control when `worse` or `equivalent`, and for
neither while `undecided`. The result types live in `compare.result`.
"""

from __future__ import annotations

import polars as pl

from plumbline.compare.decision import gate
from plumbline.compare.metrics import PreparedRuns
from plumbline.compare.result import (
    ArmSummary,
    Gate,
    SequentialComparison,
    SequentialSettings,
    SequentialStep,
)
from plumbline.core.result import Interval
from plumbline.core.timestamps import epoch_seconds
from plumbline.stats.result import ConfidenceInterval
from plumbline.stats.sequential import SequentialResult, plan_sequential, run_sequential

DEFAULT_EFFECT = 0.10
#: 0.5 is the most conservative baseline rate: it needs the most pairs.
DEFAULT_BASELINE = 0.5


def _ordered_pairs(
    prepared: PreparedRuns, treatment: str, control: str
) -> tuple[pl.DataFrame, str]:
    runs = (
        prepared.runs.with_row_index("row")
        .filter(~pl.col("duplicated") & pl.col("arm").is_in([treatment, control]))
        .select("row", "arm", "pair_key", "success_int", "started_at_utc")
    )
    timed = runs.height > 0 and runs["started_at_utc"].null_count() == 0
    if timed:
        # read as `records validate` reads it (`core.timestamps`: a naive time is UTC)
        instants = [epoch_seconds(value) for value in runs["started_at_utc"].to_list()]
        runs = runs.with_columns(pl.Series("when", instants, dtype=pl.Float64))
        timed = runs["when"].null_count() == 0
    order = "started_at_utc" if timed else "file order"
    ranked = runs.sort(["when", "row"] if timed else ["row"]).with_row_index("position")
    t = ranked.filter(pl.col("arm") == treatment).select(
        "pair_key", pl.col("success_int").alias("t"), pl.col("position").alias("pt")
    )
    c = ranked.filter(pl.col("arm") == control).select(
        "pair_key", pl.col("success_int").alias("c"), pl.col("position").alias("pc")
    )
    pairs = (
        t.join(c, on="pair_key", how="inner")
        .with_columns(pl.max_horizontal("pt", "pc").alias("arrival"))
        .sort("arrival")
    )
    return pairs, order


def _summary(result: SequentialResult, settings: SequentialSettings, order: str) -> str:
    plan = result.plan
    plan_text = (
        f"planned for a {settings.effect:+.0%} pass-rate difference from a {settings.baseline:.0%}"
        f" baseline at alpha {settings.alpha:g}, power {settings.power:.0%}; the fixed design "
        f"needs {plan.fixed_pairs} pairs, the cap is {plan.max_pairs}; pairs in {order}"
    )
    if result.verdict in ("better", "worse"):
        head = f"{result.verdict} after {result.stopped_at} pairs"
    elif result.verdict == "equivalent":
        head = f"equivalent within ±{settings.margin:.0%} after {result.stopped_at} pairs"
    elif result.complete:
        head = f"undecided at the cap of {result.stopped_at} pairs"
    else:
        head = (
            f"undecided after all {result.stopped_at} pairs available "
            f"(more pairs may decide, up to {plan.max_pairs})"
        )
    return f"{head} ({plan_text})"


def sequential_comparison(
    prepared: PreparedRuns, treatment: str, control: str, settings: SequentialSettings
) -> SequentialComparison | None:
    """The sequential verdict, or None when no pair exists."""
    pairs, order = _ordered_pairs(prepared, treatment, control)
    if pairs.height == 0:
        return None
    plan = plan_sequential(
        settings.baseline,
        settings.effect,
        alpha=settings.alpha,
        power=settings.power,
        margin=settings.margin,
        max_pairs=settings.max_pairs,
    )
    result = run_sequential(pairs["t"].to_numpy(), pairs["c"].to_numpy(), plan)
    return SequentialComparison(
        verdict=result.verdict,
        pairs_used=result.stopped_at,
        pairs_available=result.pairs_available,
        max_pairs=plan.max_pairs,
        fixed_pairs=plan.fixed_pairs,
        estimate=result.estimate,
        interval=Interval.of(result.interval),
        method=plan.method,
        reason=result.reason,
        complete=result.complete,
        order=order,
        settings=settings,
        summary=_summary(result, settings, order),
        path=[
            SequentialStep(pairs=s.pairs, estimate=s.estimate, low=s.low, high=s.high)
            for s in result.path
        ],
    )


def sequential_gate(
    treatment: ArmSummary, control: ArmSummary, sequential: SequentialComparison | None
) -> Gate:
    """The success gate read from the sequential verdict."""
    verdict = None if sequential is None else sequential.verdict
    interval = None
    if sequential is not None and sequential.interval.low is not None:
        interval = ConfidenceInterval(
            sequential.interval.low,
            sequential.interval.high if sequential.interval.high is not None else 1.0,
            sequential.interval.level,
            sequential.interval.method,
        )
    return gate(
        "success_rate",
        treatment.success_rate,
        control.success_rate,
        verdict in ("better", "equivalent"),
        verdict in ("worse", "equivalent"),
        "sequential verdict on paired success (T − C) is better or equivalent",
        interval,
    )
