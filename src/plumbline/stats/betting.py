"""Anytime-valid one-sided tests of a finite population's mean, sampled without replacement, by
betting: the p-value holds at every look at once, so a procedure may stop whenever it likes.

`without_replacement_pvalues`: Waudby-Smith & Ramdas (2023), "Estimating means of bounded random
variables by betting", JRSSB 86(1), §5 (the capital process) and §6 (sampling without
replacement; also Waudby-Smith & Ramdas 2020, NeurIPS 33, §3). The population is `N` values in
[0, 1] with mean μ, drawn in a uniformly random order `x_1, x_2, …`. To test `H: μ ≤ m`, the
mean of the next draw under `μ = m`, given the first `i − 1`, is

    m_i = (N m − S_{i−1}) / (N − i + 1),      S_{i−1} = x_1 + … + x_{i−1},

and for bets λ_i ∈ [0, c / m_i] fixed before `x_i` is seen (c < 1),

    K_t = Π_{i≤t} (1 + λ_i (x_i − m_i))

is a nonnegative supermartingale from 1 under every μ ≤ m (the next draw's true mean is at most
m_i, and λ_i ≥ 0). By Ville's inequality `sup_t K_t ≥ 1/a` with probability at most a, so
`p_t = min(1, 1 / max_{s≤t} K_s)` is an anytime-valid p-value. Where `m_i ≤ 0` the values drawn
already exceed what the null allows: the null is refuted for sure (p = 0). The bets are the
approximate growth-rate-adaptive bets (aGRAPA, WSR 2023 §5.1)

    λ_i = clip((μ̂_{i−1} − m_i) / (σ̂²_{i−1} + (μ̂_{i−1} − m_i)²), 0, c / m_i),
    μ̂_i = (1/2 + S_i) / (i + 1),    σ̂²_i = (1/4 + Σ_{j≤i} (x_j − μ̂_j)²) / (i + 1),

with c = 1/2. `H: μ ≥ m` is the same test on the values 1 − x. Values on [low, high] are
rescaled to [0, 1]. The guarantee is about the N values themselves and holds for every
population: no distribution is assumed.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt

from plumbline.stats._validation import ArrayLike
from plumbline.stats.arrays import FloatArray
from plumbline.stats.confidence_sequences import unit_draws

Direction = Literal["above", "below"]
#: The largest bet as a share of the most the null allows (WSR's c; any c < 1 keeps the guarantee).
MAX_BET = 0.5
#: Rounding allowance on the [0, 1] scale.
TOLERANCE = 1e-9
METHOD = "betting test, aGRAPA bets, sampling without replacement (Waudby-Smith & Ramdas 2023)"


def _log_capital(x: FloatArray, population: int, null_mean: float) -> FloatArray:
    """log K_t after each value, for `H: μ ≤ null_mean` over values in [0, 1]."""
    i = np.arange(1, x.size + 1, dtype=float)
    drawn = np.cumsum(x)
    before = np.concatenate([[0.0], drawn[:-1]])
    remaining = population - i + 1
    next_mean = (population * null_mean - before) / remaining
    estimate = (0.5 + drawn) / (i + 1)
    previous = np.concatenate([[0.5], estimate[:-1]])
    variances = (0.25 + np.cumsum((x - estimate) ** 2)) / (i + 1)
    previous_variance = np.concatenate([[0.25], variances[:-1]])
    edge = previous - next_mean
    # Where the null leaves (within rounding) nothing but zeros or ones to draw, no bet is
    # placed; the values drawn refute the null for sure once their sum passes N · null_mean.
    playable = (next_mean > TOLERANCE) & (next_mean < 1 - TOLERANCE)
    safe_mean = np.where(playable, next_mean, 1.0)
    raw = edge / (previous_variance + edge**2)
    bets = np.where(playable, np.clip(raw, 0.0, MAX_BET / safe_mean), 0.0)
    steps = np.log1p(bets * (x - np.where(playable, next_mean, x)))
    refuted = drawn > population * null_mean + TOLERANCE * population
    return np.where(np.maximum.accumulate(refuted), np.inf, np.cumsum(steps))


def without_replacement_pvalues(
    values: ArrayLike,
    population: int,
    null_mean: float,
    direction: Direction,
    *,
    low: float = 0.0,
    high: float = 1.0,
) -> FloatArray:
    """The anytime-valid p-value after each value of `H: mean ≤ null_mean` (`direction="above"`:
    small p says the mean is above it) or `H: mean ≥ null_mean` (`"below"`), for `population`
    values on [low, high] of which `values` are the first drawn in a uniformly random order."""
    _, x = unit_draws(values, population, low, high)
    span = high - low
    m = (null_mean - low) / span
    if direction == "below":
        x, m = 1.0 - x, 1.0 - m
    if m < 0:
        return np.zeros(x.size)
    if m >= 1:
        return np.ones(x.size)
    best = np.maximum.accumulate(_log_capital(x, population, m))
    pvalues: FloatArray = np.minimum(1.0, np.exp(-np.maximum(best, 0.0)))
    return pvalues


def holm_rejections(pvalues: FloatArray, alpha: float) -> npt.NDArray[np.bool_]:
    """Holm's step-down (Holm 1979): sort the p-values, reject while the j-th smallest
    (j = 1, 2, …, of m) is at most α / (m − j + 1). The family-wise error is at most α whatever
    the dependence; with anytime-valid p-values (running minima), at every look at once."""
    order = np.argsort(pvalues, kind="stable")
    count = pvalues.size
    thresholds = alpha / (count - np.arange(count))
    passed = pvalues[order] <= thresholds
    stop = int(np.argmin(passed)) if not passed.all() else count
    rejected = np.zeros(count, dtype=bool)
    rejected[order[:stop]] = True
    return rejected
