"""The reliability metrics at scale compute the same numbers as their direct definitions.

The direct definitions are written out here (every pair of responses materialised, scipy's
`pdist`), and the fast forms must agree with them to rounding, with and without repeated
responses, with more responses than dimensions and fewer.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy import stats
from scipy.spatial.distance import pdist
from tests.reliability.test_analysis import bag_of_words, record

from plumbline.reliability.analysis import analyze
from plumbline.reliability.metrics import (
    consistency_score,
    latency_metrics,
    output_quality,
    semantic_agreement,
)


def pairwise_agreement_by_definition(vectors: Any) -> tuple[float, float, float]:
    """Mean similarity over every pair, and the jackknife t interval with every leave-one-out
    mean computed from its own materialised pairs."""
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    similarities = np.clip(unit @ unit.T, -1.0, 1.0)
    n = len(vectors)
    mean = similarities[np.triu_indices(n, 1)].mean()
    leave_out = np.array(
        [
            similarities[np.ix_(keep, keep)][np.triu_indices(n - 1, 1)].mean()
            for keep in (np.delete(np.arange(n), i) for i in range(n))
        ]
    )
    se = np.sqrt((n - 1) / n * np.sum((leave_out - leave_out.mean()) ** 2))
    half = stats.t.ppf(0.975, n - 1) * se
    return float(mean), float(mean - half), float(mean + half)


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
    fast = semantic_agreement(vectors)
    mean, low, high = pairwise_agreement_by_definition(vectors)
    assert fast.interval is not None
    assert fast.similarity == pytest.approx(mean, abs=1e-12)
    assert fast.interval.low == pytest.approx(max(-1.0, low), abs=1e-12)
    assert fast.interval.high == pytest.approx(min(1.0, high), abs=1e-12)
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


def test_latency_percentile_intervals_are_the_binomial_order_statistics() -> None:
    latencies = np.random.default_rng(2).lognormal(0.0, 0.5, size=4000)
    result = latency_metrics(latencies)
    ordered = np.sort(latencies)
    for name, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99)):
        interval = result.percentile_intervals[name]
        assert interval.low is not None and interval.high is not None
        low = int(np.searchsorted(ordered, interval.low)) + 1  # 1-based ranks
        high = int(np.searchsorted(ordered, interval.high)) + 1
        coverage = stats.binom.cdf(high - 1, 4000, q) - stats.binom.cdf(low - 1, 4000, q)
        assert 0.95 <= coverage < 0.96


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
