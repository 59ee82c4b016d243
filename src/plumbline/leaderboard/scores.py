"""Category scores, the weighted overall, and their uncertainty.

- Category score: the mean over questions of each question's mean over epochs (for one epoch of
  binary scores, the seed's `correct_count / total_count`).
- Category interval: Wilson when every question mean is 0 or 1 (binary scores over one epoch or
  agreeing epochs, or a rubric whose every question scored 0 or 1: a t interval would collapse
  to a point when they all agree, claiming certainty); otherwise a t interval over the
  question means with `SE = sd(question means) / √n` (repeats averaged within question first;
  Miller 2024, "Adding Error Bars to Evals", arXiv:2411.00640).
- Overall: `Σ weight × category score`, exactly the seed's formula, a missing category counting
  0; `SE = sqrt(Σ w² · SE²)` (categories are independent question sets) with a normal interval.
  A Wilson category's SE enters floored at its Wilson half-width / z, so a perfect score (plain
  SE 0) does not make the overall look certain.
- The seed's per-category `confidence` and `margin` come from the interval's half-width:
  margin "±N%" with N the half-width in points rounded up; confidence high ≤ 5 points,
  medium ≤ 10, low above (or when no interval can be computed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from scipy import stats as sps

from plumbline.leaderboard.collect import CategoryData, FloatArray, IntArray
from plumbline.leaderboard.suite import Category, Suite
from plumbline.stats import (
    ConfidenceInterval,
    proportion_interval,
    repeated_measures_mean,
)

Confidence = Literal["high", "medium", "low"]

LEVEL = 0.95
HIGH_CONFIDENCE_HALF_WIDTH = 0.05
MEDIUM_CONFIDENCE_HALF_WIDTH = 0.10


def confidence_label(half_width: float | None) -> Confidence:
    """The seed's confidence level from an interval half-width (in score units, 0–1)."""
    if half_width is None or not math.isfinite(half_width):
        return "low"
    if half_width <= HIGH_CONFIDENCE_HALF_WIDTH + 1e-12:
        return "high"
    if half_width <= MEDIUM_CONFIDENCE_HALF_WIDTH + 1e-12:
        return "medium"
    return "low"


def margin_label(half_width: float | None) -> str | None:
    """The seed's margin string: the half-width in percentage points, rounded up ("±7%")."""
    if half_width is None or not math.isfinite(half_width):
        return None
    # Round first so that 0.05 (stored as 0.05000000000000001) reads ±5%, not ±6%.
    return f"±{math.ceil(round(half_width * 100, 9))}%"


@dataclass(frozen=True)
class Interval:
    """An interval with the standard error and half-width it came from."""

    low: float | None
    high: float | None
    standard_error: float | None
    half_width: float | None
    method: str
    level: float = LEVEL

    @property
    def confidence(self) -> Confidence:
        return confidence_label(self.half_width)

    @property
    def margin(self) -> str | None:
        return margin_label(self.half_width)

    def to_dict(self) -> dict[str, Any]:
        return {
            "low": self.low,
            "high": self.high,
            "level": self.level,
            "method": self.method,
            "standard_error": self.standard_error,
            "half_width": self.half_width,
            "confidence": self.confidence,
            "margin": self.margin,
        }


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
    logs: tuple[str, ...] = ()
    questions: IntArray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    question_means: FloatArray = field(default_factory=lambda: np.empty(0))

    @property
    def missing(self) -> bool:
        return self.value is None

    @property
    def contribution(self) -> float:
        """The value entering the overall: a missing category counts 0, as the seed says."""
        return 0.0 if self.value is None else self.value

    @property
    def standard_error(self) -> float | None:
        return None if self.interval is None else self.interval.standard_error

    def counts(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "epochs": self.epochs,
            "errors": self.errors,
            "excluded": self.excluded,
            "missing": self.missing,
            "logs": len(self.logs),
        }


