"""The reliability metrics at scale compute the same numbers as their direct definitions.

The direct definitions are written out here (every pair of responses materialised, scipy's
`pdist`), and the fast forms must agree with them to rounding, with and without repeated
responses, with more responses than dimensions and fewer.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy.spatial.distance import pdist
from tests.reliability.test_analysis import bag_of_words, record

from plumbline.reliability.analysis import analyze
from plumbline.reliability.metrics import (
    consistency_score,
    latency_metrics,
    output_quality,
    semantic_agreement,
)
from plumbline.stats import bootstrap_interval, bootstrap_percentile_intervals


def pairwise_agreement_by_definition(vectors: Any, n_resamples: int, seed: int) -> tuple:
    """Mean similarity over the pairs of distinct original responses, every pair materialised."""
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    similarities = np.clip(unit @ unit.T, -1.0, 1.0)
    n = len(vectors)

    def statistic(indices: Any) -> Any:
        picked = indices.astype(int)
        values = similarities[picked[:, :, None], picked[:, None, :]]
        mask = np.triu(np.ones((n, n), dtype=bool), k=1) & (
            picked[:, :, None] != picked[:, None, :]
        )
        counts = mask.sum(axis=(1, 2))
        sums = np.where(mask, values, 0.0).sum(axis=(1, 2))
        return np.where(counts > 0, sums / np.maximum(counts, 1), 1.0)

    result = bootstrap_interval(
        np.arange(n, dtype=float), statistic, n_resamples=n_resamples, seed=seed
    )
    return result.interval.low, result.interval.high


def responses(n: int, dimensions: int, repeated: int, seed: int) -> Any:
    rng = np.random.default_rng(seed)
    distinct = rng.normal(size=(n, dimensions)) + 0.5
    return np.repeat(distinct, repeated, axis=0)


@pytest.mark.parametrize(
    ("n", "dimensions", "repeated"), [(12, 8, 1), (12, 3, 1), (6, 16, 4), (30, 5, 2)]
)
def test_agreement_interval_equals_the_pairwise_definition(
    n: int, dimensions: int, repeated: int
) -> None:
    vectors = responses(n, dimensions, repeated, seed=n + dimensions)
    fast = semantic_agreement(vectors, n_resamples=400, seed=7)
    low, high = pairwise_agreement_by_definition(vectors, 400, 7)
    assert fast.interval is not None
    assert fast.interval.low == pytest.approx(low, abs=1e-12)
    assert fast.interval.high == pytest.approx(high, abs=1e-12)
    assert -1.0 <= fast.interval.low <= fast.similarity <= fast.interval.high <= 1.0


@pytest.mark.parametrize(
    ("n", "dimensions", "repeated"), [(12, 8, 1), (40, 3, 1), (6, 16, 5), (2, 4, 1), (1, 4, 7)]
)
def test_distance_moments_equal_pdist(n: int, dimensions: int, repeated: int) -> None:
    vectors = responses(n, dimensions, repeated, seed=3 * n + dimensions)
    distances = pdist(vectors, "cosine")
    result = consistency_score(vectors)
    assert result.mean_distance == pytest.approx(float(np.mean(distances)), abs=1e-12)
    assert result.std_distance == pytest.approx(float(np.std(distances)), abs=1e-12)
    quality = output_quality(["some words here"] * len(vectors), vectors)
    assert quality.semantic_diversity == pytest.approx(float(np.mean(distances)), abs=1e-12)


def test_latency_percentile_intervals_equal_one_bootstrap_per_percentile() -> None:
    latencies = np.random.default_rng(2).lognormal(0.0, 0.5, size=57)
    result = latency_metrics(latencies, n_resamples=300, seed=11)
    together = bootstrap_percentile_intervals(latencies, [50, 95, 99], n_resamples=300, seed=11)
    for name, q, joint in zip(("p50", "p95", "p99"), (50, 95, 99), together, strict=True):
        alone = bootstrap_interval(
            latencies, lambda a, q=q: np.percentile(a, q, axis=-1), n_resamples=300, seed=11
        )
        assert joint.interval.low == alone.interval.low
        assert joint.interval.high == alone.interval.high
        assert result.percentile_intervals[name].low == alone.interval.low
        assert result.percentile_intervals[name].high == alone.interval.high


def test_analyze_reports_progress_to_the_last_step() -> None:
    records = [
        record(model, prompt, trial, response=f"answer {trial % 3} to {prompt}.")
        for model in ("m/a", "m/b")
        for prompt in ("p1", "p2", "p3")
        for trial in range(4)
    ]
    calls: list[tuple[int, int, str]] = []
    analyze(records, bag_of_words, progress=lambda *call: calls.append(call))
    # 3 prompts + whole-model metrics for each of 2 models, then 1 pair of models
    assert [done for done, _, _ in calls] == list(range(1, 10))
    assert {total for _, total, _ in calls} == {9}
    assert calls[0][2] == "m/a / p1: consistency and agreement"
    assert calls[-1][2] == "m/a vs m/b: effect sizes"
