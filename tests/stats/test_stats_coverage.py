"""Coverage by simulation: nominal 95% intervals on datasets whose truth is known.

Every method gets at least 2,000 simulated datasets (seeded, so the figures are reproducible).
The closed-form intervals are vectorised across datasets through the same cores the public
functions call (`proportion_bounds`, `t_bounds`, `cert_bounds`, `clustered_bounds`); methods that
only exist per dataset (bootstrap, Hodges–Lehmann, effect sizes) are called once per dataset,
each call itself vectorised over its resamples.

Where an interval falls short, the test pins down by how much (measured figures in comments):

- Wald under-covers at small n and extreme p: 92.3% averaged over p ~ U(0.1, 0.9) at n = 30,
  78% at n = 30, p = 0.05, 40% at n = 10, p = 0.05. It reaches the band around n ≥ 100.
- Clopper–Pearson never covers less than 95% (by construction) and is conservative: about 97%
  averaged at n = 30, so it enters the band from about n = 100.
- The CERT CI_95 (z = 1.96 with the population SD) covers about 93.7% at n = 30 (normal data).
- The percentile bootstrap of a mean is a z-like interval with the population SD, ≈ 93.6% at
  n = 30, so it is checked at n = 60.

A binomial interval's coverage at one fixed p oscillates with n and p (Brown, Cai & DasGupta
2001, Fig. 1: Wilson at n = 30 ranges from 93% to 97% over p), so proportion intervals draw a
true p per dataset from U(0.1, 0.9) and report the average coverage, as Brown et al. do.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from scipy import stats as sps

from plumbline.stats import (
    bootstrap_interval,
    cliffs_delta,
    cluster_bootstrap,
    cohens_d,
    geometric_mean_ratio,
    hodges_lehmann,
    paired_bootstrap,
    proportion_bounds,
    repeated_measures_mean,
)
from plumbline.stats.means import cert_bounds, clustered_bounds, t_bounds

pytestmark = pytest.mark.slow

BAND = (0.935, 0.965)
DATASETS = 2_000


def covered(truth: np.ndarray | float, low: np.ndarray, high: np.ndarray) -> float:
    return float(np.mean((low <= truth) & (truth <= high)))


def in_band(coverage: float) -> bool:
    return BAND[0] <= coverage <= BAND[1]


def proportion_coverage(method: str, n: int, p_range: tuple[float, float], datasets: int) -> float:
    rng = np.random.default_rng(n)
    truth = rng.uniform(*p_range, size=datasets)
    successes = rng.binomial(n, truth)
    low, high = proportion_bounds(successes, n, method=method)
    return covered(truth, low, high)


@pytest.mark.parametrize(
    "method,n",
    [
        ("wilson", 30),
        ("wilson", 100),
        ("wilson", 400),
        ("exact", 100),
        ("exact", 400),
        ("wald", 100),
        ("wald", 400),
    ],
)
def test_proportion_intervals_cover_95(method: str, n: int) -> None:
    coverage = proportion_coverage(method, n, (0.1, 0.9), 20_000)
    assert in_band(coverage), f"{method} n={n}: {coverage:.4f}"


def test_clopper_pearson_is_conservative_at_small_n() -> None:
    coverage = proportion_coverage("exact", 30, (0.1, 0.9), 20_000)
    assert 0.95 <= coverage <= 0.98  # ≈ 97%: never below nominal, wider than needed


def test_wald_falls_short_at_small_n_and_extreme_p() -> None:
    assert proportion_coverage("wald", 30, (0.1, 0.9), 20_000) < 0.93  # ≈ 92.3%
    assert proportion_coverage("wald", 30, (0.04, 0.06), 20_000) < 0.85  # ≈ 78%
    assert proportion_coverage("wald", 10, (0.04, 0.06), 20_000) < 0.5  # ≈ 40%
    # Wilson holds up where Wald fails.
    assert proportion_coverage("wilson", 30, (0.04, 0.06), 20_000) > 0.93


def test_t_interval_covers_95() -> None:
    rng = np.random.default_rng(1)
    normal = rng.normal(3.0, 2.0, size=(DATASETS * 2, 30))
    _, _, low, high = t_bounds(normal)
    assert in_band(covered(3.0, low, high))
    uniform = rng.uniform(0.0, 1.0, size=(DATASETS * 2, 30))
    _, _, low, high = t_bounds(uniform)
    assert in_band(covered(0.5, low, high))


def test_cert_ci_95_coverage_short_at_30_fine_at_100() -> None:
    rng = np.random.default_rng(2)
    small = rng.normal(0.0, 1.0, size=(20_000, 30))
    _, _, low, high = cert_bounds(small)
    assert 0.925 <= covered(0.0, low, high) < 0.945  # ≈ 93.7%: z and ddof=0 are both narrow
    large = rng.normal(0.0, 1.0, size=(20_000, 100))
    _, _, low, high = cert_bounds(large)
    assert in_band(covered(0.0, low, high))


def test_repeated_measures_covers_95_where_naive_pooling_does_not() -> None:
    rng = np.random.default_rng(3)
    questions, epochs = 50, 4
    # Per-question solve rates ~ Beta(2, 2): the population mean score is 0.5.
    rates = rng.beta(2.0, 2.0, size=(DATASETS, questions, 1))
    scores = (rng.random((DATASETS, questions, epochs)) < rates).astype(float)
    _, _, low, high = t_bounds(scores.mean(axis=2))
    assert in_band(covered(0.5, low, high))
    # Treating all 200 scores as independent understates the SE (≈ 88% coverage).
    _, _, low, high = t_bounds(scores.reshape(DATASETS, -1))
    assert covered(0.5, low, high) < 0.91
    # The public function is the same computation on one dataset.
    single = repeated_measures_mean(scores[0])
    _, _, core_low, core_high = t_bounds(scores[:1].mean(axis=2))
    assert single.interval.low == pytest.approx(float(core_low[0]))
    assert single.interval.high == pytest.approx(float(core_high[0]))


def test_clustered_mean_covers_95() -> None:
    rng = np.random.default_rng(4)
    clusters, members = 40, 5
    codes = np.repeat(np.arange(clusters), members)
    effects = rng.normal(0.0, 1.0, size=(DATASETS * 2, clusters))[:, codes]
    values = 1.0 + effects + rng.normal(0.0, 1.0, size=effects.shape)
    _, _, low, high = clustered_bounds(values, codes)
    assert in_band(covered(1.0, low, high))
    # Ignoring the clusters (plain t over 200 values) under-covers badly.
    _, _, low, high = t_bounds(values)
    assert covered(1.0, low, high) < 0.8


def per_dataset(
    interval: Callable[[int], tuple[float, float]], truth: float, datasets: int = DATASETS
) -> float:
    hits = 0
    for index in range(datasets):
        low, high = interval(index)
        hits += low <= truth <= high
    return hits / datasets


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_mean_covers_95(method: str) -> None:
    rng = np.random.default_rng(5)
    data = rng.normal(10.0, 3.0, size=(DATASETS, 60))

    def interval(index: int) -> tuple[float, float]:
        ci = bootstrap_interval(data[index], n_resamples=1_000, method=method, seed=index).interval
        return ci.low, ci.high

    assert in_band(per_dataset(interval, 10.0))


def test_paired_bootstrap_covers_95_on_skewed_differences() -> None:
    rng = np.random.default_rng(6)
    base = rng.gamma(2.0, 1.0, size=(DATASETS, 150))
    treated = base * 0.8 + rng.gamma(1.0, 0.2, size=base.shape)
    truth = 2.0 - (0.8 * 2.0 + 0.2)  # E[base − treated]

    def interval(index: int) -> tuple[float, float]:
        ci = paired_bootstrap(
            base[index], treated[index], n_resamples=1_000, method="bca", seed=index
        ).interval
        return ci.low, ci.high

    assert in_band(per_dataset(interval, truth))


def test_cluster_bootstrap_covers_95_on_binary_repeats() -> None:
    rng = np.random.default_rng(7)
    clusters, repeats = 50, 4
    labels = np.repeat(np.arange(clusters), repeats)
    rates = rng.beta(2.0, 3.0, size=(DATASETS, clusters))  # population mean 0.4
    scores = (rng.random((DATASETS, clusters * repeats)) < rates[:, labels]).astype(float)

    def interval(index: int) -> tuple[float, float]:
        ci = cluster_bootstrap(
            scores[index], labels, n_resamples=1_000, seed=index, resample_within=False
        ).interval
        return ci.low, ci.high

    assert in_band(per_dataset(interval, 0.4))


def test_two_stage_cluster_bootstrap_is_conservative_by_the_within_share() -> None:
    """Resampling members again adds the within-cluster variance a second time.

    The observed cluster means already carry `σ²_b + σ²_w/m`; drawing members again adds about
    `σ²_w(m − 1)/m²` (Davison & Hinkley 1997, §3.8). With Beta(2, 3) solve rates (σ²_b = 0.04,
    σ²_w = E[p(1 − p)] = 0.2) and m = 4 repeats the variance is 0.1275/C instead of 0.09/C, an SE
    19% too wide, so a nominal 95% interval covers about 98%. Use `resample_within=False` when
    the clusters are the sampled unit and every member was observed.
    """
    rng = np.random.default_rng(8)
    clusters, repeats = 50, 4
    labels = np.repeat(np.arange(clusters), repeats)
    rates = rng.beta(2.0, 3.0, size=(DATASETS, clusters))
    scores = (rng.random((DATASETS, clusters * repeats)) < rates[:, labels]).astype(float)

    def interval(index: int) -> tuple[float, float]:
        ci = cluster_bootstrap(scores[index], labels, n_resamples=500, seed=index).interval
        return ci.low, ci.high

    coverage = per_dataset(interval, 0.4)
    assert 0.96 <= coverage <= 0.99


def test_hodges_lehmann_covers_95() -> None:
    rng = np.random.default_rng(9)
    differences = 0.3 + rng.standard_t(3, size=(DATASETS, 30))  # symmetric about 0.3

    def interval(index: int) -> tuple[float, float]:
        ci = hodges_lehmann(differences[index]).interval
        return ci.low, ci.high

    assert in_band(per_dataset(interval, 0.3))


def test_effect_size_intervals_cover_95() -> None:
    rng = np.random.default_rng(10)
    shift, n = 0.5, 40
    x = rng.normal(shift, 1.0, size=(DATASETS, n))
    y = rng.normal(0.0, 1.0, size=(DATASETS, n))

    def d_interval(index: int) -> tuple[float, float]:
        ci = cohens_d(x[index], y[index]).interval
        return ci.low, ci.high

    def delta_interval(index: int) -> tuple[float, float]:
        ci = cliffs_delta(x[index], y[index]).interval
        return ci.low, ci.high

    def ratio_interval(index: int) -> tuple[float, float]:
        ci = geometric_mean_ratio(np.exp(x[index]), np.exp(y[index])).interval
        return ci.low, ci.high

    assert in_band(per_dataset(d_interval, shift))
    assert in_band(per_dataset(delta_interval, 2 * sps.norm.cdf(shift / math.sqrt(2)) - 1))
    assert in_band(per_dataset(ratio_interval, math.exp(shift)))
