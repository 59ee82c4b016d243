"""Cost per sample with a studentized bootstrap interval, and the cost–score Pareto front.

Cost per sample of a stratified design (categories `c` with weights `w_c`, questions the unit):

    θ = Σ_c (w_c / W) · mean_i(x_ci),    SE² = Σ_c (w_c / W)² · s_c² / n_c,    W = Σ_c w_c

where `x_ci` is question i's cost averaged over its epochs (the unit the score resamples:
repeats averaged within question first). The interval is the studentized (bootstrap-t)
interval: questions are resampled with replacement within each category, `t* = (θ* − θ̂) / SE*`,
and each bound is the further of the equal-tailed and the symmetric bootstrap-t bound:

    low  = θ̂ − max(q_{1−α/2}(t*), q_{1−α}(|t*|)) · SE
    high = θ̂ + max(−q_{α/2}(t*),  q_{1−α}(|t*|)) · SE

(Efron & Tibshirani 1993, ch. 12; Hall 1988, "On symmetric bootstrap confidence intervals",
JRSS B 50), with the quantiles taken at the calibrated nominal level `1 − α' = 1 − 0.8 α`
(96% for a 95% interval; Loh 1987, "Calibrating confidence coefficients", JASA 82). The
equal-tailed interval follows the skew of per-sample costs (lognormal-like), the symmetric one
holds the far side when a small sample missed the right tail, and the calibration pays for the
studentized bootstrap's known shortfall at a few questions with heavy tails: alone, the
equal-tailed interval covered 90.7–92% at 20 questions with lognormal σ = 1.
docs/statistics.md has the coverage measured through this code.

The Pareto front (higher score, lower cost): a model is on it when no other model scores at
least as high for at most the cost, one of the two strictly (`on_front`). The published
probability of being on the true front is a posterior (`stats.front`); it replaced the share
of joint bootstrap replicates on the front (too extreme at few questions, docs/statistics.md),
which benchmarks/bench_cost.py keeps as its speed baseline.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from plumbline.stats.arrays import BoolArray, FloatArray, IntArray

DEFAULT_REPLICATES = 2000
#: α' / α: the calibration of the nominal level (module docstring).
CALIBRATION = 0.8
METHOD = (
    "studentized bootstrap over questions (the further of the equal-tailed and symmetric "
    "bootstrap-t bounds at the calibrated level 1 − 0.8α; Efron & Tibshirani 1993, ch. 12; "
    "Hall 1988; Loh 1987)"
)


@dataclass(frozen=True)
class Stratum:
    """One category of one model: each question's mean cost and mean score over its epochs,
    its weight, and the identity of its question set (models with the same `key` and the same
    questions are resampled with the same draws)."""

    costs: FloatArray
    scores: FloatArray
    weight: float
    key: str


@dataclass(frozen=True)
class CostEstimate:
    """Cost per sample (`estimate`), its interval (`low`, `high`; None below 2 questions), the
    level and the standard error."""

    estimate: float
    low: float | None
    high: float | None
    level: float
    standard_error: float


def _weighted(strata: Sequence[Stratum], values: Sequence[Any]) -> FloatArray:
    total = sum(stratum.weight for stratum in strata)
    return np.asarray(
        sum((s.weight / total) * v for s, v in zip(strata, values, strict=True)), np.float64
    )


def _se(strata: Sequence[Stratum], variances: Sequence[Any]) -> FloatArray:
    total = sum(stratum.weight for stratum in strata)
    terms = [
        (s.weight / total) ** 2 * v / s.costs.size for s, v in zip(strata, variances, strict=True)
    ]
    return np.sqrt(np.asarray(sum(terms), np.float64))


def draw_indices(
    keys: Mapping[str, int], replicates: int, rng: np.random.Generator
) -> dict[str, IntArray]:
    """One matrix of resampled question positions (replicates × n) per question set."""
    return {key: rng.integers(0, n, size=(replicates, n)) for key, n in keys.items()}


def cost_per_sample(
    strata: Sequence[Stratum],
    draws: Mapping[str, IntArray],
    level: float = 0.95,
    *,
    floor: float | None = 0.0,
) -> CostEstimate:
    """θ and its bootstrap-t interval (module docstring), resampling each
    stratum's questions with `draws[stratum.key]` (a replicates × n matrix of positions).

    `floor`: the lowest value θ can take (a cost is never negative); None for a difference of
    costs, which can be."""
    estimate = float(_weighted(strata, [s.costs.mean() for s in strata]))
    variances = [s.costs.var(ddof=1) if s.costs.size > 1 else math.nan for s in strata]
    se = float(_se(strata, [np.float64(v) for v in variances]))
    cost_means, cost_vars = [], []
    for stratum in strata:
        picks = draws[stratum.key]
        resampled = stratum.costs[picks]
        cost_means.append(resampled.mean(axis=1))
        cost_vars.append(
            resampled.var(axis=1, ddof=1) if stratum.costs.size > 1 else 0 * picks[:, 0]
        )
    cost_star = _weighted(strata, cost_means)
    if any(s.costs.size < 2 for s in strata) or not math.isfinite(se):
        return CostEstimate(estimate, None, None, level, math.nan)
    if se == 0.0:
        return CostEstimate(estimate, estimate, estimate, level, 0.0)
    se_star = _se(strata, cost_vars)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_star = (cost_star - estimate) / se_star
    # A replicate with SE* = 0 drew one value only: its t* is ±inf (or 0 when θ* = θ̂).
    t_star = np.where(np.isnan(t_star), 0.0, t_star)
    low, high = _bounds(estimate, se, t_star, CALIBRATION * (1.0 - level), floor)
    if not (math.isfinite(low) and math.isfinite(high)):
        # more than α/2 of the replicates drew one value only (a handful of questions): the
        # bootstrap-t cannot bound the cost
        return CostEstimate(estimate, None, None, level, se)
    return CostEstimate(estimate, low, high, level, se)


def _bounds(
    estimate: float, se: float, t_star: FloatArray, alpha: float, floor: float | None
) -> tuple[float, float]:
    """The further of the equal-tailed and the symmetric bootstrap-t bound on each side (module
    docstring), the lower one no lower than `floor` (a cost is never negative)."""
    # ±inf kept as the largest float: interpolating between two infinities gives NaN
    finite = np.clip(t_star, -np.finfo(np.float64).max, np.finfo(np.float64).max)
    upper_t, lower_t = np.quantile(finite, [1 - alpha / 2, alpha / 2])
    symmetric = float(np.quantile(np.abs(finite), 1 - alpha))
    with np.errstate(over="ignore"):
        low = estimate - max(float(upper_t), symmetric) * se
        low = low if floor is None else max(low, floor)
        high = estimate + max(-float(lower_t), symmetric) * se
    if max(float(upper_t), symmetric) >= np.finfo(np.float64).max:
        low = -math.inf
    if max(-float(lower_t), symmetric) >= np.finfo(np.float64).max:
        high = math.inf
    return low, high


def on_front(scores: FloatArray, costs: FloatArray) -> BoolArray:
    """Which points are on the Pareto front (higher score, lower cost), over the last axis:
    `scores` and `costs` are (..., models)."""
    s_i, s_j = scores[..., :, None], scores[..., None, :]
    c_i, c_j = costs[..., :, None], costs[..., None, :]
    dominates = (s_j >= s_i) & (c_j <= c_i) & ((s_j > s_i) | (c_j < c_i))
    result: BoolArray = np.asarray(~dominates.any(axis=-1), dtype=bool)
    return result
