"""Each metric's change from a baseline run, with its interval and the smallest change it could
detect (`reliability.regression` reads them): the scores' paired t over shared prompts, the
latency percentiles' stratified bootstrap, the error rate's Newcombe interval at the effective
sample size of bursts, and (when asked for) cost per trial's paired bootstrap-t over prompts."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence

import numpy as np
from scipy import stats as sps

from plumbline.records.trial_record import TrialRecord
from plumbline.reliability.bursts import design_effect, failures_in_time, wilson_effective
from plumbline.reliability.result import ReliabilityInterval
from plumbline.stats.arrays import BoolArray
from plumbline.stats.cost import METHOD as COST_METHOD
from plumbline.stats.cost import Stratum, cost_per_sample, draw_indices
from plumbline.stats.mover import mover_difference

#: The lowest simulated coverage of a latency change's bootstrap interval (nominal 99.17%):
#: 90.3% for p95 at 5 prompts × 3 trials, identical runs with lognormal latencies σ 2.5, 300
#: simulated pairs (benchmarks/bench_reliability_regression.py; 96.3% for p50 at 60 × 3, σ 1.5).
LATENCY_CHANGE_COVERAGE = 0.903

POWER = 0.8


def detectable_change(half_width: float, critical: float) -> float:
    standard_error = half_width / critical if critical > 0 else math.nan
    return float((critical + sps.norm.ppf(POWER)) * standard_error)


#: The possible range of each score's change, current − baseline: consistency and the
#: performance heuristic lie in [0, 1], semantic agreement (a mean cosine similarity) in
#: [−1, 1].
CHANGE_RANGE: dict[str, tuple[float, float]] = {
    "consistency": (-1.0, 1.0),
    "agreement": (-2.0, 2.0),
    "performance": (-1.0, 1.0),
}


def paired_scores(
    baseline: Mapping[str, float],
    current: Mapping[str, float],
    level: float,
    trials: int,
    bounds: tuple[float, float],
) -> tuple[float | None, float | None, float | None, ReliabilityInterval | None, float | None]:
    """Means on the prompts with both values, their difference, its paired t interval
    intersected with the change's possible range `bounds`.

    The t interval's coverage holds (simulated 98.7–100% at 99.17%, docs/statistics.md); at a
    few prompts its t quantile is large (76.4 with 2 prompts at 99.17%) and it reaches past
    what a change of scores can be. The true change always lies in `bounds`, so the
    intersection covers it exactly when the t interval does: the method is kept, only the
    impossible part is dropped (Mandelkern 2002, Statist. Sci. 17(2): intervals for bounded
    parameters)."""
    shared = sorted(set(baseline) & set(current))
    if not shared:
        return None, None, None, None, None
    differences = np.array([current[p] - baseline[p] for p in shared])
    old = float(np.mean([baseline[p] for p in shared]))
    new = float(np.mean([current[p] for p in shared]))
    estimate = float(np.mean(differences))
    if len(shared) < 2:
        return old, new, estimate, None, None
    sd = float(np.std(differences, ddof=1))
    critical = float(sps.t.ppf(0.5 + level / 2, len(shared) - 1))
    half = critical * sd / math.sqrt(len(shared))
    lowest, highest = bounds
    bounded = estimate - half < lowest or estimate + half > highest
    interval = ReliabilityInterval(
        low=max(lowest, estimate - half),
        high=min(highest, estimate + half),
        level=level,
        method="paired t over shared prompts (per-prompt differences, trials averaged first)"
        + (f", within the possible change [{lowest:g}, {highest:g}]" if bounded else ""),
        prompts=len(shared),
        trials=trials,
        coverage="guaranteed",
    )
    return old, new, estimate, interval, detectable_change(half, critical)


def strata(records: Sequence[TrialRecord], prompts: Sequence[str]) -> list[np.ndarray]:
    by_prompt: dict[str, list[float]] = defaultdict(list)
    for record in records:
        if record.ok and record.latency_seconds is not None and record.prompt_id in prompts:
            by_prompt[record.prompt_id].append(float(record.latency_seconds))
    return [np.asarray(by_prompt[p]) for p in sorted(by_prompt)]


def stratified_percentiles(
    strata: list[np.ndarray], q: float, rng: np.random.Generator, resamples: int
) -> np.ndarray:
    draws = [s[rng.integers(0, s.size, (resamples, s.size))] for s in strata]
    return np.asarray(np.percentile(np.concatenate(draws, axis=1), q, axis=1), dtype=np.float64)


def latency_change(
    baseline: Sequence[TrialRecord],
    current: Sequence[TrialRecord],
    prompts: Sequence[str],
    q: float,
    level: float,
    seed: int,
    resamples: int,
) -> tuple[float | None, float | None, float | None, ReliabilityInterval | None, float | None]:
    old_strata, new_strata = strata(baseline, prompts), strata(current, prompts)
    old_values = np.concatenate(old_strata) if old_strata else np.array([])
    new_values = np.concatenate(new_strata) if new_strata else np.array([])
    if old_values.size < 2 or new_values.size < 2:
        return None, None, None, None, None
    old = float(np.percentile(old_values, q))
    new = float(np.percentile(new_values, q))
    estimate = new - old
    rng = np.random.default_rng(seed)
    boots = stratified_percentiles(new_strata, q, rng, resamples) - stratified_percentiles(
        old_strata, q, rng, resamples
    )
    alpha = 1 - level
    low, high = (float(v) for v in np.quantile(boots, [alpha / 2, 1 - alpha / 2]))
    interval = ReliabilityInterval(
        low=min(low, estimate),
        high=max(high, estimate),
        level=level,
        method="percentile bootstrap of the difference (trials resampled within each prompt of "
        "each run), approximate",
        prompts=len(prompts),
        trials=int(old_values.size + new_values.size),
        coverage="approximate",
        simulated_coverage=LATENCY_CHANGE_COVERAGE,
    )
    critical = float(sps.norm.ppf(0.5 + level / 2))
    return old, new, estimate, interval, detectable_change((high - low) / 2, critical)


def error_change(
    baseline: Sequence[TrialRecord],
    current: Sequence[TrialRecord],
    prompts: Sequence[str],
    level: float,
) -> Change:
    """The error rate's change in percentage points: Newcombe's hybrid score interval (MOVER
    over Wilson intervals) at the effective sample sizes `n / deff`, deff the design effect of
    bursts of failures seen in the blocks of consecutive trials (`reliability.bursts`; 1 when
    failures are spread as independent trials would spread them)."""
    old_failed, new_failed = in_time(baseline, prompts), in_time(current, prompts)
    if not old_failed.size or not new_failed.size:
        return None, None, None, None, None
    design = design_effect(old_failed, new_failed)
    z = float(sps.norm.ppf(0.5 + level / 2))
    old_share, new_share = float(old_failed.mean()), float(new_failed.mean())
    old_low, old_high = wilson_effective(int(old_failed.sum()), old_failed.size, design, z)
    new_low, new_high = wilson_effective(int(new_failed.sum()), new_failed.size, design, z)
    mover = mover_difference(new_share, new_low, new_high, old_share, old_low, old_high)
    estimate = 100 * float(mover.estimate)
    low, high = 100 * float(mover.low), 100 * float(mover.high)
    interval = ReliabilityInterval(
        low=low,
        high=high,
        level=level,
        method="Newcombe hybrid score (MOVER over Wilson intervals at the effective sample "
        f"size n / {design:.3g}, the design effect of bursts of failures in blocks of "
        "consecutive trials), percentage points",
        prompts=len(prompts),
        trials=int(old_failed.size + new_failed.size),
        coverage="guaranteed",
    )
    detectable = detectable_change((high - low) / 2, z)
    return 100 * old_share, 100 * new_share, estimate, interval, detectable


Change = tuple[float | None, float | None, float | None, ReliabilityInterval | None, float | None]


def in_time(records: Sequence[TrialRecord], prompts: Sequence[str]) -> BoolArray:
    wanted = set(prompts)
    return failures_in_time([r for r in records if r.prompt_id in wanted])


def cost_change(
    baseline: Mapping[str, Sequence[float]],
    current: Mapping[str, Sequence[float]],
    level: float,
    seed: int,
    resamples: int,
) -> Change:
    """Cost per trial's change in USD, on the prompts with priced trials in both runs
    (`baseline`, `current`: each prompt's trial costs).

    With `d_p = mean_t c_pt(current) − mean_t c_pt(baseline)` over those k prompts, the change
    is `(1/k) Σ_p d_p` (the published cost per trial: trials averaged within prompt first),
    and its interval the studentized bootstrap over prompts of the `d_p` that prices the
    leaderboard's cost (`stats.cost.cost_per_sample`, without its floor at 0: a change can be
    negative; Efron & Tibshirani 1993, ch. 12; Hall 1988; Loh 1987). The prompt is the unit,
    as for the scores: a prompt's two runs are paired, and resampling prompts carries both the
    trials' spread and the prompts'. Approximate (heavy-tailed costs, few prompts)."""
    shared = sorted(p for p in set(baseline) & set(current) if baseline[p] and current[p])
    if not shared:
        return None, None, None, None, None
    old_means = np.array([float(np.mean(baseline[p])) for p in shared])
    new_means = np.array([float(np.mean(current[p])) for p in shared])
    differences = new_means - old_means
    old, new = float(old_means.mean()), float(new_means.mean())
    estimate = float(differences.mean())
    trials = sum(len(baseline[p]) + len(current[p]) for p in shared)
    if len(shared) < 2:
        return old, new, estimate, None, None
    stratum = Stratum(differences, np.zeros(len(shared)), 1.0, "prompts")
    draws = draw_indices({"prompts": len(shared)}, resamples, np.random.default_rng(seed))
    found = cost_per_sample([stratum], draws, level, floor=None)
    if found.low is None or found.high is None:
        return old, new, estimate, None, None
    interval = ReliabilityInterval(
        low=found.low,
        high=found.high,
        level=level,
        method=f"{COST_METHOD.replace('questions', 'prompts')} of the paired per-prompt "
        "differences (trials averaged within prompt first), approximate",
        prompts=len(shared),
        trials=trials,
        # approximate: 120 of 120 no-change intervals held 0 at 8 and 20 prompts
        # (benchmarks/bench_regression_cost.py), too few designs to claim a figure
        coverage="approximate",
    )
    critical = float(sps.norm.ppf(0.5 + level / 2))
    return old, new, estimate, interval, detectable_change((found.high - found.low) / 2, critical)
