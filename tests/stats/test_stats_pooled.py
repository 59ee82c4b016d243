"""The pooled within-cluster draw of the cluster bootstrap (many clusters): the same interval as
the per-cluster draw up to Monte Carlo noise, chosen only where the per-cluster draw is costly
and the pooled one is sound."""

from __future__ import annotations

import numpy as np
import pytest

from plumbline.stats import cluster_bootstrap
from plumbline.stats import clustered as clustered_module


def paired_deltas(clusters: int, repeats: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Pass deltas (-1, 0, 1) of `clusters` tasks with `repeats` repeats each."""
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(clusters), repeats)
    rates = rng.beta(2, 2, size=(2, clusters))
    treated = rng.random(labels.size) < rates[0, labels]
    control = rng.random(labels.size) < rates[1, labels]
    return treated.astype(float) - control.astype(float), labels


def test_pooled_and_per_cluster_draws_give_the_same_interval() -> None:
    values, labels = paired_deltas(clusters=400, repeats=6, seed=1)
    exact = cluster_bootstrap(values, labels, n_resamples=10_000, seed=1, within="per-cluster")
    pooled = cluster_bootstrap(values, labels, n_resamples=10_000, seed=2, within="pooled")
    assert exact.details["within_resampling"] == "exact multinomial counts"
    assert pooled.details["within_resampling"].startswith("normal approximation of the pooled")
    width = exact.interval.high - exact.interval.low
    assert pooled.interval.low == pytest.approx(exact.interval.low, abs=0.04 * width)
    assert pooled.interval.high == pytest.approx(exact.interval.high, abs=0.04 * width)
    assert pooled.standard_error == pytest.approx(exact.standard_error, rel=0.04)
    assert pooled.statistic == exact.statistic


def test_auto_pools_only_above_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    values, labels = paired_deltas(clusters=600, repeats=6, seed=2)
    below = cluster_bootstrap(values, labels, n_resamples=2_000, seed=0)
    assert below.details["within_resampling"] == "exact multinomial counts"
    assert (
        below.interval
        == cluster_bootstrap(
            values, labels, n_resamples=2_000, seed=0, within="per-cluster"
        ).interval
    )
    # 600 tasks × up to 2 binomials (3 distinct deltas) × 2,000 resamples: about 2 × 10⁶ draws
    monkeypatch.setattr(clustered_module, "EXACT_DRAW_BUDGET", 100_000)
    above = cluster_bootstrap(values, labels, n_resamples=2_000, seed=0)
    assert above.details["within_resampling"].startswith("normal approximation of the pooled")


def test_pooling_needs_the_within_variance_spread_over_many_clusters() -> None:
    values, labels = paired_deltas(clusters=300, repeats=6, seed=3)
    groups = clustered_module._prepare_clusters(values, labels, None)
    distinct = clustered_module._distinct_values(groups)
    assert clustered_module._pooled_is_sound(groups, distinct)
    # One task whose repeats swing by 1,000 holds nearly all the within-task variance.
    loud = values.copy()
    loud[:6] = [-1000.0, 1000.0, -1000.0, 1000.0, -1000.0, 1000.0]
    groups = clustered_module._prepare_clusters(loud, labels, None)
    assert not clustered_module._pooled_is_sound(groups, clustered_module._distinct_values(groups))
    # Too few clusters with any spread at all.
    few, few_labels = paired_deltas(clusters=50, repeats=6, seed=3)
    groups = clustered_module._prepare_clusters(few, few_labels, None)
    assert not clustered_module._pooled_is_sound(groups, clustered_module._distinct_values(groups))


def test_pooled_draw_with_constant_clusters_is_the_cluster_bootstrap() -> None:
    # No within-cluster spread: stage 2 changes nothing, and pooling is exact.
    labels = np.repeat(np.arange(200), 3)
    values = np.repeat(np.random.default_rng(4).normal(size=200), 3)
    pooled = cluster_bootstrap(values, labels, n_resamples=2_000, seed=5, within="pooled")
    clusters_only = cluster_bootstrap(
        values, labels, n_resamples=2_000, seed=5, resample_within=False
    )
    assert pooled.interval.low == pytest.approx(clusters_only.interval.low, abs=1e-12)
    assert pooled.interval.high == pytest.approx(clusters_only.interval.high, abs=1e-12)


def test_within_must_be_a_known_choice() -> None:
    with pytest.raises(ValueError, match="within must be 'auto', 'members', 'per-cluster' or"):
        cluster_bootstrap([1.0, 2.0, 3.0], [0, 0, 1], within="fast")  # type: ignore[arg-type]