def missing_category(key: str) -> CategoryScore:
    return CategoryScore(key=key, value=None, n=0, epochs=0, errors=0, excluded=0, interval=None)


def _all_zero_or_one(values: FloatArray) -> bool:
    return bool(np.all((values == 0.0) | (values == 1.0)))


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
    interval: Interval | None
    if _all_zero_or_one(means):
        successes = round(float(means.sum()))
        wilson = proportion_interval(successes, data.n, method="wilson", level=LEVEL)
        # The SE that enters the overall is the same question-level SE as for every category.
        se = repeated_measures_mean(data.matrix).standard_error if data.n >= 2 else None
        interval = Interval(
            low=wilson.interval.low,
            high=wilson.interval.high,
            standard_error=se,
            half_width=wilson.interval.half_width,
            method="Wilson",
        )
    elif data.n >= 2:
        estimate = repeated_measures_mean(data.matrix, level=LEVEL)
        raw: ConfidenceInterval = estimate.interval
        interval = Interval(
            low=_clip(raw.low),
            high=_clip(raw.high),
            standard_error=estimate.standard_error,
            half_width=raw.half_width,
            method="t over question means",
        )
    else:
        interval = Interval(
            low=None,
            high=None,
            standard_error=None,
            half_width=None,
            method="none (one question)",
        )
    return CategoryScore(
        key=category.key,
        value=value,
        n=data.n,
        epochs=epochs,
        errors=data.errors,
        excluded=data.excluded,
        interval=interval,
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
    rank: int = 0
    tie_group: int = 0
    seed_group: int = 0

    @property
    def missing(self) -> list[str]:
        return [key for key, score in self.categories.items() if score.missing]

    @property
    def errors(self) -> int:
        return sum(score.errors for score in self.categories.values())


def overall_standard_error(score: CategoryScore) -> float | None:
    """The SE a category contributes to the overall.

    The question-level SE, except that a Wilson category's is floored at its Wilson half-width
    divided by z: when every question is right (or every one wrong) the plain SE is 0, and the
    overall would otherwise claim certainty that its own category interval does not.
    """
    interval = score.interval
    se = score.standard_error
    if interval is None or interval.method != "Wilson" or interval.half_width is None:
        return se
    floor = interval.half_width / float(sps.norm.ppf(0.5 + LEVEL / 2))
    return floor if se is None else max(se, floor)


def overall_score(suite: Suite, categories: dict[str, CategoryScore]) -> tuple[float, Interval]:
    """`overall = Σ w·score` (missing = 0) with `SE = sqrt(Σ w²·SE²)` and a normal interval.

    A missing category is a fixed 0 and adds no variance. When a present category has no
    standard error (a single question), the overall has none either.
    """
    weights = suite.weights
    overall = math.fsum(weights[key] * categories[key].contribution for key in suite.keys)
    variance = 0.0
    defined = True
    for key in suite.keys:
        score = categories[key]
        if score.missing:
            continue
        se = overall_standard_error(score)
        if se is None or not math.isfinite(se):
            defined = False
            break
        variance += weights[key] ** 2 * se**2
    if not defined:
        return overall, Interval(None, None, None, None, "none (a category has no SE)")
    se = math.sqrt(variance)
    half = float(sps.norm.ppf(0.5 + LEVEL / 2)) * se
    low, high = overall - half, overall + half
    return overall, Interval(
        low=_clip(low),
        high=_clip(high),
        standard_error=se,
        half_width=(high - low) / 2,
        method="normal, SE = sqrt(Σ w²·SE²)",
    )


def score_model(suite: Suite, model: str, data: dict[tuple[str, str], CategoryData]) -> ModelScores:
    """Every category of one model, and its overall."""
    categories = {
        category.key: score_category(category, data.get((model, category.key)))
        for category in suite.categories
    }
    overall, interval = overall_score(suite, categories)
    return ModelScores(
        model=model, categories=categories, overall=overall, overall_interval=interval
    )
