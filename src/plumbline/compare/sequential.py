"""`compare --sequential`: the anytime-valid sequential verdict on paired success.

**Order: one that only grows.** The pairs `(task_id, repeat)` present in both arms are analysed
round by round: a *round* is every task's pair at one repeat index, rounds go in repeat order
(the order a harness adds them), and within a round the pairs are sorted by a seeded random
key of `(seed, repeat, task_id)` alone (`pair_key`), so a pair's place never depends on which
other pairs are present, on the records' file order or on `started_at_utc`. A round is
*complete* when every task seen in either arm has a record in both arms at that repeat (an
infrastructure failure counts as recorded: the trial ran; its pair has no outcome and is
skipped, as in `compare`). Rounds after the last complete one are held back until a later
round completes (`analysis_rounds`); earlier rounds missing a pair (lost trials) are analysed
with the pairs they have. So re-running on a superset of the records (more rounds, or the
held-back round completed) gives a path that starts with the earlier path, and looking after
every round is one sequential analysis looked at after some of its pairs: the anytime
guarantee covers any number of re-runs (`benchmarks/bench_sequential_looks.py`). The one
record that can change an earlier path is a late record for a round already analysed (a
retried trial); the summary counts the pairs held back.

Each round holds every task once, so every stretch of the path spreads over the suite's tasks
and the verdict is about the mean over the suite's tasks, not about the tasks that happen to
come first (a time order grouped by task lets the first tasks decide: `stats.sequential`,
"Order"). `stats.run_sequential` looks after every pair and stops at the first decision or at
the plan's cap. The plan (planned effect, baseline rate, within-pair correlation) is fixed by
the settings, never tuned on the outcomes being tested. Under `--sequential` the success gate
of the three-gate rule reads the verdict: it holds for the treatment when the verdict is
`better` or `equivalent`, for the control when `worse` or `equivalent`, and for neither while
`undecided`. The result types live in `compare.result`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

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
    SequentialPlan,
    SequentialResult,
    plan_sequential,
    run_sequential,
)

DEFAULT_EFFECT = 0.10
#: 0.5 is the most conservative baseline rate: it needs the most pairs.
DEFAULT_BASELINE = 0.5


def pair_key(seed: int, repeat: int, task_id: str) -> int:
    """The seeded random key that orders a pair within its round: a hash of the seed, the
    repeat and the task alone, so adding other pairs never moves it."""
    text = f"{seed}\x00{repeat}\x00{task_id}".encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")


def analysis_order(
    task_ids: Sequence[str], repeats: Sequence[int], seed: int, *, last_round: int | None = None
) -> npt.NDArray[np.int64]:
    """Indices of the pairs in the order they are analysed: rounds (repeat indices) up to
    `last_round` (None: all) in increasing order, each round's pairs by `pair_key`. A pair's
    position depends only on its own task and repeat and on the pairs of earlier rounds, so
    the order of a superset of pairs starts with the order of the subset."""
    kept = [i for i in range(len(task_ids)) if last_round is None or int(repeats[i]) <= last_round]
    kept.sort(
        key=lambda i: (int(repeats[i]), pair_key(seed, int(repeats[i]), task_ids[i]), task_ids[i])
    )
    return np.asarray(kept, dtype=np.int64)


@dataclass(frozen=True)
class Rounds:
    """Which rounds are analysed: up to `last_complete` (None: none complete yet); `held_back`
    the rounds after it, waiting to complete, and `missing` what the first of them lacks."""

    last_complete: int | None
    held_back: list[int]
    missing: str | None


def analysis_rounds(recorded: pl.DataFrame, treatment: str, control: str) -> Rounds:
    """The last complete round in `recorded` (columns `arm`, `task_id`, `repeat`: every trial
    recorded, outcome or not): the largest repeat at which every task seen in either arm has a
    record in both arms."""
    runs = recorded.filter(pl.col("arm").is_in([treatment, control])).select(
        "arm", "task_id", "repeat"
    )
    tasks = runs["task_id"].n_unique()
    per_round = runs.unique().group_by("repeat").agg(pl.len().alias("records")).sort("repeat")
    complete = per_round.filter(pl.col("records") == 2 * tasks)["repeat"].to_list()
    last = int(complete[-1]) if complete else None
    held = [int(r) for r in per_round["repeat"].to_list() if last is None or r > last]
    missing = None
    if held:
        present = runs.filter(pl.col("repeat") == held[0]).unique()
        for arm in (treatment, control):
            seen = set(present.filter(pl.col("arm") == arm)["task_id"].to_list())
            lacking = sorted(set(runs["task_id"].to_list()) - seen)
            if lacking:
                missing = f"{lacking[0]} has no {arm} record at repeat {held[0]}"
                break
    return Rounds(last, held, missing)


def order_text(seed: int, rounds: Rounds | None = None, held_pairs: int = 0) -> str:
    text = (
        f"complete rounds (every task's pair at one repeat) in repeat order, each round in a "
        f"random order (seed {seed}) drawn before any outcome, whatever the records' order"
    )
    if rounds is not None and rounds.held_back:
        first, last = rounds.held_back[0], rounds.held_back[-1]
        span = f"repeat {first}" if first == last else f"repeats {first}–{last}"
        text += (
            f"; {held_pairs} pairs of {span} held back until that round completes "
            f"({rounds.missing})"
        )
    return text


def _recorded(prepared: PreparedRuns) -> pl.DataFrame:
    recorded = prepared.runs.select("arm", "task_id", "repeat")
    if prepared.infra_runs is not None:
        recorded = pl.concat([recorded, prepared.infra_runs.select(recorded.columns)])
    return recorded


def _ordered_pairs(
    prepared: PreparedRuns, treatment: str, control: str, seed: int
) -> tuple[pl.DataFrame, str, int]:
    """The pairs in analysis order, the order's description and the pairs held back."""
    runs = prepared.runs.filter(
        ~pl.col("duplicated") & pl.col("arm").is_in([treatment, control])
    ).select("arm", "pair_key", "task_id", "repeat", "success_int")
    t = runs.filter(pl.col("arm") == treatment).select(
        "pair_key", "task_id", "repeat", pl.col("success_int").alias("t")
    )
    c = runs.filter(pl.col("arm") == control).select("pair_key", pl.col("success_int").alias("c"))
    pairs = t.join(c, on="pair_key", how="inner")
    rounds = analysis_rounds(_recorded(prepared), treatment, control)
    if rounds.last_complete is None:
        order = np.zeros(0, dtype=np.int64)
    else:
        order = analysis_order(
            [str(task) for task in pairs["task_id"].to_list()],
            [int(repeat) for repeat in pairs["repeat"].to_list()],
            seed,
            last_round=rounds.last_complete,
        )
    held = pairs.height - len(order)
    return pairs[order.tolist()], order_text(seed, rounds, held), held


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
            f"undecided after all {result.stopped_at} pairs of the complete rounds "
            f"(more pairs may decide, up to {plan.max_pairs})"
        )
    return f"{head} ({plan_text})"


