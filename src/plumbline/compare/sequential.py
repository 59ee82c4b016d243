"""`compare --sequential`: the anytime-valid sequential verdict on paired success.

The pairs `(task_id, repeat)` present in both arms are analysed in a seeded random order
(`analysis_order`): sorted by task and repeat, then permuted by `settings.seed`, so the order is
fixed before any outcome is read and is the same whatever order the records come in (file
order, `started_at_utc`, grouped by task). A time order would let the first tasks decide for
the suite: a harness that runs a task's repeats back to back writes them together, and a task
that favours one arm then looks like a suite that does (`stats.sequential`, "Order"). In a
random order every analysed pair is a draw from all the suite's (task, repeat) cells, so the
verdict is about the mean over the suite's tasks. `stats.run_sequential` looks after every pair
and stops at the first decision or at the plan's cap. The plan (planned effect, baseline rate,
within-pair correlation) is fixed by the settings, never tuned on the outcomes being tested.
Under `--sequential` the success gate of the three-gate rule reads the verdict: it holds for
the treatment when the verdict is `better` or `equivalent`, for the control when `worse` or
`equivalent`, and for neither while `undecided`. The result types live in `compare.result`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
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
from plumbline.stats.result import ConfidenceInterval
from plumbline.stats.sequential import (
    INTERVAL_GUARANTEE,
    SequentialResult,
    plan_sequential,
    run_sequential,
)

DEFAULT_EFFECT = 0.10
#: 0.5 is the most conservative baseline rate: it needs the most pairs.
DEFAULT_BASELINE = 0.5


def analysis_order(
    task_ids: Sequence[str], repeats: Sequence[int], seed: int
) -> npt.NDArray[np.int64]:
    """Indices of the pairs in the order they are analysed: sorted by (task, repeat), which
    removes the input order, then a permutation drawn from `seed` (never from the outcomes)."""
    canonical = sorted(range(len(task_ids)), key=lambda i: (task_ids[i], repeats[i]))
    permutation = np.random.default_rng(seed).permutation(len(canonical))
    return np.asarray(canonical, dtype=np.int64)[permutation]


def order_text(seed: int) -> str:
    return f"a random order (seed {seed}) drawn before any outcome, whatever the records' order"


def _ordered_pairs(
    prepared: PreparedRuns, treatment: str, control: str, seed: int
) -> tuple[pl.DataFrame, str]:
    runs = prepared.runs.filter(
        ~pl.col("duplicated") & pl.col("arm").is_in([treatment, control])
    ).select("arm", "pair_key", "task_id", "repeat", "success_int")
    t = runs.filter(pl.col("arm") == treatment).select(
        "pair_key", "task_id", "repeat", pl.col("success_int").alias("t")
    )
    c = runs.filter(pl.col("arm") == control).select("pair_key", pl.col("success_int").alias("c"))
    pairs = t.join(c, on="pair_key", how="inner")
    order = analysis_order(
        [str(task) for task in pairs["task_id"].to_list()],
        [int(repeat) for repeat in pairs["repeat"].to_list()],
        seed,
    )
    return pairs[order.tolist()], order_text(seed)


def _summary(result: SequentialResult, settings: SequentialSettings, order: str) -> str:
    plan = result.plan
    plan_text = (
        f"planned for a {settings.effect:+.0%} pass-rate difference from a {settings.baseline:.0%}"
        f" baseline at alpha {settings.alpha:g}, power {settings.power:.0%}, assuming a "
        f"within-pair correlation of {settings.correlation:g}"
        f"{' (independent arms: the most pairs)' if settings.correlation == 0 else ''}; the "
        f"fixed design needs {plan.fixed_pairs} pairs under the same assumption, the cap is "
        f"{plan.max_pairs}; pairs in {order}"
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
    pairs, order = _ordered_pairs(prepared, treatment, control, settings.seed)
    if pairs.height == 0:
        return None
    plan = plan_sequential(
        settings.baseline,
        settings.effect,
        alpha=settings.alpha,
        power=settings.power,
        margin=settings.margin,
        correlation=settings.correlation,
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
        interval_guarantee=INTERVAL_GUARANTEE,
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
