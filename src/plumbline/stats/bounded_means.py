"""A confidence interval for the mean of bounded values that holds for every distribution.

`betting_mean_interval`: Waudby-Smith & Ramdas (2024), "Estimating means of bounded random
variables by betting", J. R. Statist. Soc. B 86(1):1–27, the hedged capital process (§4.3,
Theorem 3) with the predictable plug-in bets of their eq. (26), at a fixed sample size. For a
candidate mean m, two bettors stake on the values being above and below m:

    K⁺_t(m) = Π_{i≤t} (1 + λ⁺_i (x_i − m)),   K⁻_t(m) = Π_{i≤t} (1 − λ⁻_i (x_i − m)),
    λ_i = √(2 log(2/α) / (n σ̂²_{i−1})),  λ⁺_i = min(λ_i, c/m),  λ⁻_i = min(λ_i, c/(1 − m)),
    μ̂_t = (1/2 + Σ_{i≤t} x_i) / (t + 1),  σ̂²_t = (1/4 + Σ_{i≤t} (x_i − μ̂_i)²) / (t + 1),

(x rescaled to [0, 1], c = 3/4). Under the mean m the hedged capital `(K⁺ + K⁻)/2` is a
nonnegative martingale from 1, so by Ville's inequality it ever reaches 1/α with probability at
most α: the interval is every m on a fine grid where it never does (widened by one grid step).
Its coverage holds for any distribution on the range with independent values, at any n, so at
3 values it is wide; no interval can do better for every distribution.
"""

from __future__ import annotations

import math

import numpy as np

from plumbline.stats._validation import ArrayLike, as_float_vector
from plumbline.stats.result import ConfidenceInterval, EstimateResult, check_level

#: Candidate means tried (the interval's resolution is the range over this).
GRID = 2000
#: The largest bet as a share of what keeps the capital positive (WSR's c).
TRUNCATION = 0.75
METHOD = "betting (Waudby-Smith & Ramdas 2024, hedged capital)"


def betting_mean_interval(
    values: ArrayLike,
    *,
    low: float = 0.0,
    high: float = 1.0,
    level: float = 0.95,
    grid: int = GRID,
) -> EstimateResult:
    """The mean of `values` (each in [low, high], in the given order) and its betting interval,
    valid for every distribution on [low, high] when the values are independent draws."""
    check_level(level)
    data = as_float_vector(values, "values", min_size=1)
    if not high > low:
        raise ValueError("high must be above low")
    if np.any((data < low - 1e-9) | (data > high + 1e-9)):
        raise ValueError(f"values must lie in [{low:g}, {high:g}]")
    x = np.clip((data - low) / (high - low), 0.0, 1.0)
    n = x.size
    alpha = 1 - level
    t = np.arange(1, n + 1)
    means = (0.5 + np.cumsum(x)) / (t + 1)
    variances = (0.25 + np.cumsum((x - means) ** 2)) / (t + 1)
    previous = np.concatenate([[0.25], variances[:-1]])
    bets = np.sqrt(2 * math.log(2 / alpha) / (n * previous))
    candidates = np.linspace(0.0, 1.0, grid + 1)[1:-1, None]
    up = np.minimum(bets[None, :], TRUNCATION / candidates)
    down = np.minimum(bets[None, :], TRUNCATION / (1 - candidates))
    log_up = np.cumsum(np.log1p(up * (x[None, :] - candidates)), axis=1)
    log_down = np.cumsum(np.log1p(-down * (x[None, :] - candidates)), axis=1)
    hedged = np.logaddexp(log_up, log_down) - math.log(2)
    kept = candidates[np.max(hedged, axis=1) < math.log(1 / alpha), 0]
    step = 1.0 / grid
    lower = max(0.0, float(kept.min()) - step) if kept.size else 0.0
    upper = min(1.0, float(kept.max()) + step) if kept.size else 1.0
    if not kept.size:  # every grid point rejected: keep the mean's grid cell (never happens
        centre = float(np.mean(x))  # at any level in practice; a guard for extreme data)
        lower, upper = max(0.0, centre - step), min(1.0, centre + step)
    scale = high - low
    return EstimateResult(
        statistic=float(np.mean(data)),
        n=n,
        interval=ConfidenceInterval(
            low=low + scale * lower, high=low + scale * upper, level=level, method=METHOD
        ),
        standard_error=None,
        details={"range": (low, high), "grid": grid},
    )
