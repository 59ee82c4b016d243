"""Category intervals from question × epoch matrices: a rubric that scored every question 0 or 1
gets the Wilson interval a binary category gets; other rubrics get Wilson at Korn & Graubard's
effective n, which stays inside [0, 1]."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from plumbline.leaderboard.collect import CategoryData
from plumbline.leaderboard.scores import EFFECTIVE_WILSON, score_category
from plumbline.leaderboard.suite import Category
from plumbline.stats import proportion_bounds, wilson_interval

RUBRIC = Category(
    key="architecture_design",
    name="Architecture",
    description="Rubric-scored designs.",
    weight=0.5,
    scoring="rubric",
    tasks=("architecture_design",),
    scorer="architecture_rubric",
)


def data(matrix: list[list[float]]) -> CategoryData:
    values = np.array(matrix, dtype=float)
    return CategoryData(
        model="m",
        category=RUBRIC.key,
        questions=np.arange(values.shape[0]),
        matrix=values,
        errors=0,
        excluded=0,
        logs=("log.eval",),
        tasks=("architecture_design",),
    )


def test_a_perfect_rubric_gets_wilson_not_a_point() -> None:
    score = score_category(RUBRIC, data([[1.0, 1.0]] * 8))
    expected = wilson_interval(8, 8).interval
    assert score.interval is not None and score.interval.method == "Wilson"
    assert score.interval.low == pytest.approx(expected.low) and score.interval.high == 1.0
    assert score.standard_error == 0.0  # the plain question-level SE


def test_a_rubric_with_spread_gets_wilson_at_the_effective_n() -> None:
    means = [0.9, 0.8, 0.85, 0.7, 0.95]
    score = score_category(RUBRIC, data([[v] for v in means]))
    assert score.interval is not None and score.interval.method == EFFECTIVE_WILSON
    se = np.std(means, ddof=1) / np.sqrt(len(means))
    assert score.standard_error == pytest.approx(se)
    p = np.mean(means)
    ratio = stats.norm.ppf(0.975) / stats.t.ppf(0.975, len(means) - 1)
    n_eff = p * (1 - p) / se**2 * ratio**2
    low, high = proportion_bounds(p * n_eff, n_eff)
    assert (score.interval.low, score.interval.high) == pytest.approx((float(low), float(high)))


def test_a_rubric_near_the_top_stays_inside_zero_one() -> None:
    # a t interval here would run past 1 (0.99 ± 2.78·0.0045 ≈ [0.978, 1.002])
    means = [1.0, 0.975, 1.0, 0.975, 1.0]
    score = score_category(RUBRIC, data([[v] for v in means]))
    assert score.interval is not None and score.interval.high is not None
    assert score.interval.low is not None
    assert 0.0 <= score.interval.low < 0.99 < score.interval.high < 1.0