def _no_complete_round(
    plan: SequentialPlan, settings: SequentialSettings, order: str, held: int
) -> SequentialComparison:
    """Undecided with no pair analysed: every pair is in a round still incomplete."""
    return SequentialComparison(
        verdict="undecided",
        pairs_used=0,
        pairs_available=held,
        pairs_held_back=held,
        max_pairs=plan.max_pairs,
        fixed_pairs=plan.fixed_pairs,
        estimate=0.0,
        interval=Interval.of(ConfidenceInterval(-1.0, 1.0, 1 - plan.alpha, plan.method)),
        interval_guarantee=INTERVAL_GUARANTEE,
        method=plan.method,
        reason="data",
        complete=False,
        order=order,
        settings=settings,
        summary=f"undecided: no round is complete yet (pairs in {order})",
        path=[],
    )


def sequential_comparison(
    prepared: PreparedRuns, treatment: str, control: str, settings: SequentialSettings
) -> SequentialComparison | None:
    """The sequential verdict, or None when no pair exists."""
    pairs, order, held = _ordered_pairs(prepared, treatment, control, settings.seed)
    if pairs.height + held == 0:
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
    if pairs.height == 0:
        return _no_complete_round(plan, settings, order, held)
    result = run_sequential(pairs["t"].to_numpy(), pairs["c"].to_numpy(), plan)
    return SequentialComparison(
        verdict=result.verdict,
        pairs_used=result.stopped_at,
        pairs_available=result.pairs_available + held,
        pairs_held_back=held,
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
