"""Category scores, the weighted overall, and their uncertainty.

- Category score: the mean over questions of each question's mean over epochs (for one epoch of
  binary scores, SA Bench's `correct_count / total_count`).
- Category interval: Wilson when every question mean is 0 or 1 (binary scores over one epoch or
  agreeing epochs); otherwise (a rubric, or repeats that disagree) Wilson at Korn & Graubard's
  effective n, with the SE over question means (repeats averaged within question first; Miller
  2024, "Adding Error Bars to Evals", arXiv:2411.00640). Both stay in [0, 1].
- Overall: `Σ weight × category score`, exactly SA Bench's formula, a missing category counting
  0 (a fixed value with no width); its interval combines the category intervals by MOVER
  (Zou & Donner 2008; Newcombe 2011; `stats.mover_sum`), so one category at weight 1 shows
  exactly its own interval and no bound leaves [0, 1].
- SA Bench's per-category `confidence` and `margin` come from the interval's half-width:
  margin "±N%" with N the half-width in points rounded up; confidence high ≤ 5 points,
  medium ≤ 10, low above (or when no interval can be computed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from plumbline.core.result import Interval
from plumbline.leaderboard.collect import CategoryData
from plumbline.leaderboard.suite import Category, Suite
from plumbline.stats import proportion_bounds
from plumbline.stats._validation import t_critical, z_critical
from plumbline.stats.arrays import FloatArray, IntArray
from plumbline.stats.mover import mover_sum

if TYPE_CHECKING:
    from plumbline.leaderboard.correction import Correction

Confidence = Literal["high", "medium", "low"]

LEVEL = 0.95
HIGH_CONFIDENCE_HALF_WIDTH = 0.05
MEDIUM_CONFIDENCE_HALF_WIDTH = 0.10


def confidence_label(half_width: float | None) -> Confidence:
    """SA Bench's confidence level from an interval half-width (in score units, 0–1)."""
    if half_width is None or not math.isfinite(half_width):
        return "low"
    if half_width <= HIGH_CONFIDENCE_HALF_WIDTH + 1e-12:
        return "high"
    if half_width <= MEDIUM_CONFIDENCE_HALF_WIDTH + 1e-12:
        return "medium"
    return "low"


def margin_label(half_width: float | None) -> str | None:
    """SA Bench's margin string: the half-width in percentage points, rounded up ("±7%")."""
    if half_width is None or not math.isfinite(half_width):
        return None
    # Round first so that 0.05 (stored as 0.05000000000000001) reads ±5%, not ±6%.
    return f"±{math.ceil(round(half_width * 100, 9))}%"


def _clip(value: float) -> float:
    return min(1.0, max(0.0, value))


@dataclass(frozen=True)
class CategoryScore:
    """One model's score in one category, or its absence (`missing`)."""

    key: str
    value: float | None
    n: int
    epochs: int
    errors: int
    excluded: int
    interval: Interval | None
    standard_error: float | None = None
    """SE over question means (None: fewer than 2 questions)."""
    logs: tuple[str, ...] = ()
    questions: IntArray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    question_means: FloatArray = field(default_factory=lambda: np.empty(0))
    correction: Correction | None = None
    """Human labels that corrected the judge's score (value and interval are then PPI's)."""

    @property
    def missing(self) -> bool:
        return self.value is None

    @property
    def contribution(self) -> float:
        """The value entering the overall: a missing category counts 0, as SA Bench says."""
        return 0.0 if self.value is None else self.value

    @property
    def half_width(self) -> float | None:
        return None if self.interval is None else self.interval.half_width


def missing_category(key: str) -> CategoryScore:
    return CategoryScore(key=key, value=None, n=0, epochs=0, errors=0, excluded=0, interval=None)


def _all_zero_or_one(values: FloatArray) -> bool:
    return bool(np.all((values == 0.0) | (values == 1.0)))


WILSON = "Wilson"
EFFECTIVE_WILSON = "Wilson, effective n (Korn & Graubard 1998)"


