"""Order-statistic intervals for percentiles and the log-scale mean of skewed latencies."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from plumbline.stats.order_statistics import (
    minimum_n_two_sided,
    quantile_interval,
    quantile_ranks,
)
from plumbline.stats.skewed_means import lognormal_mean_interval


def test_the_n_a_two_sided_interval_needs() -> None:
    # ranks 1 and n: coverage 1 − q^n − (1 − q)^n reaches 95% at these n
    assert minimum_n_two_sided(99) == 299
    assert minimum_n_two_sided(95) == 59
    assert minimum_n_two_sided(50) == 6
    assert 1 - 0.99**298 - 0.01**298 < 0.95 <= 1 - 0.99**299


@pytest.mark.parametrize(("n", "q"), [(13, 50), (25, 50), (60, 95), (125, 95), (300, 99)])
def test_ranks_have_the_exact_binomial_coverage(n: int, q: float) -> None:
    low, high, coverage = quantile_ranks(n, q)
    assert low is not None and high is not None
    binomial = stats.binom(n, q / 100)
    assert coverage == pytest.approx(binomial.cdf(high - 1) - binomial.cdf(low - 1))
    assert coverage >= 0.95
    # no pair of ranks reaching 95% is narrower, nor as narrow with a smaller coverage
    below = binomial.cdf(np.arange(-1, n))  # below[r] = F(r − 1)
    a, b = np.triu_indices(n, 1)
    other = below[b + 1] - below[a + 1]
    ok = other >= 0.95
    assert not np.any(ok & (b - a < high - low))
    assert not np.any(ok & (b - a == high - low) & (other < coverage - 1e-12))


def test_too_few_values_give_the_one_sided_bound_never_a_fake_upper_bound() -> None:
    values = np.arange(1.0, 26.0)  # 25 values
    result = quantile_interval(values, 99)
    assert result.details["sided"] == "lower"
    assert math.isinf(result.interval.high)
    rank = result.details["lower_rank"]
    # P(Bin(25, 0.99) ≥ rank) ≥ 95%, and not for rank + 1
    assert stats.binom.sf(rank - 1, 25, 0.99) >= 0.95 > stats.binom.sf(rank, 25, 0.99)
    assert result.interval.low == values[rank - 1]
    assert "n ≥ 299" in result.interval.method
    # 4 values cannot bound a median at 95% even on one side
    none = quantile_interval([1.0, 2.0, 3.0, 4.0], 50)
    assert none.details["sided"] == "none"


def test_quantile_interval_covers_by_simulation() -> None:
    rng = np.random.default_rng(4)
    truth = float(stats.lognorm(1.0).ppf(0.95))
    hits = 0
    for _ in range(400):
        sample = rng.lognormal(0.0, 1.0, 125)
        interval = quantile_interval(sample, 95).interval
        hits += interval.low <= truth <= interval.high
    assert 0.92 <= hits / 400 <= 0.99  # exact coverage 95.1%, Monte Carlo SE 1.1%


def test_lognormal_mean_interval_formula_and_coverage() -> None:
    values = np.array([0.2, 0.5, 0.4, 1.9, 0.3, 0.7, 0.25, 3.2, 0.6, 0.45, 0.5, 0.8, 1.1])
    result = lognormal_mean_interval(values)
    logs = np.log(values)
    s2 = logs.var(ddof=1)
    half = stats.t.ppf(0.975, 12) * np.sqrt(s2 / 13 + s2**2 / 24)
    assert result.interval.low == pytest.approx(np.exp(logs.mean() + s2 / 2 - half))
    assert result.interval.high == pytest.approx(np.exp(logs.mean() + s2 / 2 + half))
    assert result.statistic == pytest.approx(values.mean())
    rng = np.random.default_rng(5)
    truth = math.exp(0.5)  # mean of lognormal(0, 1)
    hits = sum(
        lognormal_mean_interval(rng.lognormal(0, 1, 13)).interval.contains(truth)
        for _ in range(500)
    )
    assert hits / 500 >= 0.92  # CERT's symmetric CI_95 covers about 85% here
    with pytest.raises(ValueError, match="positive"):
        lognormal_mean_interval([0.0, 1.0, 2.0])
