"""An anytime-valid confidence sequence for the mean of a finite population sampled without
replacement: the interval holds at every look at once, so a procedure may stop whenever it likes.

`without_replacement_sequence`: Waudby-Smith & Ramdas (2020), "Confidence sequences for sampling
without replacement", NeurIPS 33, the predictable-plug-in empirical-Bernstein sequence
(their Theorem 3, with the bets of their §3.2). The population is `N` values in [0, 1] with mean
μ; they are drawn in a uniformly random order, `x_1, x_2, …`. Given the first `i − 1` draws,
the next one's mean is

    μ_i = (N μ − S_{i−1}) / (N − i + 1),      S_{i−1} = x_1 + … + x_{i−1},

and for bets λ_i ∈ [0, 1) fixed before `x_i` is seen,

    M_t(μ) = Π_{i≤t} exp(λ_i (x_i − μ_i) − v_i ψ_E(λ_i)),
    v_i = 4 (x_i − μ̂_{i−1})²,   ψ_E(λ) = (−log(1 − λ) − λ) / 4,

is a nonnegative supermartingale from 1 (Fan, Grama & Liu 2015's inequality; Howard, Ramdas,
McAuliffe & Sekhon 2021, Ann. Statist. 49(2), §A.8). By Ville's inequality it ever reaches
2/α with probability at most α/2, at any stopping time. Solving `M_t(μ) < 2/α` for μ (it is
linear in μ inside the exponent) gives, with `w_i = λ_i N / (N − i + 1)`,

    low_t  = (Σ λ_i (x_i + S_{i−1}/(N − i + 1)) − log(2/α) − Σ v_i ψ_E(λ_i)) / Σ w_i,

and `high_t` the same with `+ log(2/α) + Σ v_i ψ_E(λ_i)` (the bound for the values 1 − x).
The sequence reported is the running intersection (still valid: the event is the same). The
bets are WSR's predictable plug-in

    λ_i = min(√(2 log(2/α) / (σ̂²_{i−1} i log(1 + i))), 1/2),
    μ̂_i = (1/2 + S_i) / (i + 1),    σ̂²_i = (1/4 + Σ_{j≤i} (x_j − μ̂_j)²) / (i + 1),

which need no sample size fixed in advance. Values on [low, high] are rescaled to [0, 1].
The guarantee is about the N values themselves (a finite population), not a larger one they
came from, and holds for every population: no distribution is assumed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from plumbline.stats._validation import ArrayLike, as_float_vector
from plumbline.stats.arrays import FloatArray
from plumbline.stats.result import check_level

#: The largest bet (WSR's truncation; any constant in (0, 1) keeps the guarantee).
MAX_BET = 0.5
METHOD = (
    "empirical-Bernstein confidence sequence, sampling without replacement "
    "(Waudby-Smith & Ramdas 2020)"
)


@dataclass(frozen=True)
class ConfidenceSequence:
    """The running means and the interval after each value (`lows[t]`, `highs[t]` after t + 1).

    Every interval holds at once with probability at least `level`, so any of them (in
    particular the one where a procedure chose to stop) is a valid interval for the mean of the
    whole population of `population` values.
    """

    means: FloatArray
    lows: FloatArray
    highs: FloatArray
    population: int
    level: float
    method: str = METHOD

    @property
    def n(self) -> int:
        return int(self.means.size)

    @property
    def low(self) -> float:
        return float(self.lows[-1])

    @property
    def high(self) -> float:
        return float(self.highs[-1])

    @property
    def mean(self) -> float:
        return float(self.means[-1])


def _bets(x: FloatArray, alpha: float) -> FloatArray:
    i = np.arange(1, x.size + 1, dtype=float)
    running = (0.5 + np.cumsum(x)) / (i + 1)
    variances = (0.25 + np.cumsum((x - running) ** 2)) / (i + 1)
    previous = np.concatenate([[0.25], variances[:-1]])
    raw = np.sqrt(2 * math.log(2 / alpha) / (previous * i * np.log1p(i)))
    bets: FloatArray = np.minimum(raw, MAX_BET)
    return bets


def _bounds(x: FloatArray, population: int, alpha: float) -> tuple[FloatArray, FloatArray]:
    """The running-intersection bounds of the mean of `population` values in [0, 1]."""
    i = np.arange(1, x.size + 1, dtype=float)
    bets = _bets(x, alpha)
    before = np.concatenate([[0.0], np.cumsum(x)[:-1]])
    remaining = population - i + 1
    previous_mean = np.concatenate([[0.5], ((0.5 + np.cumsum(x)) / (i + 1))[:-1]])
    penalty = 4 * (x - previous_mean) ** 2 * (-np.log1p(-bets) - bets) / 4
    centre = np.cumsum(bets * (x + before / remaining))
    scale = np.cumsum(bets * population / remaining)
    slack = math.log(2 / alpha) + np.cumsum(penalty)
    # Beyond the values drawn, the population's other values lie in [0, 1]: the mean is within
    # [S_t / N, (S_t + N − t) / N] for sure.
    drawn = np.cumsum(x)
    sure_low = drawn / population
    sure_high = (drawn + population - i) / population
    lows = np.maximum.accumulate(np.maximum((centre - slack) / scale, sure_low))
    highs = np.minimum.accumulate(np.minimum((centre + slack) / scale, sure_high))
    return lows, np.maximum(highs, lows)


def unit_draws(
    values: ArrayLike, population: int, low: float, high: float
) -> tuple[FloatArray, FloatArray]:
    """The values drawn (checked: at most `population`, all on [low, high]) and the same values
    rescaled to [0, 1]."""
    data = as_float_vector(values, "values", min_size=1)
    if not high > low:
        raise ValueError("high must be above low")
    if not population >= data.size:
        raise ValueError(
            f"population ({population}) must be at least the values drawn ({data.size})"
        )
    if np.any((data < low - 1e-9) | (data > high + 1e-9)):
        raise ValueError(f"values must lie in [{low:g}, {high:g}]")
    return data, np.clip((data - low) / (high - low), 0.0, 1.0)


def without_replacement_sequence(
    values: ArrayLike,
    population: int,
    *,
    low: float = 0.0,
    high: float = 1.0,
    level: float = 0.95,
) -> ConfidenceSequence:
    """The confidence sequence for the mean of `population` values on [low, high], of which
    `values` are the first ones drawn in a uniformly random order (without replacement)."""
    check_level(level)
    data, x = unit_draws(values, population, low, high)
    span = high - low
    lows, highs = _bounds(x, population, 1 - level)
    means = np.cumsum(data) / np.arange(1, data.size + 1)
    return ConfidenceSequence(
        means=means,
        lows=low + span * lows,
        highs=low + span * highs,
        population=population,
        level=level,
    )
