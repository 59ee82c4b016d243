"""Ranking with tie groups: neighbours whose overall difference is not significant share a group.

For each pair of adjacent models (sorted by overall), the overall difference A − B gets an
interval that respects its range [−1, 1], built category by category and combined by MOVER:

- a binary category (every shared question scored 0 or 1) the two models share questions in:
  Newcombe's (1998) paired interval, method 10 (Wilson intervals of both proportions on the
  shared questions, combined with the corrected phi of the paired 2×2 table);
- any other category with at least 2 shared questions: the MOVER difference of the two models'
  category intervals on the shared questions (`scores.category_bounds`), with the Pearson
  correlation of their question means as r (Zou & Donner 2008);
- a category only one model has: that model's score and interval (the other's is a fixed 0);
- a category both have but that shares fewer than 2 questions (a third-party task shuffled
  without a fixed random seed): the two category intervals combined as independent (r = 0), flagged
  `unpaired` and reported as a problem, never silently;
- across categories: `Δ = Σ w_c Δ_c` with `L = Δ − √Σ w_c²(Δ_c − L_c)²`,
  `U = Δ + √Σ w_c²(U_c − Δ_c)²` (Newcombe 2011).

The p-value is the same interval inverted: the smallest α at which the (1 − α) interval excludes
0 (found by root finding on the level), so `p < 0.05` exactly when the 95% interval excludes 0.
The p-values of the adjacent pairs are Holm-corrected together; a pair is tied when the
corrected p is at least α = 0.05, and a new group starts below each significant gap.

SA Bench's own reading is reported beside it: models within 5 points of overall are
"statistically equivalent" (its "Interpreting Close Scores"), chained the same way.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
from scipy import optimize

from plumbline.core.result import Interval
from plumbline.leaderboard.result import AdjacentPair
from plumbline.leaderboard.scores import (
    LEVEL,
    CategoryScore,
    ModelScores,
    category_bounds,
    category_bounds_batch,
)
from plumbline.leaderboard.suite import Suite
from plumbline.stats import holm, ppi_mean_difference
from plumbline.stats.arrays import FloatArray
from plumbline.stats.mover import mover_difference, mover_sum, paired_proportion_difference

ALPHA = 1 - LEVEL
#: SA Bench's "Interpreting Close Scores": overall scores within 5 points are equivalent.
SA_BENCH_EQUIVALENCE = 0.05
#: The smallest p-value reported: the interval still excludes 0 at level 1 − P_FLOOR.
P_FLOOR = 1e-12
MINIMUM_SHARED = 2

PartKind = Literal["paired", "unpaired", "one model", "neither"]
DIFFERENCE_METHOD = (
    "paired MOVER over shared questions (Newcombe 1998 method 10 for binary categories), "
    "MOVER across categories (Newcombe 2011); p by inverting the interval, Holm across "
    "adjacent pairs"
)

Bounds = Callable[[float], tuple[float, float]]


@dataclass(frozen=True)
class CategoryDifference:
    """One category's part of A − B: the difference, how it was formed, and its bounds."""

    key: str
    difference: float
    shared: int
    kind: PartKind
    bounds: Bounds | None  # level → (low, high); None when not estimable (one question)


@dataclass(frozen=True)
class Difference:
    """The weighted overall difference A − B with its interval in [−1, 1]."""

    difference: float
    low: float | None
    high: float | None
    level: float
    parts: tuple[CategoryDifference, ...]

    @property
    def shared_questions(self) -> dict[str, int]:
        return {part.key: part.shared for part in self.parts}

    @property
    def unpaired(self) -> list[str]:
        return [part.key for part in self.parts if part.kind == "unpaired"]


def _fixed(value: float) -> Bounds:
    return lambda level: (value, value)


def _interval_of(score: CategoryScore, means: np.ndarray[Any, Any]) -> Bounds | None:
    if means.size < 2 and not np.all((means == 0.0) | (means == 1.0)):
        return None

    def bounds(level: float) -> tuple[float, float]:
        low, high, _ = category_bounds(means, level)
        return low, high

    return bounds


