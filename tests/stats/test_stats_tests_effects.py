"""Paired tests, Hodges–Lehmann, effect sizes, multiple comparisons vs scipy and brute force."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from plumbline.stats import (
    benjamini_hochberg,
    cliffs_delta,
    cohens_d,
    cohens_d_clustered,
    geometric_mean_ratio,
    hodges_lehmann,
    holm,
    mcnemar_exact,
    min_p_step_down,
    sign_test,
    wilcoxon_signed_rank,
)
from plumbline.stats.paired import _signed_rank_lower_critical


def test_mcnemar_exact_is_binomial_on_discordant_pairs() -> None:
    # 12 questions only arm x solves, 3 only arm y solves, 20 both, 5 neither.
    x = [1] * 12 + [0] * 3 + [1] * 20 + [0] * 5
    y = [0] * 12 + [1] * 3 + [1] * 20 + [0] * 5
    result = mcnemar_exact(x, y)
    assert (result.details["b"], result.details["c"], result.details["n"]) == (12, 3, 40)
    assert result.pvalue == pytest.approx(sps.binomtest(12, 15, 0.5).pvalue)
    assert result.method == "McNemar exact"
    mid = mcnemar_exact(x, y, mid_p=True)
    expected = 2 * sps.binom.cdf(3, 15, 0.5) - sps.binom.pmf(3, 15, 0.5)
    assert mid.pvalue == pytest.approx(expected)
    assert mid.pvalue < result.pvalue
    assert mcnemar_exact(y, x).pvalue == pytest.approx(result.pvalue)


def test_mcnemar_edge_cases_and_validation() -> None:
    same = mcnemar_exact([True, False, True], [True, False, True])
    assert same.pvalue == 1.0 and same.details["n_discordant"] == 0
    assert mcnemar_exact([1], [0], mid_p=True).pvalue == pytest.approx(0.5)
    with pytest.raises(ValueError, match=r"x\[1\] is 2.0; expected a boolean"):
        mcnemar_exact([1, 2], [0, 1])
    with pytest.raises(ValueError, match="x and y must be paired"):
        mcnemar_exact([1, 0], [1])


def test_wilcoxon_and_sign_test_match_scipy() -> None:
    rng = np.random.default_rng(12)
    x = rng.normal(0.2, 1.0, size=40)
    y = rng.normal(0.0, 1.0, size=40)
    x[3] = y[3]  # one zero difference, dropped by both tests
    ours = wilcoxon_signed_rank(x, y)
    theirs = sps.wilcoxon(x, y, zero_method="wilcox")
    assert ours.statistic == pytest.approx(theirs.statistic)
    assert ours.pvalue == pytest.approx(theirs.pvalue)
    assert ours.details["n_nonzero"] == 39
    sign = sign_test(x, y)
    positive = int(np.sum(x > y))
    assert sign.statistic == positive
    assert sign.pvalue == pytest.approx(sps.binomtest(positive, 39, 0.5).pvalue)
    assert sign.details["ties"] == 1
    zero = wilcoxon_signed_rank([1.0, 2.0], [1.0, 2.0])
    assert (zero.statistic, zero.pvalue) == (0.0, 1.0)
    assert sign_test([1.0], [1.0]).pvalue == 1.0


def _walsh(d: np.ndarray) -> np.ndarray:
    i, j = np.triu_indices(d.size)
    return np.sort((d[i] + d[j]) / 2)


@pytest.mark.parametrize("n", [1, 2, 5, 12, 31, 200])
def test_hodges_lehmann_matches_brute_force_walsh_averages(n: int) -> None:
    rng = np.random.default_rng(n)
    x = np.round(rng.normal(size=n), 1)  # rounding creates ties among Walsh averages
    y = np.round(rng.normal(size=n), 1)
    walsh = _walsh(x - y)
    result = hodges_lehmann(x, y)
    assert result.statistic == pytest.approx(np.median(walsh))
    k = result.details["critical_rank"]
    assert result.interval.low == pytest.approx(walsh[k - 1])
    assert result.interval.high == pytest.approx(walsh[walsh.size - k])
    assert result.details["n_walsh_averages"] == n * (n + 1) // 2


def test_hodges_lehmann_large_n_without_quadratic_memory() -> None:
    d = np.random.default_rng(1).standard_t(3, size=60_000) + 0.25
    result = hodges_lehmann(d)  # 1.8e9 Walsh averages would need 14 GB if materialised
    assert result.statistic == pytest.approx(0.25, abs=0.02)
    assert result.interval.low < result.statistic < result.interval.high
    assert result.details["paired"] is False


def test_signed_rank_critical_value_matches_exact_null_distribution() -> None:
    for n in (6, 10):
        k = _signed_rank_lower_critical(n, 0.95)
        # Brute force the signed-rank statistic over all 2^n sign patterns.
        patterns = np.array(list(itertools.product([0, 1], repeat=n)))
        sums = patterns @ np.arange(1, n + 1)
        assert np.mean(sums <= k - 1) <= 0.025 < np.mean(sums <= k)
    # Table value (Hollander & Wolfe): n = 20, two-sided 95% -> k = 53.
    assert _signed_rank_lower_critical(20, 0.95) == 53
    # The normal approximation takes over smoothly above n = 300.
    exact = _signed_rank_lower_critical(300, 0.95)
    approximate = _signed_rank_lower_critical(301, 0.95)
    assert 0 < approximate - exact < 400


def test_cohens_d_closed_form() -> None:
    x = np.array([5.0, 6.0, 7.0, 8.0, 9.0])
    y = np.array([3.0, 4.0, 5.0, 6.0])
    result = cohens_d(x, y)
    pooled = math.sqrt((4 * np.var(x, ddof=1) + 3 * np.var(y, ddof=1)) / 7)
    d = (7.0 - 4.5) / pooled
    assert result.statistic == pytest.approx(d)
    se = math.sqrt(9 / 20 + d * d / 18)
    assert result.standard_error == pytest.approx(se)
    assert result.interval.low == pytest.approx(d - sps.norm.ppf(0.975) * se)
    assert result.details["hedges_g"] == pytest.approx(d * (1 - 3 / 27))
    with pytest.raises(ValueError, match="zero pooled standard deviation"):
        cohens_d([1.0, 1.0], [1.0, 1.0])


def test_cliffs_delta_matches_pairwise_definition() -> None:
    rng = np.random.default_rng(4)
    x = rng.integers(0, 6, size=23).astype(float)
    y = rng.integers(1, 7, size=17).astype(float)
    signs = np.sign(x[:, None] - y[None, :])
    delta = signs.mean()
    result = cliffs_delta(x, y)
    assert result.statistic == pytest.approx(delta)
    # Cliff's variance, written out over the full matrix.
    rows, columns = signs.mean(axis=1), signs.mean(axis=0)
    m, n = x.size, y.size
    variance = (
        n * n * np.sum((rows - delta) ** 2)
        + m * m * np.sum((columns - delta) ** 2)
        - np.sum((signs - delta) ** 2)
    ) / (m * n * (m - 1) * (n - 1))
    assert result.standard_error == pytest.approx(math.sqrt(variance))
    assert -1 <= result.interval.low < delta < result.interval.high <= 1
    # δ = 2·P(X > Y) + P(X = Y) − 1 = 2·AUC − 1, the Mann–Whitney relation.
    u = sps.mannwhitneyu(x, y).statistic
    assert result.statistic == pytest.approx(2 * u / (m * n) - 1)
    assert cliffs_delta(y, x).statistic == pytest.approx(-delta)


def test_cliffs_delta_complete_separation_is_flagged() -> None:
    result = cliffs_delta([5.0, 6.0, 7.0], [1.0, 2.0])
    assert result.statistic == 1.0
    assert result.details["degenerate_interval"] is True


def test_geometric_mean_ratio_paired_and_unpaired() -> None:
    rng = np.random.default_rng(5)
    y = rng.lognormal(1.0, 0.5, size=30)
    x = y * rng.lognormal(np.log(0.8), 0.1, size=30)
    paired = geometric_mean_ratio(x, y, paired=True)
    logs = np.log(x) - np.log(y)
    assert paired.statistic == pytest.approx(math.exp(logs.mean()))
    low, high = sps.t.interval(0.95, 29, loc=logs.mean(), scale=sps.sem(logs))
    assert paired.interval.low == pytest.approx(math.exp(low))
    assert paired.interval.high == pytest.approx(math.exp(high))
    unpaired = geometric_mean_ratio(x, y)
    assert unpaired.statistic == pytest.approx(paired.statistic)
    welch = sps.ttest_ind(np.log(x), np.log(y), equal_var=False).confidence_interval(0.95)
    assert unpaired.interval.low == pytest.approx(math.exp(welch.low))
    assert unpaired.interval.high == pytest.approx(math.exp(welch.high))
    # Pairing removes the shared per-item variation, so its interval is much narrower.
    assert (
        paired.interval.high - paired.interval.low < unpaired.interval.high - unpaired.interval.low
    )
    with pytest.raises(ValueError, match=r"y\[1\] is 0.0; geometric means need strictly positive"):
        geometric_mean_ratio([1.0, 2.0], [1.0, 0.0])


def test_holm_and_bh_match_references() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.005, 0.2, 0.5])
    # Holm written out: sorted p = .005 .01 .03 .04 .2 .5 with multipliers 6..1, running max.
    expected_sorted = np.maximum.accumulate(np.array([0.03, 0.05, 0.12, 0.12, 0.4, 0.5]))
    order = np.argsort(p)
    expected = np.empty(6)
    expected[order] = expected_sorted
    assert holm(p) == pytest.approx(expected)
    assert benjamini_hochberg(p) == pytest.approx(sps.false_discovery_control(p, method="bh"))
    assert holm([0.8, 0.01]) == pytest.approx([0.8, 0.02])
    assert holm([0.9, 0.8]) == pytest.approx([1.0, 1.0])
    assert holm([]).size == 0 and benjamini_hochberg([]).size == 0
    with pytest.raises(ValueError, match=r"pvalues\[0\] is 1.5"):
        holm([1.5])


def _min_p_by_definition(statistics: np.ndarray) -> np.ndarray:
    """Westfall & Young's Algorithm 2.8 written out loop by loop."""
    rows, tests = statistics.shape
    p = np.array(
        [
            [np.sum(statistics[:, j] <= statistics[b, j]) / rows for j in range(tests)]
            for b in range(rows)
        ]
    )
    order = sorted(range(tests), key=lambda j: (p[0, j], j))
    adjusted, running = np.empty(tests), 0.0
    for k, j in enumerate(order):
        rest = order[k:]
        share = sum(min(p[b, r] for r in rest) <= p[0, j] for b in range(rows)) / rows
        running = max(running, share)
        adjusted[j] = running
    return adjusted


