"""Paired tests and the Hodges–Lehmann shift: McNemar (exact and mid-p), Wilcoxon, sign test.

All take the two arms as paired sequences `x` and `y` (entry i of each is the same question).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats as sps

from plumbline.stats._validation import (
    ArrayLike,
    as_bool_vector,
    as_float_vector,
    as_paired_vectors,
    z_critical,
)
from plumbline.stats.arrays import FloatArray, IndexArray
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


def _pair_sum_positions(ordered: FloatArray, threshold: float) -> IndexArray:
    """For each row i, one past the last j ≥ i with `ordered[i] + ordered[j] ≤ threshold`.

    The sums are compared as computed in floating point, so counts, bounds and the final listing
    agree with sorting the materialised sums. A binary search for `threshold − ordered[i]`
    lands within a few ulps of each row's boundary (searched in ascending key order, which
    keeps numpy's search cache-friendly); the boundary is then moved over whole runs of equal
    values until the sums on either side of it fall on the right side of `threshold`
    (`fl(a + b)` is monotone in b, so each row moves one way only).
    """
    n = ordered.size
    index = np.arange(n)
    positions = np.searchsorted(ordered, (threshold - ordered)[::-1], side="right")[::-1]
    while True:
        ahead = np.minimum(positions, n - 1)
        right = (positions < n) & (ordered + ordered[ahead] <= threshold)
        behind = np.maximum(positions - 1, 0)
        left = (positions > 0) & (ordered + ordered[behind] > threshold)
        if not (right.any() or left.any()):
            break
        positions[right] = np.searchsorted(ordered, ordered[ahead[right]], side="right")
        positions[left] = np.searchsorted(ordered, ordered[behind[left]], side="left")
    return np.maximum(positions, index)


@dataclass
class _WalshBand:
    """The pair sums still in play: row i's candidates are `ordered[start_i:stop_i]`, every sum
    of the rows' earlier entries is ≤ `low` (`below` of them), every candidate is ≤ `high`
    (`above` sums in all are ≤ `high`)."""

    start: IndexArray
    stop: IndexArray
    below: int
    above: int
    low: float
    high: float


def _walsh_band(ordered: FloatArray) -> _WalshBand:
    n = ordered.size
    return _WalshBand(
        np.arange(n), np.full(n, n), 0, n * (n + 1) // 2, -math.inf, float(2 * ordered[-1])
    )


def _narrow(
    ordered: FloatArray, band: _WalshBand, first: int, last: int, *, rounds: int | None = None
) -> tuple[_WalshBand, tuple[float, float] | None]:
    """Shrink `band` around ranks `first..last` (1-based) until it holds at most a few n sums
    (or after `rounds` rounds); also return the two ranks' values when a probe separates them.

    Each round draws a uniform sample of the candidates, takes the sample values a few standard
    errors either side of the wanted ranks' positions and counts the sums at or below each
    exactly; the counts move the bounds, so the result never depends on the sample, only the
    running time does. A round that fails to halve the band (a long run of sums equal to the
    upper bound) is followed by a count just below that bound, which settles the run.
    """
    n = ordered.size
    index = np.arange(n)
    band = replace(band)
    limit = max(8 * n, 1 << 16)
    # Only where the rounds look depends on these draws, never the value returned.
    rng = np.random.default_rng(0x5EED)
    stalled = False

    def probe(value: float) -> tuple[float, float] | None:
        positions = _pair_sum_positions(ordered, value)
        count = int((positions - index).sum())
        if count < first:
            band.low, band.below, band.start = value, count, positions
        elif count >= last:
            band.high, band.above, band.stop = value, count, positions
        elif last == first + 1:  # count == first: the two ranks sit either side of `value`
            has_le, has_gt = positions > index, positions < n
            at_most = ordered[index[has_le]] + ordered[positions[has_le] - 1]
            beyond = ordered[index[has_gt]] + ordered[positions[has_gt]]
            return float(at_most.max()), float(beyond.min())
        return None

    done = 0
    while band.above - band.below > limit and (rounds is None or done < rounds):
        done += 1
        total = band.above - band.below
        found = None
        if stalled:
            # Sampled values equal to `high` (a run of equal sums) cannot split the band; test
            # whether every candidate equals `high` by counting just below it.
            below_high = float(np.nextafter(band.high, -math.inf))
            if not band.low < below_high:
                return band, (band.high, band.high)
            found = probe(below_high)
            if found is None and band.low == below_high:
                return band, (band.high, band.high)
            stalled = False
        else:
            lengths = band.stop - band.start
            ends = np.cumsum(lengths)
            size = min(total, 1 << 17)
            draws = rng.integers(0, total, size)
            row = np.searchsorted(ends, draws, side="right")
            sample = ordered[row] + ordered[band.start[row] + draws - (ends[row] - lengths[row])]
            spread = 2.0 * math.sqrt(size)  # four binomial standard errors at most
            lower_at = int(min(max((first - band.below) / total * size - spread, 0), size - 1))
            upper_at = int(min(max((last - band.below) / total * size + spread, 0), size - 1))
            values = np.partition(sample, [lower_at, upper_at])
            for value in (float(values[lower_at]), float(values[upper_at])):
                if found is None and band.low < value < band.high:
                    found = probe(value)
            stalled = band.above - band.below > total // 2
        if found is not None:
            return band, found
    return band, None


def _walsh_sum_order_statistics(
    ordered: FloatArray, first: int, last: int, band: _WalshBand | None = None
) -> tuple[float, float]:
    """The `first`-th and `last`-th smallest (1-based, `last ≤ first + 1`) pair sums
    `d_i + d_j`, i ≤ j, of the ascending `ordered`: exact, in expected O(n log n) time and O(n)
    memory.

    Randomised selection in the sorted-matrix form of Monahan (1984, ACM TOMS 10:265–270;
    after Johnson & Mizoguchi 1978): the candidate sums form a band of each row of the implicit
    sorted matrix `ordered[i] + ordered[j]`; sampled pivots with exact counts narrow it
    (`_narrow`) until at most a few n candidates remain, which are listed and selected among.
    The n(n+1)/2 sums are never materialised (5·10⁹ of them at n = 100,000).
    """
    band, found = _narrow(ordered, band or _walsh_band(ordered), first, last)
    if found is not None:
        return found
    lengths = band.stop - band.start
    owner = np.repeat(np.arange(ordered.size), lengths)
    offset = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    sums = ordered[owner] + ordered[np.repeat(band.start, lengths) + offset]
    positions = [first - band.below - 1, last - band.below - 1]
    selected = np.partition(sums, positions)
    return float(selected[positions[0]]), float(selected[positions[1]])


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
    of the Walsh averages are selected exactly by randomised band narrowing (Monahan 1984) in
    expected O(n log n) time and O(n) memory, never materialising the n(n+1)/2 averages.

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
    k = min(_signed_rank_lower_critical(n, level), (total + 1) // 2)
    # One shared round narrows the sums to the band holding the interval and the median.
    band, _ = _narrow(ordered, _walsh_band(ordered), k, total + 1 - k, rounds=1)
    if total % 2:
        middle = (total + 1) // 2
        estimate = _walsh_sum_order_statistics(ordered, middle, middle, band)[0] / 2
    else:
        estimate = sum(_walsh_sum_order_statistics(ordered, total // 2, total // 2 + 1, band)) / 4
    low = _walsh_sum_order_statistics(ordered, k, k, band)[0] / 2
    high = _walsh_sum_order_statistics(ordered, total + 1 - k, total + 1 - k, band)[0] / 2
    return EstimateResult(
        statistic=float(estimate),
        n=n,
        interval=ConfidenceInterval(
            low=float(low), high=float(high), level=level, method="Hodges-Lehmann (Wilcoxon)"
        ),
        standard_error=None,
        details={"n_walsh_averages": total, "critical_rank": k, "paired": y is not None},
    )
