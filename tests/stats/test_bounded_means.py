"""The betting interval for a bounded mean (`stats.bounded_means`): valid for every distribution."""

from __future__ import annotations

import numpy as np
import pytest

from plumbline.stats.bounded_means import betting_mean_interval


@pytest.mark.parametrize(
    ("name", "mean"),
    [("rare ones", 0.05), ("two clusters, one much lower", 0.25 * 0.1 + 0.75 * 0.75)],
)
@pytest.mark.parametrize("n", [3, 10, 30])
def test_it_covers_where_a_t_interval_does_not(name: str, mean: float, n: int) -> None:
    """Skewed populations of the kind that sink a t interval at a few values (issue 37): a
    rare 1, or a quarter of the values from a much lower cluster."""
    rng = np.random.default_rng([n, len(name)])
    hits = 0
    runs = 200
    for _ in range(runs):
        if name == "rare ones":
            values = (rng.random(n) < 0.05).astype(float)
        else:
            low = rng.random(n) < 0.25
            values = np.where(low, rng.uniform(0.0, 0.2, n), rng.uniform(0.6, 0.9, n))
        interval = betting_mean_interval(values).interval
        assert 0.0 <= interval.low <= interval.high <= 1.0
        hits += interval.low <= mean <= interval.high
    # guaranteed ≥ 95%: below 91% of 200 is a 0.5% chance at a true 95%
    assert hits / runs >= 0.91


def test_other_ranges_are_rescaled_and_many_values_give_a_narrow_interval() -> None:
    rng = np.random.default_rng(1)
    values = rng.uniform(-1.0, 1.0, 400)
    result = betting_mean_interval(values, low=-1.0, high=1.0)
    assert result.statistic == pytest.approx(float(np.mean(values)))
    assert result.interval.low < result.statistic < result.interval.high
    assert result.interval.high - result.interval.low < 0.25
    # three values: little is known about the population, and the interval says so
    few = betting_mean_interval([0.8, 0.7, 0.9]).interval
    assert few.high - few.low > 0.5 and few.low <= 0.8 <= few.high


def test_values_out_of_range_are_refused() -> None:
    with pytest.raises(ValueError, match=r"lie in \[0, 1\]"):
        betting_mean_interval([0.5, 1.5])
    with pytest.raises(ValueError, match="high must be above low"):
        betting_mean_interval([0.5], low=1.0, high=1.0)
