"""Category intervals from question × epoch matrices: a rubric that scored every question 0 or 1
gets the Wilson interval a binary category gets, never a zero-width t interval."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from plumbline.leaderboard.collect import CategoryData
from plumbline.leaderboard.scores import overall_standard_error, score_category
from plumbline.leaderboard.suite import Category
from plumbline.stats import wilson_interval

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
    assert score.standard_error == 0.0  # the plain question-level SE ...
    z = stats.norm.ppf(0.975)
    floor = overall_standard_error(score)
    assert floor == pytest.approx(expected.half_width / z)  # ... is floored for the overall
    assert floor is not None and floor > 0


def test_a_rubric_with_spread_keeps_the_t_interval() -> None:
    means = [0.9, 0.8, 0.85, 0.7, 0.95]
    score = score_category(RUBRIC, data([[v] for v in means]))
    assert score.interval is not None and score.interval.method.startswith("t")
    se = np.std(means, ddof=1) / np.sqrt(len(means))
    assert score.standard_error == pytest.approx(se)
    assert overall_standard_error(score) == pytest.approx(se)
