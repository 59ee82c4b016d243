"""Distribution-free intervals for percentiles from order statistics (binomial ranks).

For a continuous distribution with q-quantile ξ_q and a sample of n, the number of
observations below ξ_q is Binomial(n, q), so with ranks l < u of the sorted sample

    P(X_(l) ≤ ξ_q < X_(u)) = F(u − 1) − F(l − 1),   F = the Binomial(n, q) CDF,

whatever the distribution (Thompson 1936; David & Nagaraja 2003, §7.1; Conover 1999, §3.2).
`quantile_interval` picks the ranks narrowest apart whose exact coverage is at or above `level`
(then the smallest such coverage), so the coverage is guaranteed, and close to the level as
far as the discrete ranks allow. When n is too small for any two-sided pair (a p99 needs 299
values, a p95 59, a median 6 at 95%), it gives the one-sided lower bound `X_(l)` with
`P(Bin(n, q) ≥ l) ≥ level`, and no upper bound: nothing in a sample of n bounds the quantile
from above with that confidence (the largest of 25 values exceeds p99 only with probability
1 − 0.99²⁵ = 22%).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from scipy import stats as sps

from plumbline.stats._validation import ArrayLike, as_float_vector
from plumbline.stats.percentiles import percentile
from plumbline.stats.result import ConfidenceInterval, EstimateResult, check_level

Sided = Literal["two-sided", "lower", "none"]


def minimum_n_two_sided(q: float, level: float = 0.95) -> int:
    """The smallest n with a two-sided order-statistic interval for the q-quantile at `level`.

    With ranks 1 and n the coverage is `1 − q^n − (1 − q)^n`; the smallest n where that reaches
    `level` (299 for p99, 59 for p95, 6 for the median at 95%).
    """
    fraction = _fraction(q)
    check_level(level)
    n = 2
    while 1 - fraction**n - (1 - fraction) ** n < level:
        n += 1
    return n


def _fraction(q: float) -> float:
    if not (isinstance(q, int | float) and math.isfinite(q) and 0 < q < 100):
        raise ValueError(f"q must be a percentile strictly between 0 and 100, got {q!r}")
    return float(q) / 100.0


def quantile_ranks(n: int, q: float, level: float = 0.95) -> tuple[int | None, int | None, float]:
    """1-based ranks `(l, u)` of the order-statistic interval and its exact coverage.

    Two-sided when some pair reaches `level`: among the pairs whose coverage
    `F(u − 1) − F(l − 1)` is at least `level`, the narrowest in ranks (`u − l`), then the one
    with the smallest coverage. Otherwise `(l, None)` with the largest l whose one-sided coverage
    `1 − F(l − 1)` is at least `level`, or `(None, None)` when not even the minimum bounds it.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    fraction = _fraction(q)
    check_level(level)
    ranks = np.arange(0, n + 1)
    cdf = sps.binom.cdf(ranks, n, fraction)  # cdf[k] = F(k)
    below = np.concatenate(([0.0], cdf))  # below[r] = F(r − 1)
    # ranks further than 8 binomial SDs from n·q change the coverage by < 1e-15: leave them out
    spread = 8 * math.sqrt(n * fraction * (1 - fraction)) + 2
    first = max(1, math.floor(n * fraction - spread))
    last = min(n, math.ceil(n * fraction + spread) + 1)
    lows = np.arange(first, last + 1)[:, None]
    highs = np.arange(first, last + 1)[None, :]
    coverage = below[highs] - below[lows]
    valid = (highs > lows) & (coverage >= level - 1e-12)
    if np.any(valid):
        gaps = np.where(valid, highs - lows, n + 1)
        narrowest = np.argwhere(gaps == np.min(gaps))
        chosen = coverage[narrowest[:, 0], narrowest[:, 1]]
        low_index, high_index = narrowest[int(np.argmin(chosen))]
        best = float(coverage[low_index, high_index])
        return int(low_index) + first, int(high_index) + first, best
    one_sided = 1.0 - below[1 : n + 1]  # P(Bin ≥ l) for l = 1..n
    reach = np.flatnonzero(one_sided >= level - 1e-12)
    if reach.size == 0:
        return None, None, float(one_sided[0])
    rank = int(reach[-1]) + 1
    return rank, None, float(one_sided[rank - 1])


def quantile_interval(values: ArrayLike, q: float, *, level: float = 0.95) -> EstimateResult:
    """Distribution-free confidence interval for the q-th percentile (0 < q < 100).

    The point estimate is numpy's "linear" percentile (as CERT computes it); the bounds are
    order statistics `X_(l)`, `X_(u)` from `quantile_ranks`, whose coverage holds for every
    continuous distribution (ties only make it larger). A missing bound is ±inf (a document
    shows null), and `details["sided"]` is "two-sided", "lower" (no upper bound exists at this
    n) or "none"; `details["coverage"]` is the exact binomial coverage of the chosen ranks and
    `details["two_sided_from_n"]` the n a two-sided interval needs. Reference: David &
    Nagaraja (2003), "Order Statistics", §7.1; Conover (1999), "Practical Nonparametric
    Statistics", §3.2; scipy.stats.binom.
    """
    data = np.sort(as_float_vector(values, "values", min_size=1))
    n = int(data.size)
    low_rank, high_rank, coverage = quantile_ranks(n, q, level)
    needed = minimum_n_two_sided(q, level)
    low = float(data[low_rank - 1]) if low_rank is not None else -math.inf
    high = float(data[high_rank - 1]) if high_rank is not None else math.inf
    sided: Sided = "two-sided" if high_rank is not None else "lower" if low_rank else "none"
    if sided == "two-sided":
        method = f"order statistics (binomial ranks {low_rank} and {high_rank} of {n})"
    elif sided == "lower":
        method = (
            f"order statistics: one-sided lower bound (rank {low_rank} of {n}); no upper bound "
            f"at n = {n} (a two-sided {level:.0%} interval needs n ≥ {needed})"
        )
    else:
        method = f"order statistics: no bound at n = {n} (a two-sided interval needs n ≥ {needed})"
    return EstimateResult(
        statistic=float(percentile(data, q)),
        n=n,
        interval=ConfidenceInterval(low, high, level, method),
        details={
            "sided": sided,
            "coverage": coverage,
            "lower_rank": low_rank,
            "upper_rank": high_rank,
            "two_sided_from_n": needed,
        },
    )