def category_bounds_batch(
    question_means: FloatArray, level: float = LEVEL
) -> tuple[FloatArray, FloatArray, npt.NDArray[np.bool_]]:
    """Category intervals for many categories of n questions each, one per row: (lows, highs,
    which rows are Wilson on 0/1 question means). The core of `category_bounds`.

    A row whose question means are all 0 or 1 gets Wilson on `successes / n`. Any other row (a
    rubric, or repeats that disagree within a question) gets Wilson at Korn & Graubard's (1998)
    effective sample size `n_eff = p̂(1 − p̂) / SE² · (z / t_{n−1})²`, with `SE = sd(question
    means) / √n` (repeats averaged within question first, the question being the unit; Miller
    2024, "Adding Error Bars to Evals", arXiv:2411.00640): the number of independent 0/1 answers
    that would give the observed SE, shrunk for the n − 1 degrees of freedom the SE rests on.
    When every question mean is equal (SE = 0) n_eff falls back to n. The Wilson form keeps the
    bounds in [0, 1] and skewed near them, where a t interval crosses 0 or 1 and under-covers
    (Dean & Pagano 2015, "Evaluating confidence interval methods for binomial proportions in
    clustered surveys", J. Survey Statistics and Methodology 3:484–503). Rows need n ≥ 2 unless
    they are all 0/1.
    """
    means = np.atleast_2d(np.asarray(question_means, dtype=np.float64))
    n = means.shape[-1]
    binary = np.all((means == 0.0) | (means == 1.0), axis=-1)
    p = means.mean(axis=-1)
    if n >= 2:
        se = means.std(axis=-1, ddof=1) / math.sqrt(n)
        t = t_critical(level, n - 1)
        # At a vanishing level both critical values are 0 (the p-value search visits it).
        ratio = z_critical(level) / t if t > 0 else 1.0
    else:
        se, ratio = np.zeros_like(p), 1.0
    plain = binary | (se <= 0) | (p <= 0) | (p >= 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where(plain, float(n), p * (1 - p) / np.where(plain, 1.0, se * se) * ratio**2)
    low, high = proportion_bounds(p * n_eff, n_eff, method="wilson", level=level)
    return low, high, binary


def category_bounds(question_means: FloatArray, level: float = LEVEL) -> tuple[float, float, str]:
    """A category's interval from its question means (at least 2, or only 0/1 values): Wilson,
    or Wilson at the effective n (`category_bounds_batch`). Public so that the paired
    differences (leaderboard.ties) rebuild the same interval on the questions two models share,
    at any level."""
    low, high, binary = category_bounds_batch(question_means[None, :], level)
    return float(low[0]), float(high[0]), WILSON if bool(binary[0]) else EFFECTIVE_WILSON


def score_category(category: Category, data: CategoryData | None) -> CategoryScore:
    """Score one category of one model from its question × epoch matrix."""
    if data is None or data.n == 0:
        missing = missing_category(category.key)
        if data is None:
            return missing
        # Every sample was excluded (errors="exclude"): still missing, but the counts show why.
        return CategoryScore(
            key=category.key,
            value=None,
            n=0,
            epochs=0,
            errors=data.errors,
            excluded=data.excluded,
            interval=None,
            logs=data.logs,
        )
    means = data.question_means()
    value = float(means.mean())
    epochs = data.epochs
    interval: Interval
    if data.n >= 2 or _all_zero_or_one(means):
        low, high, method = category_bounds(means, LEVEL)
        se = float(means.std(ddof=1) / math.sqrt(data.n)) if data.n >= 2 else None
        interval = Interval(low=low, high=high, level=LEVEL, method=method)
    else:
        se = None
        interval = Interval(low=None, high=None, level=LEVEL, method="none (one question)")
    return CategoryScore(
        key=category.key,
        value=value,
        n=data.n,
        epochs=epochs,
        errors=data.errors,
        excluded=data.excluded,
        interval=interval,
        standard_error=se,
        logs=data.logs,
        questions=data.questions,
        question_means=means,
    )


@dataclass(frozen=True)
class ModelScores:
    """A model's category scores, weighted overall and its interval, and its place."""

    model: str
    categories: dict[str, CategoryScore]
    overall: float
    overall_interval: Interval
    overall_standard_error: float | None = None
    """The SE the overall interval implies (half-width / z): what the reproducibility check
    combines."""
    rank: int = 0
    tie_group: int = 0
    sa_bench_group: int = 0

    @property
    def missing(self) -> list[str]:
        return [key for key, score in self.categories.items() if score.missing]

    @property
    def errors(self) -> int:
        return sum(score.errors for score in self.categories.values())


def overall_bounds(estimates: Any, lows: Any, highs: Any, weights: Any) -> tuple[Any, Any]:
    """MOVER bounds of `Σ w·p` over the last axis (vectorised core of `overall_score`).

    Within [0, Σ w] by construction (`stats.mover_sum`); the clip to [0, 1] only absorbs
    rounding.
    """
    mover = mover_sum(estimates, lows, highs, weights)
    return np.clip(mover.low, 0.0, 1.0), np.clip(mover.high, 0.0, 1.0)


OVERALL_METHOD = "MOVER over category intervals (Zou & Donner 2008; Newcombe 2011)"


def overall_score(
    suite: Suite, categories: dict[str, CategoryScore]
) -> tuple[float, Interval, float | None]:
    """`overall = Σ w·score` (missing = 0), with the MOVER interval over category intervals.

    `L = Σ w·p − √Σ w²(p − l)²`, `U = Σ w·p + √Σ w²(u − p)²` (`stats.mover_sum`): a single
    category at weight 1 gives back its own interval, a skewed Wilson interval keeps its shape,
    and the bounds stay in [0, Σ w] ⊆ [0, 1]. A missing category is a fixed 0 with no width. When
    a present category has no interval (a single question), the overall has none either.
    Returns (overall, interval, the SE the interval implies: half-width / z).
    """
    weights = suite.weights
    overall = math.fsum(weights[key] * categories[key].contribution for key in suite.keys)
    estimates: list[float] = []
    lows: list[float] = []
    highs: list[float] = []
    used: list[float] = []
    for key in suite.keys:
        score = categories[key]
        if score.missing:
            continue
        interval = score.interval
        if interval is None or interval.low is None or interval.high is None:
            none = Interval(
                low=None, high=None, level=LEVEL, method="none (a category has no interval)"
            )
            return overall, none, None
        estimates.append(score.contribution)
        lows.append(interval.low)
        highs.append(interval.high)
        used.append(weights[key])
    if not used:
        zero = Interval(low=0.0, high=0.0, level=LEVEL, method="none (every category missing: 0)")
        return overall, zero, 0.0
    low_array, high_array = overall_bounds(estimates, lows, highs, used)
    low, high = min(float(low_array), overall), max(float(high_array), overall)
    interval = Interval(low=low, high=high, level=LEVEL, method=OVERALL_METHOD)
    return overall, interval, (high - low) / 2 / z_critical(LEVEL)


def score_model(suite: Suite, model: str, data: dict[tuple[str, str], CategoryData]) -> ModelScores:
    """Every category of one model, and its overall."""
    categories = {
        category.key: score_category(category, data.get((model, category.key)))
        for category in suite.categories
    }
    overall, interval, standard_error = overall_score(suite, categories)
    return ModelScores(
        model=model,
        categories=categories,
        overall=overall,
        overall_interval=interval,
        overall_standard_error=standard_error,
    )