def _one_model(key: str, present: CategoryScore, sign: float) -> CategoryDifference:
    inner = _level_bounds(present)
    value = present.contribution
    if inner is None:
        return CategoryDifference(key, sign * value, 0, "one model", None)

    def bounds(level: float) -> tuple[float, float]:
        low, high = inner(level)
        return (low, high) if sign > 0 else (-high, -low)

    return CategoryDifference(key, sign * value, 0, "one model", bounds)


def paired_bounds_batch(
    x: FloatArray, y: FloatArray, level: float = LEVEL
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Paired A − B over the same n questions, one category per row: (differences, lows, highs).

    Rows where both models' question means are all 0 or 1: Newcombe's (1998) method 10 on the
    paired 2×2 table. Other rows: the MOVER difference of the two category intervals
    (`scores.category_bounds_batch`) with the Pearson correlation of the question means as r
    (0 when either is constant). Bounds lie in [−1, 1]. The core of `category_difference`.
    """
    a = np.atleast_2d(np.asarray(x, dtype=np.float64))
    b = np.atleast_2d(np.asarray(y, dtype=np.float64))
    n = a.shape[-1]
    difference = a.mean(axis=-1) - b.mean(axis=-1)
    binary = np.all((a == 0) | (a == 1), axis=-1) & np.all((b == 0) | (b == 1), axis=-1)
    both = np.sum((a == 1) & (b == 1), axis=-1)
    only_a = np.sum((a == 1) & (b == 0), axis=-1)
    only_b = np.sum((a == 0) & (b == 1), axis=-1)
    newcombe = paired_proportion_difference(
        both, only_a, only_b, n - both - only_a - only_b, level=level
    )
    la, ua, _ = category_bounds_batch(a, level)
    lb, ub, _ = category_bounds_batch(b, level)
    ca, cb = a - a.mean(axis=-1, keepdims=True), b - b.mean(axis=-1, keepdims=True)
    denominator = np.sqrt(np.sum(ca * ca, axis=-1) * np.sum(cb * cb, axis=-1))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(denominator > 0, np.sum(ca * cb, axis=-1) / denominator, 0.0)
    mover = mover_difference(a.mean(axis=-1), la, ua, b.mean(axis=-1), lb, ub, r)
    low = np.where(binary, newcombe.low, mover.low)
    high = np.where(binary, newcombe.high, mover.high)
    low = np.clip(np.minimum(low, difference), -1.0, 1.0)
    high = np.clip(np.maximum(high, difference), -1.0, 1.0)
    return difference, low, high


def _paired(key: str, x: FloatArray, y: FloatArray) -> CategoryDifference:
    difference = float(x.mean() - y.mean())

    def bounds(level: float) -> tuple[float, float]:
        _, low, high = paired_bounds_batch(x[None, :], y[None, :], level)
        return float(low[0]), float(high[0])

    return CategoryDifference(key, difference, int(x.size), "paired", bounds)


def _level_bounds(score: CategoryScore) -> Bounds | None:
    """A category's interval at any level: PPI's when human labels corrected it."""
    correction = score.correction
    if correction is not None:

        def corrected(level: float) -> tuple[float, float]:
            interval = correction.estimate(level).interval
            return interval.low, interval.high

        return corrected
    return _interval_of(score, score.question_means)


def _ppi_difference(key: str, a: CategoryScore, b: CategoryScore) -> CategoryDifference:
    """A − B when human labels corrected either model: paired PPI on the questions both
    have labelled (and both judged) when there are at least 2 and an unlabelled one; otherwise
    the two category intervals combined as independent."""
    ca, cb = a.correction, b.correction
    if ca is not None and cb is not None:
        labelled = np.intersect1d(ca.labelled, cb.labelled)
        unlabelled = np.intersect1d(ca.unlabelled, cb.unlabelled)
        if labelled.size >= MINIMUM_SHARED and unlabelled.size >= 1:
            ha = ca.human[np.searchsorted(ca.labelled, labelled)]
            hb = cb.human[np.searchsorted(cb.labelled, labelled)]
            fa = a.question_means[np.searchsorted(a.questions, labelled)]
            fb = b.question_means[np.searchsorted(b.questions, labelled)]
            ua = a.question_means[np.searchsorted(a.questions, unlabelled)]
            ub = b.question_means[np.searchsorted(b.questions, unlabelled)]
            point = ppi_mean_difference(ha, hb, fa, fb, ua, ub)

            def paired(level: float) -> tuple[float, float]:
                result = ppi_mean_difference(ha, hb, fa, fb, ua, ub, level=level)
                return result.interval.low, result.interval.high

            shared = int(labelled.size + unlabelled.size)
            return CategoryDifference(key, point.statistic, shared, "paired", paired)
    left, right = _level_bounds(a), _level_bounds(b)
    pa, pb = a.contribution, b.contribution
    shared = int(np.intersect1d(a.questions, b.questions).size)
    if left is None or right is None:
        return CategoryDifference(key, pa - pb, shared, "unpaired", None)

    def independent(level: float) -> tuple[float, float]:
        la, ua_ = left(level)
        lb, ub_ = right(level)
        result = mover_difference(pa, la, ua_, pb, lb, ub_, 0.0)
        return max(float(result.low), -1.0), min(float(result.high), 1.0)

    kind: PartKind = "paired" if shared >= MINIMUM_SHARED else "unpaired"
    return CategoryDifference(key, pa - pb, shared, kind, independent)


def category_difference(key: str, a: CategoryScore, b: CategoryScore) -> CategoryDifference:
    """A − B in one category: paired over shared questions when there are at least 2."""
    if not (a.missing or b.missing) and (a.correction is not None or b.correction is not None):
        return _ppi_difference(key, a, b)
    if a.missing and b.missing:
        return CategoryDifference(key, 0.0, 0, "neither", _fixed(0.0))
    if a.missing or b.missing:
        return _one_model(key, b, -1.0) if a.missing else _one_model(key, a, 1.0)
    common, ia, ib = np.intersect1d(a.questions, b.questions, return_indices=True)
    if common.size >= MINIMUM_SHARED:
        return _paired(key, a.question_means[ia], b.question_means[ib])
    # Too few shared questions to pair: the two category intervals as independent (r = 0).
    left, right = _interval_of(a, a.question_means), _interval_of(b, b.question_means)
    difference = a.contribution - b.contribution
    if left is None or right is None:
        return CategoryDifference(key, difference, int(common.size), "unpaired", None)
    pa, pb = a.contribution, b.contribution

    def bounds(level: float) -> tuple[float, float]:
        la, ua = left(level)
        lb, ub = right(level)
        result = mover_difference(pa, la, ua, pb, lb, ub, 0.0)
        return max(float(result.low), -1.0), min(float(result.high), 1.0)

    return CategoryDifference(key, difference, int(common.size), "unpaired", bounds)


def combine_differences(
    differences: Any, lows: Any, highs: Any, weights: Any
) -> tuple[FloatArray, FloatArray]:
    """MOVER bounds of `Σ w_c Δ_c` over the last axis, clipped to [−1, 1] (rounding only):
    `L = Δ − √Σ w²(Δ_c − L_c)²`, `U = Δ + √Σ w²(U_c − Δ_c)²` (Newcombe 2011)."""
    result = mover_sum(differences, lows, highs, weights)
    return np.clip(result.low, -1.0, 1.0), np.clip(result.high, -1.0, 1.0)


def _combine(
    weights: list[float], parts: list[CategoryDifference], level: float
) -> tuple[float, float]:
    estimates, lows, highs = [], [], []
    for part in parts:
        assert part.bounds is not None
        low, high = part.bounds(level)
        estimates.append(part.difference)
        lows.append(min(low, part.difference))
        highs.append(max(high, part.difference))
    low_array, high_array = combine_differences(estimates, lows, highs, weights)
    return float(low_array), float(high_array)


def pairwise_difference(
    suite: Suite, a: ModelScores, b: ModelScores, *, level: float = LEVEL
) -> Difference:
    """The weighted overall difference A − B over shared questions, with its MOVER interval."""
    weights = suite.weights
    parts = tuple(
        category_difference(key, a.categories[key], b.categories[key]) for key in suite.keys
    )
    difference = math.fsum(weights[p.key] * p.difference for p in parts)
    if any(part.bounds is None for part in parts):
        return Difference(difference, None, None, level, parts)
    low, high = _combine([weights[p.key] for p in parts], list(parts), level)
    return Difference(difference, min(low, difference), max(high, difference), level, parts)


def difference_pvalue(suite: Suite, difference: Difference) -> float | None:
    """Two-sided p-value of `difference` = 0 by inverting its interval.

    The smallest α at which the (1 − α) interval excludes 0: the root in the level of the bound
    nearest 0 (a bound moves away from the estimate as the level grows). None when the
    difference has no interval.
    """
    if difference.low is None or any(part.bounds is None for part in difference.parts):
        return None
    if abs(difference.difference) < 1e-12:
        return 1.0
    weights = [suite.weights[part.key] for part in difference.parts]
    parts = list(difference.parts)
    positive = difference.difference > 0

    def nearest(level: float) -> float:
        low, high = _combine(weights, parts, level)
        return low if positive else -high

    top = 1 - P_FLOOR
    if nearest(top) > 0:
        return P_FLOOR
    bottom = 1e-6
    if nearest(bottom) <= 0:
        return 1.0
    level = float(optimize.brentq(nearest, bottom, top, xtol=1e-10))
    return min(max(1 - level, P_FLOOR), 1.0)


def rank_models(
    suite: Suite, models: list[ModelScores]
) -> tuple[list[ModelScores], list[AdjacentPair]]:
    """Sort by overall, test adjacent pairs, and assign rank, tie group and SA Bench group."""
    ordered = sorted(models, key=lambda m: (-m.overall, m.model))
    differences = [
        pairwise_difference(suite, higher, lower) for higher, lower in itertools.pairwise(ordered)
    ]
    raw = [difference_pvalue(suite, difference) for difference in differences]
    tested = {index: p for index, p in enumerate(raw) if p is not None}
    adjusted: dict[int, float] = {}
    if tested:
        corrected = holm(list(tested.values()))
        adjusted = {index: float(p) for index, p in zip(tested, corrected, strict=True)}

    comparisons: list[AdjacentPair] = []
    for index, (higher, lower) in enumerate(itertools.pairwise(ordered)):
        difference = differences[index]
        p_holm = adjusted.get(index)
        overall_difference = higher.overall - lower.overall
        comparisons.append(
            AdjacentPair(
                higher=higher.model,
                lower=lower.model,
                overall_difference=overall_difference,
                difference=difference.difference,
                interval=Interval(
                    low=difference.low,
                    high=difference.high,
                    level=difference.level,
                    method=DIFFERENCE_METHOD,
                ),
                pvalue=raw[index],
                pvalue_holm=p_holm,
                # Without an interval the difference cannot be shown to be real: stay tied.
                tied=p_holm is None or p_holm >= ALPHA,
                sa_bench_equivalent=overall_difference <= SA_BENCH_EQUIVALENCE + 1e-12,
                shared_questions=difference.shared_questions,
                unpaired=difference.unpaired,
            )
        )

    ranked: list[ModelScores] = []
    tie_group = sa_bench_group = 1
    for index, model in enumerate(ordered):
        if index > 0:
            tie_group += not comparisons[index - 1].tied
            sa_bench_group += not comparisons[index - 1].sa_bench_equivalent
        ranked.append(
            replace(model, rank=index + 1, tie_group=tie_group, sa_bench_group=sa_bench_group)
        )
    return ranked, comparisons