def test_min_p_step_down_follows_the_algorithm_and_its_extremes() -> None:
    rng = np.random.default_rng(3)
    statistics = rng.normal(size=(60, 4))
    statistics[0] = [-2.5, -0.3, -1.9, 0.4]
    result = min_p_step_down(statistics)
    assert result.adjusted == pytest.approx(_min_p_by_definition(statistics))
    assert np.all(result.adjusted >= result.pvalues)
    assert result.pvalues[0] == np.sum(statistics[:, 0] <= -2.5) / 60
    # one test: nothing to adjust; identical tests: adjusted as one; Holm bounds it above
    alone = min_p_step_down(statistics[:, :1])
    assert alone.adjusted == pytest.approx(alone.pvalues)
    assert alone.critical_p(0.05) == pytest.approx(3 / 60)
    twins = min_p_step_down(np.column_stack([statistics[:, 0]] * 3))
    assert twins.adjusted == pytest.approx([alone.pvalues[0]] * 3)
    assert np.all(result.adjusted <= holm(result.pvalues) + 1e-12)
    # the first-step threshold: a test with that raw p-value is rejected, and a larger one not
    many = min_p_step_down(rng.normal(size=(4001, 6)))
    assert 0.05 / 6 * 0.8 < many.critical_p(0.05) < 0.05 / 6 * 1.3
    assert min_p_step_down(np.zeros((5, 0))).adjusted.size == 0
    with pytest.raises(ValueError, match="2-D"):
        min_p_step_down(np.zeros(5))


