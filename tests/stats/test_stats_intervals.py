"""Proportions, means and percentiles against scipy, closed forms and CERT's known values."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import stats as sps

from plumbline.stats import (
    cert_ci_95,
    clopper_pearson_interval,
    clustered_mean,
    percentile,
    proportion_bounds,
    proportion_interval,
    repeated_measures_mean,
    t_interval,
    wald_interval,
    wilson_interval,
)


@pytest.mark.parametrize(
    "k,n", [(0, 1), (0, 10), (1, 10), (42, 50), (50, 50), (7, 300), (999, 1000)]
)
@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
def test_wilson_and_exact_match_scipy_binomtest(k: int, n: int, level: float) -> None:
    reference = sps.binomtest(k, n)
    for method, function in (("wilson", wilson_interval), ("exact", clopper_pearson_interval)):
        expected = reference.proportion_ci(confidence_level=level, method=method)
        result = function(k, n, level=level)
        assert result.interval.low == pytest.approx(expected.low, abs=1e-12)
        assert result.interval.high == pytest.approx(expected.high, abs=1e-12)
        assert result.statistic == k / n
        assert result.n == n
        assert result.interval.level == level


def test_seed_example_42_of_50() -> None:
    result = proportion_interval(42, 50)
    assert (round(result.statistic, 3), round(result.interval.low, 3)) == (0.84, 0.715)
    assert round(result.interval.high, 3) == 0.917
    assert result.interval.method == "Wilson"
    assert result.details == {"successes": 42, "trials": 50, "method": "wilson"}


def test_wald_closed_form_and_clipping() -> None:
    result = wald_interval(42, 50)
    half = sps.norm.ppf(0.975) * math.sqrt(0.84 * 0.16 / 50)
    assert result.interval.low == pytest.approx(0.84 - half)
    assert result.interval.high == pytest.approx(0.84 + half)
    assert result.standard_error == pytest.approx(math.sqrt(0.84 * 0.16 / 50))
    # Zero width at the boundary: the reason Wald is not the default.
    degenerate = wald_interval(0, 20)
    assert (degenerate.interval.low, degenerate.interval.high) == (0.0, 0.0)
    assert wald_interval(1, 3).interval.low == 0.0  # clipped, not negative


def test_proportion_bounds_vectorised_matches_scalar() -> None:
    ks = np.arange(0, 31)
    for method in ("wilson", "exact", "wald"):
        low, high = proportion_bounds(ks, 30, method=method, level=0.9)
        for k in (0, 3, 15, 30):
            single = proportion_interval(k, 30, method=method, level=0.9)
            assert low[k] == pytest.approx(single.interval.low)
            assert high[k] == pytest.approx(single.interval.high)


@pytest.mark.parametrize(
    "args,message",
    [
        ((5, 0), "trials must be >= 1"),
        ((6, 5), "successes (6) cannot exceed trials (5)"),
        ((-1, 5), "successes must be >= 0"),
        ((2.5, 5), "successes must be an integer"),
        ((True, 5), "successes must be an integer"),
    ],
)
def test_proportion_rejects_bad_counts(args: tuple[object, object], message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        proportion_interval(*args)  # type: ignore[arg-type]


def test_proportion_rejects_bad_method_and_level() -> None:
    with pytest.raises(ValueError, match="method must be one of"):
        proportion_interval(1, 2, method="agresti")
    with pytest.raises(ValueError, match="level must be strictly between 0 and 1"):
        proportion_interval(1, 2, level=95)
    assert proportion_interval(3, 9, method="clopper-pearson").interval.method == "Clopper-Pearson"


def test_cert_ci_95_is_certs_formula() -> None:
    latencies = [0.5, 0.6, 0.55, 0.58, 0.52]
    result = cert_ci_95(latencies)
    std = float(np.std(latencies))
    assert std == pytest.approx(0.0368782, abs=1e-7)  # CERT's known value
    assert result.statistic == pytest.approx(0.55)
    assert result.interval.low == pytest.approx(0.55 - 1.96 * std / math.sqrt(5))
    assert result.interval.high == pytest.approx(0.55 + 1.96 * std / math.sqrt(5))
    assert result.interval.method == "CERT CI_95"
    sample = cert_ci_95(latencies, ddof=1)
    assert sample.standard_error == pytest.approx(np.std(latencies, ddof=1) / math.sqrt(5))


def test_t_interval_matches_scipy() -> None:
    values = np.random.default_rng(3).gamma(2.0, size=37)
    result = t_interval(values, level=0.9)
    low, high = sps.t.interval(0.9, 36, loc=values.mean(), scale=sps.sem(values))
    assert (result.interval.low, result.interval.high) == pytest.approx((low, high))
    assert result.standard_error == pytest.approx(sps.sem(values))
    assert result.details["df"] == 36


def test_mean_intervals_reject_bad_values() -> None:
    with pytest.raises(ValueError, match=r"values\[1\] is nan"):
        t_interval([1.0, float("nan"), 2.0])
    with pytest.raises(ValueError, match="values needs at least 2 values, got 1"):
        cert_ci_95([1.0])
    with pytest.raises(ValueError, match="values must be one-dimensional"):
        t_interval([[1.0, 2.0], [3.0, 4.0]])


def test_repeated_measures_averages_repeats_first() -> None:
    scores = np.array([[1, 1, 1, 0], [0, 0, 0, 0], [1, 1, 1, 1], [1, 0, 1, 0], [0, 0, 1, 0]], float)
    result = repeated_measures_mean(scores)
    question_means = scores.mean(axis=1)
    assert result.statistic == pytest.approx(question_means.mean())
    assert result.standard_error == pytest.approx(question_means.std(ddof=1) / math.sqrt(5))
    half = sps.t.ppf(0.975, 4) * result.standard_error
    assert result.interval.low == pytest.approx(result.statistic - half)
    assert result.n == 5
    assert result.details["n_questions"] == 5
    assert result.details["epochs"] == 4
    within = np.mean(scores.var(axis=1, ddof=1))
    assert result.details["within_variance"] == pytest.approx(within)
    between = question_means.var(ddof=1) - within / 4
    assert result.details["between_variance"] == pytest.approx(between)
    assert result.details["within_share"] == pytest.approx(within / (within + between))


def test_repeated_measures_recovers_the_within_question_share() -> None:
    # Solve rates ~ Beta(2, 2): between-question variance 0.05, within E[p(1 − p)] = 0.2,
    # so 80% of a single run's variance is run-to-run noise.
    rng = np.random.default_rng(21)
    rates = rng.beta(2.0, 2.0, size=(4_000, 1))
    scores = (rng.random((4_000, 5)) < rates).astype(float)
    details = repeated_measures_mean(scores).details
    assert details["within_variance"] == pytest.approx(0.2, abs=0.01)
    assert details["between_variance"] == pytest.approx(0.05, abs=0.01)
    assert details["within_share"] == pytest.approx(0.8, abs=0.03)
    deterministic = np.repeat(rng.integers(0, 2, size=(500, 1)), 3, axis=1).astype(float)
    assert repeated_measures_mean(deterministic).details["within_share"] == 0.0


def test_repeated_measures_ragged_and_nan_are_the_same() -> None:
    ragged = [[1.0, 0.0, 1.0], [0.5], [0.2, 0.4]]
    padded = np.array([[1.0, 0.0, 1.0], [0.5, np.nan, np.nan], [0.2, 0.4, np.nan]])
    a = repeated_measures_mean(ragged)
    b = repeated_measures_mean(padded)
    assert a.statistic == pytest.approx(b.statistic)
    assert a.statistic == pytest.approx(np.mean([2 / 3, 0.5, 0.3]))
    assert a.details["epochs_min"] == 1 and a.details["epochs_max"] == 3
    with pytest.raises(ValueError, match=r"scores\[1\] has no scores"):
        repeated_measures_mean([[1.0], [], [0.0]])


def test_clustered_mean_closed_form() -> None:
    values = np.array([1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0])
    clusters = np.array(["a", "a", "a", "b", "b", "c", "c", "c", "c"])
    result = clustered_mean(values, clusters)
    mean = values.mean()
    sums = [np.sum(values[clusters == c] - mean) for c in "abc"]
    variance = 3 / 2 * np.sum(np.square(sums)) / 81
    assert result.statistic == pytest.approx(mean)
    assert result.standard_error == pytest.approx(math.sqrt(variance))
    half = sps.t.ppf(0.975, 2) * math.sqrt(variance)
    assert result.interval.high == pytest.approx(mean + half)
    assert result.details["n_clusters"] == 3
    with pytest.raises(ValueError, match="clusters must give one label per value"):
        clustered_mean(values, clusters[:-1])
    with pytest.raises(ValueError, match="at least 2 distinct clusters"):
        clustered_mean(values, np.zeros(9))


def test_clustered_se_exceeds_naive_when_clusters_share_outcomes() -> None:
    values = np.repeat([1.0, 0.0, 1.0, 0.0, 1.0, 1.0], 10)  # every cluster is all-or-nothing
    clusters = np.repeat(np.arange(6), 10)
    result = clustered_mean(values, clusters)
    assert result.details["design_effect"] > 5


def test_percentile_seed_known_values() -> None:
    assert percentile([0.5, 0.6, 0.55, 0.58, 0.52], 50) == pytest.approx(0.55)
    assert percentile([0.5, 0.6, 0.55, 0.58, 0.52], 95) == pytest.approx(0.596)
    assert percentile([0.5, 0.6, 0.55, 0.58, 0.52], 99) == pytest.approx(0.5992)
    steps = np.arange(1, 11) / 10
    assert percentile(steps, [50, 95, 99]) == pytest.approx([0.55, 0.955, 0.991])
    assert percentile(steps, 50, method="lower") == pytest.approx(0.5)
    assert isinstance(percentile(steps, 50), float)
    with pytest.raises(ValueError, match=r"q must be in \[0, 100\]"):
        percentile(steps, 101)
    with pytest.raises(ValueError, match="method must be one of"):
        percentile(steps, 50, method="type7")
