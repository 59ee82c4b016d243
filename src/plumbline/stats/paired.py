"""Paired tests and the Hodges–Lehmann shift: McNemar (exact and mid-p), Wilcoxon, sign test.

All take the two arms as paired sequences `x` and `y` (entry i of each is the same question).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as sps

from plumbline.stats._validation import (
    ArrayLike,
    FloatArray,
    as_bool_vector,
    as_float_vector,
    as_paired_vectors,
    z_critical,
)
from plumbline.stats.result import ConfidenceInterval, EstimateResult, TestResult, check_level


def mcnemar_exact(x: ArrayLike, y: ArrayLike, *, mid_p: bool = False) -> TestResult:
    """McNemar's exact test for paired binary outcomes (e.g. question solved by arm x / arm y).

    Only discordant pairs carry information: `b` = x right and y wrong, `c` = x wrong and y right.
    Under H0 `b ~ Binomial(b + c, 1/2)`; the two-sided exact p-value is
    `min(1, 2·P(B ≤ min(b, c)))` (scipy.stats.binomtest). The mid-p version subtracts half the
    probability of the observed table, `2·P(B ≤ min(b, c)) − P(B = min(b, c))`, which is less
    conservative and holds its size well in simulation. With no discordant pairs, p = 1.

    The statistic is `b`. Reference: McNemar (1947), Psychometrika 12:153–157; Fagerland,
    Lydersen & Laake (2013), "The McNemar test for binary matched-pairs data: mid-p and
    asymptotic are better than exact conditional", BMC Med Res Methodol 13:91.
    """
    first = as_bool_vector(x, "x")
    second = as_bool_vector(y, "y")
    if first.size != second.size:
        raise ValueError(
            f"x and y must be paired (same length), got {first.size} and {second.size}"
        )
    if first.size == 0:
        raise ValueError("x and y need at least one pair")
    b = int(np.count_nonzero(first & ~second))
    c = int(np.count_nonzero(~first & second))
    discordant = b + c
    if discordant == 0:
        pvalue = 1.0
    elif mid_p:
        smaller = min(b, c)
        pvalue = 2 * float(sps.binom.cdf(smaller, discordant, 0.5)) - float(
            sps.binom.pmf(smaller, discordant, 0.5)
        )
        pvalue = min(1.0, pvalue)
    else:
        pvalue = float(sps.binomtest(b, discordant, 0.5).pvalue)
    return TestResult(
        statistic=float(b),
        pvalue=pvalue,
        method="McNemar mid-p" if mid_p else "McNemar exact",
        details={"b": b, "c": c, "n_discordant": discordant, "n": int(first.size)},
    )


def wilcoxon_signed_rank(x: ArrayLike, y: ArrayLike) -> TestResult:
    """Wilcoxon signed-rank test of the paired differences `x − y` (two-sided, scipy).

    Zero differences are dropped ("wilcox" zero method); scipy chooses the exact null
    distribution for small samples without ties and the normal approximation otherwise. When every
    difference is zero there is no evidence either way: statistic 0, p = 1.
    Reference: Wilcoxon (1945); scipy.stats.wilcoxon.
    """
    first, second = as_paired_vectors(x, y, min_size=1)
    differences = first - second
    nonzero = int(np.count_nonzero(differences))
    if nonzero == 0:
        statistic, pvalue = 0.0, 1.0
    else:
        outcome = sps.wilcoxon(differences, zero_method="wilcox")
        statistic, pvalue = float(outcome.statistic), float(outcome.pvalue)
    return TestResult(
        statistic=statistic,
        pvalue=pvalue,
        method="Wilcoxon signed-rank",
        details={"n": int(differences.size), "n_nonzero": nonzero, "zero_method": "wilcox"},
    )


def sign_test(x: ArrayLike, y: ArrayLike) -> TestResult:
    """Sign test: the number of pairs with `x > y` among non-tied pairs ~ Binomial(m, 1/2) under H0.

    Two-sided exact p-value from scipy.stats.binomtest; ties are dropped; p = 1 without any
    untied pair. The statistic is the count of positive differences.
    Reference: Conover (1999), "Practical Nonparametric Statistics", §3.4.
    """
    first, second = as_paired_vectors(x, y, min_size=1)
    differences = first - second
    positive = int(np.count_nonzero(differences > 0))
    negative = int(np.count_nonzero(differences < 0))
    untied = positive + negative
    pvalue = 1.0 if untied == 0 else float(sps.binomtest(positive, untied, 0.5).pvalue)
    return TestResult(
        statistic=float(positive),
        pvalue=pvalue,
        method="sign test",
        details={
            "n": int(differences.size),
            "positive": positive,
            "negative": negative,
            "ties": int(differences.size) - untied,
        },
    )


def _count_pair_sums_at_most(ordered: FloatArray, threshold: float) -> int:
    """Number of pairs i ≤ j with `ordered[i] + ordered[j] ≤ threshold` (ordered ascending)."""
    n = ordered.size
    upper = np.searchsorted(ordered, threshold - ordered, side="right")
    return int(np.maximum(upper - np.arange(n), 0).sum())


def _walsh_sum_order_statistic(ordered: FloatArray, rank: int) -> float:
    """The `rank`-th smallest (1-based) pair sum `d_i + d_j`, i ≤ j, in O(n log n) memory-light.

    Bisect on the value until few sums remain between the bounds, then list those and select.
    Avoids materialising all n(n+1)/2 Walsh averages (5·10⁹ of them at n = 100,000).
    """
    n = ordered.size
    low = float(2 * ordered[0])  # count(≤ low) ≥ 1
    high = float(2 * ordered[-1])  # count(≤ high) = all
    if _count_pair_sums_at_most(ordered, low) >= rank:
        return low
    # Invariant: below = count(≤ low) < rank ≤ above = count(≤ high).
    below = _count_pair_sums_at_most(ordered, low)
    above = n * (n + 1) // 2
    while above - below > max(4 * n, 4096):
        middle = low + (high - low) / 2
        if middle <= low or middle >= high:
            return high  # no double strictly between: every sum in (low, high] equals high
        count = _count_pair_sums_at_most(ordered, middle)
        if count >= rank:
            high, above = middle, count
        else:
            low, below = middle, count
    index = np.arange(n)
    start = np.maximum(np.searchsorted(ordered, low - ordered, side="right"), index)
    stop = np.maximum(np.searchsorted(ordered, high - ordered, side="right"), index)
    lengths = stop - start
    owner = np.repeat(index, lengths)
    first = np.repeat(start, lengths)
    offset = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    sums = ordered[owner] + ordered[first + offset]
    position = rank - below - 1
    return float(np.partition(sums, position)[position])


def _signed_rank_lower_critical(n: int, level: float) -> int:
    """Largest k with P(T ≤ k − 1) ≤ α/2 for the signed-rank statistic T (exact for n ≤ 300).

    The HL interval is then [W_(k), W_(M+1−k)] of the M = n(n+1)/2 sorted Walsh averages.
    """
    alpha = 1 - level
    total = n * (n + 1) // 2
    if n <= 300:
        # Exact null distribution by dynamic programming over ranks (counts of subsets per sum).
        counts = np.zeros(total + 1)
        counts[0] = 1.0
        for r in range(1, n + 1):
            counts[r:] = counts[r:] + counts[:-r].copy()
        cdf = np.cumsum(counts) / 2.0**n
        k = int(np.searchsorted(cdf, alpha / 2, side="right"))
        return max(k, 1)
    mean = total / 2
    sd = math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
    return max(math.floor(mean - z_critical(level) * sd), 1)


def hodges_lehmann(
    x: ArrayLike, y: ArrayLike | None = None, *, level: float = 0.95
) -> EstimateResult:
    """Hodges–Lehmann shift: the median of the Walsh averages `(d_i + d_j)/2` (i ≤ j) of x − y.

    With `y` omitted, `d = x` (a one-sample location estimate). The interval inverts the
    Wilcoxon signed-rank test: `[W_(k), W_(M+1−k)]` of the sorted Walsh averages, with k from the
    exact signed-rank distribution (n ≤ 300) or its normal approximation; when n is so small that
    no k reaches the level, the interval is the full range of the Walsh averages. Order statistics
    of the Walsh averages are found by bisection with O(n log n) counting, so large n needs no
    O(n²) memory.

    Reference: Hodges & Lehmann (1963), Ann. Math. Statist. 34:598–611; Hollander, Wolfe &
    Chicken (2014), "Nonparametric Statistical Methods", §3.2.
    """
    level = check_level(level)
    if y is None:
        differences = as_float_vector(x, "x", min_size=1)
    else:
        first, second = as_paired_vectors(x, y, min_size=1)
        differences = first - second
    ordered = np.sort(differences)
    n = ordered.size
    total = n * (n + 1) // 2
    if total % 2:
        estimate = _walsh_sum_order_statistic(ordered, (total + 1) // 2) / 2
    else:
        estimate = (
            _walsh_sum_order_statistic(ordered, total // 2)
            + _walsh_sum_order_statistic(ordered, total // 2 + 1)
        ) / 4
    k = min(_signed_rank_lower_critical(n, level), (total + 1) // 2)
    low = _walsh_sum_order_statistic(ordered, k) / 2
    high = _walsh_sum_order_statistic(ordered, total + 1 - k) / 2
    return EstimateResult(
        statistic=float(estimate),
        n=n,
        interval=ConfidenceInterval(
            low=float(low), high=float(high), level=level, method="Hodges-Lehmann (Wilcoxon)"
        ),
        standard_error=None,
        details={"n_walsh_averages": total, "critical_rank": k, "paired": y is not None},
    )
