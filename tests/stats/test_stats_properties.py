"""Property tests: intervals contain their estimate, widen with the level, and arms swap cleanly."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plumbline.stats import (
    bootstrap_interval,
    cert_ci_95,
    cliffs_delta,
    cluster_bootstrap,
    clustered_mean,
    cohens_d,
    geometric_mean_ratio,
    hodges_lehmann,
    mcnemar_exact,
    paired_bootstrap,
    proportion_interval,
    repeated_measures_mean,
    sign_test,
    t_interval,
    wilcoxon_signed_rank,
)

levels = st.floats(min_value=0.5, max_value=0.995)
values = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)
samples = st.lists(values, min_size=2, max_size=40)
positives = st.floats(min_value=1e-3, max_value=1e3)


@st.composite
def counts(draw: st.DrawFn) -> tuple[int, int]:
    trials = draw(st.integers(min_value=1, max_value=5_000))
    return draw(st.integers(min_value=0, max_value=trials)), trials


@st.composite
def pairs(draw: st.DrawFn, elements: st.SearchStrategy[float] = values) -> tuple[list, list]:
    n = draw(st.integers(min_value=2, max_value=30))
    x = draw(st.lists(elements, min_size=n, max_size=n))
    y = draw(st.lists(elements, min_size=n, max_size=n))
    return x, y


@st.composite
def two_levels(draw: st.DrawFn) -> tuple[float, float]:
    a, b = draw(levels), draw(levels)
    return min(a, b), max(a, b)


@settings(deadline=None)  # a shared CI machine makes per-example timing meaningless
@given(counts(), levels, st.sampled_from(["wilson", "exact", "wald"]))
def test_proportion_interval_contains_estimate(
    kn: tuple[int, int], level: float, method: str
) -> None:
    result = proportion_interval(*kn, method=method, level=level)
    assert 0.0 <= result.interval.low <= result.statistic <= result.interval.high <= 1.0


@settings(deadline=None)  # a shared CI machine makes per-example timing meaningless
@given(counts(), two_levels(), st.sampled_from(["wilson", "exact", "wald"]))
def test_proportion_interval_widens_with_level(
    kn: tuple[int, int], pair: tuple[float, float], method: str
) -> None:
    narrow = proportion_interval(*kn, method=method, level=pair[0]).interval
    wide = proportion_interval(*kn, method=method, level=pair[1]).interval
    assert wide.low <= narrow.low + 1e-12
    assert narrow.high <= wide.high + 1e-12


@settings(deadline=None)  # a shared CI machine makes per-example timing meaningless
@given(samples, two_levels())
def test_mean_intervals_contain_estimate_and_widen(
    data: list[float], pair: tuple[float, float]
) -> None:
    narrow = t_interval(data, level=pair[0])
    wide = t_interval(data, level=pair[1])
    tolerance = 1e-9 * (1 + max(abs(v) for v in data))
    assert narrow.interval.low - tolerance <= narrow.statistic <= narrow.interval.high + tolerance
    assert wide.interval.low <= narrow.interval.low + tolerance
    assert narrow.interval.high <= wide.interval.high + tolerance
    cert = cert_ci_95(data)
    assert cert.interval.low - tolerance <= cert.statistic <= cert.interval.high + tolerance


@settings(deadline=None)  # a shared CI machine makes per-example timing meaningless
@given(
    st.lists(st.lists(st.integers(0, 1), min_size=1, max_size=6), min_size=2, max_size=20),
    two_levels(),
)
def test_repeated_and_clustered_means_contain_estimate(
    rows: list[list[int]], pair: tuple[float, float]
) -> None:
    narrow = repeated_measures_mean(rows, level=pair[0])
    wide = repeated_measures_mean(rows, level=pair[1])
    assert narrow.interval.low - 1e-12 <= narrow.statistic <= narrow.interval.high + 1e-12
    assert wide.interval.low <= narrow.interval.low + 1e-12
    assert narrow.interval.high <= wide.interval.high + 1e-12
    flat = [v for row in rows for v in row]
    labels = [i for i, row in enumerate(rows) for _ in row]
    clustered = clustered_mean(flat, labels, level=pair[1])
    assert clustered.interval.low - 1e-12 <= clustered.statistic <= clustered.interval.high + 1e-12


@settings(max_examples=40, deadline=None)
@given(samples, two_levels(), st.integers(0, 2**32 - 1))
def test_bootstrap_percentile_widens_with_level(
    data: list[float], pair: tuple[float, float], seed: int
) -> None:
    narrow = bootstrap_interval(data, n_resamples=500, level=pair[0], seed=seed).interval
    wide = bootstrap_interval(data, n_resamples=500, level=pair[1], seed=seed).interval
    assert wide.low <= narrow.low and narrow.high <= wide.high
    labels = np.arange(len(data)) // 2
    if labels.max() >= 1:
        c_narrow = cluster_bootstrap(data, labels, n_resamples=500, level=pair[0], seed=seed)
        c_wide = cluster_bootstrap(data, labels, n_resamples=500, level=pair[1], seed=seed)
        assert c_wide.interval.low <= c_narrow.interval.low
        assert c_narrow.interval.high <= c_wide.interval.high


@settings(max_examples=40, deadline=None)
@given(pairs(), st.integers(0, 2**32 - 1), st.sampled_from(["percentile", "bca"]))
def test_swapping_arms_negates_paired_bootstrap(
    xy: tuple[list[float], list[float]], seed: int, method: str
) -> None:
    x, y = xy
    forward = paired_bootstrap(x, y, n_resamples=300, seed=seed, method=method)
    backward = paired_bootstrap(y, x, n_resamples=300, seed=seed, method=method)
    scale = 1e-9 * (1 + max(abs(v) for v in x + y))
    assert backward.statistic == pytest.approx(-forward.statistic, abs=scale)
    assert backward.interval.low == pytest.approx(-forward.interval.high, abs=scale)
    assert backward.interval.high == pytest.approx(-forward.interval.low, abs=scale)


# 40 examples, as the bootstrap properties above: each example computes two Hodges-Lehmann
# intervals and four signed-rank and sign tests (about 0.35 s).
@settings(max_examples=40, deadline=None)
@given(pairs())
def test_swapping_arms_negates_hodges_lehmann_and_flips_tests(
    xy: tuple[list[float], list[float]],
) -> None:
    x, y = xy
    forward = hodges_lehmann(x, y)
    backward = hodges_lehmann(y, x)
    scale = 1e-9 * (1 + max(abs(v) for v in x + y))
    assert backward.statistic == pytest.approx(-forward.statistic, abs=scale)
    assert backward.interval.low == pytest.approx(-forward.interval.high, abs=scale)
    assert forward.interval.low - scale <= forward.statistic <= forward.interval.high + scale
    # Brute force: the median of all Walsh averages.
    d = np.asarray(x) - np.asarray(y)
    i, j = np.triu_indices(d.size)
    assert forward.statistic == pytest.approx(np.median((d[i] + d[j]) / 2), abs=scale)
    assert sign_test(x, y).pvalue == pytest.approx(sign_test(y, x).pvalue)
    assert wilcoxon_signed_rank(x, y).pvalue == pytest.approx(wilcoxon_signed_rank(y, x).pvalue)


@settings(deadline=None)  # a shared CI machine makes per-example timing meaningless
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=60), st.booleans())
def test_swapping_arms_swaps_mcnemar_cells(cells: list[tuple[bool, bool]], mid_p: bool) -> None:
    x = [a for a, _ in cells]
    y = [b for _, b in cells]
    forward = mcnemar_exact(x, y, mid_p=mid_p)
    backward = mcnemar_exact(y, x, mid_p=mid_p)
    assert (forward.details["b"], forward.details["c"]) == (
        backward.details["c"],
        backward.details["b"],
    )
    assert forward.pvalue == pytest.approx(backward.pvalue)
    assert 0 <= forward.pvalue <= 1


@settings(deadline=None)  # a shared CI machine makes per-example timing meaningless
@given(pairs())
def test_swapping_arms_negates_effect_sizes(xy: tuple[list[float], list[float]]) -> None:
    x, y = xy
    delta = cliffs_delta(x, y)
    assert cliffs_delta(y, x).statistic == pytest.approx(-delta.statistic)
    assert -1 <= delta.interval.low <= delta.statistic <= delta.interval.high <= 1
    if np.std(x) + np.std(y) > 1e-6:
        assert cohens_d(y, x).statistic == pytest.approx(-cohens_d(x, y).statistic)


@settings(deadline=None)  # a shared CI machine makes per-example timing meaningless
@given(pairs(positives), st.booleans())
def test_swapping_arms_inverts_geometric_mean_ratio(
    xy: tuple[list[float], list[float]], paired: bool
) -> None:
    x, y = xy
    forward = geometric_mean_ratio(x, y, paired=paired)
    backward = geometric_mean_ratio(y, x, paired=paired)
    assert backward.statistic == pytest.approx(1 / forward.statistic)
    assert backward.interval.low == pytest.approx(1 / forward.interval.high)
    assert forward.interval.low <= forward.statistic * (1 + 1e-12)
    assert forward.statistic <= forward.interval.high * (1 + 1e-12)