def test_min_p_step_down_holds_its_level_with_dependent_and_discrete_tests() -> None:
    """Under the joint null (the observed row exchangeable with the resamples) the chance of any
    adjusted p ≤ 0.05 is at most 5%: here two correlated continuous tests, a pair of tied
    discrete ones and two independent ones."""
    rng = np.random.default_rng(11)
    rejected = 0
    replicates = 2000
    for _ in range(replicates):
        shared = rng.normal(size=(200, 1))
        columns = [
            shared + 0.3 * rng.normal(size=(200, 1)),
            shared,
            np.round(rng.normal(size=(200, 2))),
            rng.normal(size=(200, 2)),
        ]
        rejected += bool(np.any(min_p_step_down(np.hstack(columns)).adjusted <= 0.05))
    rate = rejected / replicates
    assert rate <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / replicates)
    assert rate > 0.02  # not vacuously conservative


@pytest.mark.parametrize("decimals", [0, 1, 3])
def test_hodges_lehmann_selection_equals_sorting_every_walsh_sum(decimals: int) -> None:
    # n = 2,000 has 2,001,000 Walsh sums, beyond what is listed directly, so the sampled
    # narrowing runs; rounding makes long runs of equal sums. Equal to the last bit.
    rng = np.random.default_rng(decimals)
    d = np.round(rng.standard_t(3, size=2_000), decimals)
    ordered = np.sort(d)
    i, j = np.triu_indices(d.size)
    sums = np.sort(ordered[i] + ordered[j])
    result = hodges_lehmann(d)
    k = result.details["critical_rank"]
    middle = sums.size // 2
    assert result.statistic == (sums[middle - 1] + sums[middle]) / 4
    assert result.interval.low == sums[k - 1] / 2
    assert result.interval.high == sums[sums.size - k] / 2


