"""Bootstrap intervals: agreement with scipy.stats.bootstrap, seeding, clustering, validation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from plumbline.stats import bootstrap as bootstrap_module
from plumbline.stats import bootstrap_interval, cluster_bootstrap, clustered_mean, paired_bootstrap


@pytest.fixture
def skewed() -> np.ndarray:
    return np.random.default_rng(11).lognormal(0.0, 1.0, size=80)


@pytest.mark.parametrize("method,scipy_method", [("percentile", "percentile"), ("bca", "BCa")])
@pytest.mark.parametrize("statistic,function", [("mean", np.mean), ("median", np.median)])
def test_matches_scipy_bootstrap(
    skewed: np.ndarray, method: str, scipy_method: str, statistic: str, function: object
) -> None:
    ours = bootstrap_interval(skewed, statistic, n_resamples=20_000, method=method, seed=1)
    theirs = sps.bootstrap(
        (skewed,), function, n_resamples=20_000, method=scipy_method, random_state=2
    ).confidence_interval
    # Different random streams: agreement to Monte Carlo error, a few % of the width.
    width = theirs.high - theirs.low
    assert ours.interval.low == pytest.approx(theirs.low, abs=0.05 * width)
    assert ours.interval.high == pytest.approx(theirs.high, abs=0.05 * width)
    assert ours.statistic == pytest.approx(float(function(skewed)))  # type: ignore[operator]
    assert ours.interval.method == ("bootstrap BCa" if method == "bca" else "bootstrap percentile")


def test_bca_acceleration_matches_jackknife_definition(skewed: np.ndarray) -> None:
    result = bootstrap_interval(skewed, "mean", n_resamples=2_000, method="bca", seed=5)
    leave_one_out = np.array([np.delete(skewed, i).mean() for i in range(skewed.size)])
    deviations = leave_one_out.mean() - leave_one_out
    expected = np.sum(deviations**3) / (6 * np.sum(deviations**2) ** 1.5)
    assert result.details["acceleration"] == pytest.approx(expected)


@pytest.mark.parametrize("n", [7, 8])
def test_closed_form_median_jackknife_matches_brute_force(n: int) -> None:
    data = np.random.default_rng(n).normal(size=n)
    data[2] = data[3]  # a tie
    resolved = bootstrap_module._resolve_statistic("median")
    fast = bootstrap_module._jackknife(data, resolved)
    brute = np.array([np.median(np.delete(data, i)) for i in range(n)])
    assert np.sort(fast) == pytest.approx(np.sort(brute))


def test_callable_statistic_and_its_jackknife(skewed: np.ndarray) -> None:
    def trimmed(a: np.ndarray) -> np.ndarray:
        return np.asarray(sps.trim_mean(a, 0.1, axis=-1))

    result = bootstrap_interval(skewed, trimmed, n_resamples=2_000, method="bca", seed=3)
    assert result.statistic == pytest.approx(sps.trim_mean(skewed, 0.1))
    assert result.details["statistic_name"] == "trimmed"
    assert result.interval.low < result.statistic < result.interval.high
    with pytest.raises(ValueError, match="must reduce along axis=-1"):
        bootstrap_interval(skewed, lambda a: a, n_resamples=200, seed=1)


def test_seeded_results_are_reproducible_and_chunking_is_invisible(
    skewed: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = bootstrap_interval(skewed, n_resamples=3_000, seed=42)
    again = bootstrap_interval(skewed, n_resamples=3_000, seed=42)
    assert first == again
    generator = bootstrap_interval(skewed, n_resamples=3_000, seed=np.random.default_rng(42))
    assert generator.interval == first.interval
    assert generator.details["seed"] is None
    other = bootstrap_interval(skewed, n_resamples=3_000, seed=43)
    assert other.interval != first.interval
    # Tiny chunks draw the same index stream row by row, so the result is identical.
    monkeypatch.setattr(bootstrap_module, "CHUNK_ELEMENTS", skewed.size * 7)
    chunked = bootstrap_interval(skewed, n_resamples=3_000, seed=42)
    assert chunked.interval == first.interval


def test_paired_bootstrap_is_on_differences_and_negates_when_swapped() -> None:
    rng = np.random.default_rng(8)
    x = rng.normal(1.0, 1.0, size=60)
    y = x - 0.3 + rng.normal(0, 0.2, size=60)
    forward = paired_bootstrap(x, y, n_resamples=4_000, seed=9)
    backward = paired_bootstrap(y, x, n_resamples=4_000, seed=9)
    assert forward.statistic == pytest.approx(np.mean(x - y))
    assert backward.statistic == pytest.approx(-forward.statistic)
    assert backward.interval.low == pytest.approx(-forward.interval.high)
    assert backward.interval.high == pytest.approx(-forward.interval.low)
    assert forward.details["n_pairs"] == 60
    with pytest.raises(ValueError, match="x and y must be paired"):
        paired_bootstrap(x, y[:-1])


def test_bootstrap_validation() -> None:
    with pytest.raises(ValueError, match="statistic must be 'mean', 'median' or a callable"):
        bootstrap_interval([1.0, 2.0], "mode")
    with pytest.raises(ValueError, match="method must be 'percentile' or 'bca'"):
        bootstrap_interval([1.0, 2.0], method="basic")
    with pytest.raises(ValueError, match="n_resamples must be at least 100"):
        bootstrap_interval([1.0, 2.0], n_resamples=10)
    with pytest.raises(ValueError, match="seed must be an integer"):
        bootstrap_interval([1.0, 2.0], seed="x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"data\[0\] is inf"):
        bootstrap_interval([float("inf"), 2.0])


def _clustered_binary(seed: int, clusters: int = 40, sizes: tuple[int, int] = (3, 9)) -> tuple:
    rng = np.random.default_rng(seed)
    size = rng.integers(sizes[0], sizes[1], size=clusters)
    rates = rng.beta(2, 2, size=clusters)
    labels = np.repeat(np.arange(clusters), size)
    values = (rng.random(labels.size) < rates[labels]).astype(float)
    return values, labels


def test_cluster_bootstrap_fast_path_matches_materialised_members() -> None:
    values, labels = _clustered_binary(4)
    fast = cluster_bootstrap(values, labels, n_resamples=20_000, seed=1)
    slow = cluster_bootstrap(values, labels, n_resamples=20_000, seed=2, within="members")
    assert fast.details["within_resampling"] == "exact multinomial counts"
    assert slow.details["within_resampling"] == "members resampled"
    assert fast.statistic == pytest.approx(values.mean())
    width = slow.interval.high - slow.interval.low
    assert fast.interval.low == pytest.approx(slow.interval.low, abs=0.04 * width)
    assert fast.interval.high == pytest.approx(slow.interval.high, abs=0.04 * width)
    assert fast.standard_error == pytest.approx(slow.standard_error, rel=0.04)


def test_cluster_bootstrap_normal_approximation_for_many_distinct_values() -> None:
    rng = np.random.default_rng(6)
    labels = np.repeat(np.arange(30), 50)
    values = rng.gamma(2.0, size=labels.size) + rng.normal(0, 1, size=30)[labels]
    fast = cluster_bootstrap(values, labels, n_resamples=20_000, seed=1)
    slow = cluster_bootstrap(values, labels, n_resamples=20_000, seed=2, within="members")
    assert "normal approximation" in fast.details["within_resampling"]
    assert fast.standard_error == pytest.approx(slow.standard_error, rel=0.04)


def test_cluster_bootstrap_without_within_resampling_tracks_cluster_robust_se() -> None:
    values, labels = _clustered_binary(5, clusters=120)
    boot = cluster_bootstrap(values, labels, n_resamples=20_000, seed=3, resample_within=False)
    robust = clustered_mean(values, labels)
    # The cluster bootstrap SE is the CR0 sandwich; CR1 multiplies its variance by C/(C−1).
    assert boot.standard_error == pytest.approx(
        robust.standard_error * np.sqrt(119 / 120), rel=0.03
    )
    assert boot.details["within_resampling"] == "clusters only"


def test_cluster_bootstrap_strata_keep_stratum_sizes() -> None:
    # Two strata with very different means: stratified resampling removes between-stratum noise.
    labels = np.repeat(np.arange(20), 5)
    strata = np.where(labels < 10, "easy", "hard")
    rng = np.random.default_rng(2)
    values = np.where(labels < 10, 10.0, 0.0) + rng.normal(0, 0.5, size=100)
    free = cluster_bootstrap(values, labels, n_resamples=5_000, seed=1)
    stratified = cluster_bootstrap(values, labels, n_resamples=5_000, seed=1, strata=strata)
    assert stratified.details["n_strata"] == 2
    assert stratified.standard_error < free.standard_error / 5
    with pytest.raises(ValueError, match="strata must be constant within each cluster"):
        cluster_bootstrap(values, labels, strata=np.arange(100) % 2)


def test_cluster_bootstrap_median_and_bca() -> None:
    values, labels = _clustered_binary(9)
    values = values + np.random.default_rng(1).normal(0, 1, size=values.size)
    median = cluster_bootstrap(values, labels, statistic="median", n_resamples=1_000, seed=4)
    assert median.statistic == pytest.approx(np.median(values))
    assert median.interval.low < median.statistic < median.interval.high
    bca = cluster_bootstrap(values, labels, n_resamples=2_000, method="bca", seed=4)
    sums = np.bincount(labels, weights=values)
    sizes = np.bincount(labels)
    leave_out = (sums.sum() - sums) / (values.size - sizes)
    deviations = leave_out.mean() - leave_out
    expected = np.sum(deviations**3) / (6 * np.sum(deviations**2) ** 1.5)
    assert bca.details["acceleration"] == pytest.approx(expected)


def test_cluster_bootstrap_is_seeded() -> None:
    values, labels = _clustered_binary(10)
    assert cluster_bootstrap(values, labels, n_resamples=500, seed=7) == cluster_bootstrap(
        values, labels, n_resamples=500, seed=7
    )
