"""`compare --sequential`: the anytime-valid sequential verdict on paired success, in time order.

Runs are put in the order they happened: by `started_at_utc` when every compared run has one,
else in file order (the files as given, then line). A pair `(task_id, repeat)` arrives when its
second run does; pairs are fed to `stats.run_sequential` in that order, which looks after every
pair and stops at the first decision or at the plan's cap. The plan (planned effect, baseline
rate) is fixed by the settings, never tuned on the outcomes being tested. Under `--sequential`
the success gate of the three-gate rule reads the verdict: it holds for the treatment when the
verdict is `better` or `equivalent`, for the control when `worse` or `equivalent`, and for
neither while `undecided`.
"""

from __future__ import annotations

from typing import Literal

import polars as pl
from pydantic import Field

from plumbline.compare.decision import Gate, gate
from plumbline.compare.metrics import ArmSummary, PreparedRuns
from plumbline.result import Interval, ResultModel, unit_field
from plumbline.stats.result import ConfidenceInterval
from plumbline.stats.sequential import SequentialResult, plan_sequential, run_sequential

DEFAULT_EFFECT = 0.10
#: 0.5 is the most conservative baseline rate: it needs the most pairs.
DEFAULT_BASELINE = 0.5

Verdict = Literal["better", "worse", "equivalent", "undecided"]


class SequentialSettings(ResultModel):
    """The sequential plan's inputs (stated in every view)."""

    effect: float = unit_field(
        "Planned pass-rate difference the design is powered for.", "proportion", default=0.10
    )
    baseline: float = unit_field(
        "Assumed control pass rate for planning (0.5 is the most conservative).",
        "proportion",
        default=0.5,
    )
    alpha: float = unit_field("Error rate over all looks.", "probability", default=0.05)
    power: float = unit_field("Planned power at the planned effect.", "probability", default=0.8)
    margin: float | None = unit_field(
        "Equivalence margin on the pass-rate difference (None: no equivalence verdict).",
        "proportion",
        default=None,
    )
    max_pairs: int | None = unit_field(
        "The cap on pairs, when set (None: the smallest reaching the planned power).",
        "count",
        default=None,
    )


class SequentialStepModel(ResultModel):
    """The confidence sequence after `pairs` pairs."""

    pairs: int = unit_field("Pairs seen.", "count")
    estimate: float = unit_field("Mean pass-rate difference T − C so far.", "proportion")
    low: float = unit_field("Lower bound of the confidence sequence.", "proportion")
    high: float = unit_field("Upper bound of the confidence sequence.", "proportion")


class SequentialComparison(ResultModel):
    """The sequential verdict on paired success (treatment − control)."""

    verdict: Verdict = Field(
        description="`better`/`worse`: the confidence sequence excludes 0; `equivalent`: it "
        "lies inside ±margin; `undecided`: no decision by the cap or with the pairs available."
    )
    pairs_used: int = unit_field("Pairs seen when the comparison stopped.", "count")
    pairs_available: int = unit_field("Pairs in the records.", "count")
    max_pairs: int = unit_field("The cap: the design stops here at the latest.", "count")
    fixed_pairs: int = unit_field(
        "Pairs the fixed design needs for the same effect, baseline, alpha and power "
        "(`plumbline power --paired`).",
        "count",
    )
    estimate: float = unit_field("Mean pass-rate difference at the stop.", "proportion")
    interval: Interval = Field(description="The confidence sequence at the stop.")
    method: str
    reason: str = Field(
        description="`boundary`, `equivalence`, `cap`, or `data` (the records ran out first)."
    )
    complete: bool = Field(
        description="False when the records ran out before a decision or the cap."
    )
    order: str = Field(description="How the pairs were put in time order.")
    settings: SequentialSettings
    summary: str = Field(description="The verdict in one sentence.")
    path: list[SequentialStepModel] = Field(
        description="The confidence sequence after every pair up to the stop."
    )


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
        instant = pl.col("started_at_utc").str.to_datetime(time_zone="UTC", strict=False)
        runs = runs.with_columns(instant.alias("when"))
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
            SequentialStepModel(pairs=s.pairs, estimate=s.estimate, low=s.low, high=s.high)
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