def test_cohens_d_clustered_by_hand() -> None:
    x, y = [1.0, 2.0, 3.0, 4.0], [0.0, 1.0, 1.0, 2.0]
    clusters = ["a", "a", "b", "b"]
    result = cohens_d_clustered(x, y, clusters, clusters)
    plain = cohens_d(x, y)
    assert result.statistic == pytest.approx(plain.statistic)
    # influence per cluster: a: (−1.5 − 0.5)/4 − (−1 + 0)/4 = −0.25; b: +0.25; C/(C−1) = 2
    variance = 2 * (0.25**2 + 0.25**2)
    pooled = plain.details["pooled_sd"]
    d = plain.statistic
    se = math.sqrt(variance / pooled**2 + d * d / 16)
    assert result.standard_error == pytest.approx(se)
    half = sps.t.ppf(0.975, 1) * se
    assert result.interval.low == pytest.approx(d - half)
    assert result.interval.high == pytest.approx(d + half)
    assert result.details["clusters"] == 2


def test_cohens_d_clustered_counts_prompts_not_trials() -> None:
    rng = np.random.default_rng(3)
    prompts = np.repeat(np.arange(8), 20)
    offsets = rng.normal(0, 2, 8)[prompts]
    noise = rng.normal(0, 0.3, (2, prompts.size))
    # a prompt effect both models share cancels: narrower than trials-as-independent
    shared = cohens_d_clustered(offsets + noise[0] + 0.1, offsets + noise[1], prompts, prompts)
    assert (
        shared.standard_error
        < cohens_d(offsets + noise[0] + 0.1, offsets + noise[1]).standard_error
    )
    # one model's own prompt effect: the 8 prompts, not the 160 trials, set the width
    own = cohens_d_clustered(offsets + noise[0], noise[1], prompts, prompts)
    assert own.standard_error > 2 * cohens_d(offsets + noise[0], noise[1]).standard_error
    with pytest.raises(ValueError, match="at least 2 distinct clusters"):
        cohens_d_clustered([1.0, 2.0], [0.0, 1.0], ["a", "a"], ["a", "a"])
