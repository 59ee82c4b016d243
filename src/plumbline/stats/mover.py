"""MOVER: intervals for sums and differences built from each part's own interval.

The method of variance estimates recovery (Zou & Donner 2008, "Construction of confidence limits
about effect measures: a general approach", Statistics in Medicine 27:1693–1702; Newcombe 2011,
"Propagating imprecision: combining confidence intervals from independent sources",
Communications in Statistics – Theory and Methods 40:3154–3180) recovers each part's variance
from the distance between its estimate and its bounds, separately below and above, so that a
skewed interval (Wilson near 0 or 1) keeps its shape in the combination:

- weighted sum `θ = Σ wᵢ θᵢ` of independent estimates (wᵢ ≥ 0):
  `L = θ − √Σ wᵢ²(θᵢ − lᵢ)²`, `U = θ + √Σ wᵢ²(uᵢ − θᵢ)²`;
- difference of two correlated estimates `θ₁ − θ₂` with correlation r:
  `L = θ₁ − θ₂ − √((θ₁ − l₁)² − 2r(θ₁ − l₁)(u₂ − θ₂) + (u₂ − θ₂)²)`,
  `U = θ₁ − θ₂ + √((u₁ − θ₁)² − 2r(u₁ − θ₁)(θ₂ − l₂) + (θ₂ − l₂)²)`.

A single part at weight 1 gives back its own interval exactly. Because `√Σ aᵢ² ≤ Σ aᵢ`, the sum's
lower bound is at least `Σ wᵢ lᵢ` and its upper at most `Σ wᵢ uᵢ`: parts in [0, 1] with weights
summing to at most 1 give a sum in [0, 1], and a difference of two such parts stays in [−1, 1].

For two binary outcomes on the same questions, `paired_proportion_difference` is Newcombe's
(1998) method 10: the difference of two Wilson intervals combined as above with the phi
coefficient of the 2×2 table as r, corrected towards 0 as Newcombe prescribes (Newcombe 1998,
"Improved confidence intervals for the difference between binomial proportions based on paired
data", Statistics in Medicine 17:2635–2650).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from plumbline.stats.arrays import FloatArray
from plumbline.stats.proportions import proportion_bounds


@dataclass(frozen=True)
class MoverInterval:
    """An estimate with its MOVER bounds (scalars or arrays, broadcast together)."""

    estimate: Any
    low: Any
    high: Any
    method: str


def mover_sum(
    estimates: Any, lows: Any, highs: Any, weights: Any, *, axis: int = -1
) -> MoverInterval:
    """Weighted sum of independent estimates with MOVER bounds, along `axis`.

    `L = Σwθ − √Σ w²(θ − l)²`, `U = Σwθ + √Σ w²(u − θ)²` (Zou & Donner 2008; Newcombe 2011).
    A part with `l = u = θ` (a fixed value, such as a missing category counted as 0) adds no width.
    """
    theta = np.asarray(estimates, dtype=np.float64)
    low = np.asarray(lows, dtype=np.float64)
    high = np.asarray(highs, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    total = np.sum(w * theta, axis=axis)
    below = np.sqrt(np.sum((w * (theta - low)) ** 2, axis=axis))
    above = np.sqrt(np.sum((w * (high - theta)) ** 2, axis=axis))
    return MoverInterval(total, total - below, total + above, "MOVER (Zou & Donner 2008)")


def mover_difference(
    estimate_1: Any,
    low_1: Any,
    high_1: Any,
    estimate_2: Any,
    low_2: Any,
    high_2: Any,
    correlation: Any = 0.0,
) -> MoverInterval:
    """`θ₁ − θ₂` with MOVER bounds for estimates with correlation r (0 when independent).

    `L = Δ − √((θ₁−l₁)² − 2r(θ₁−l₁)(u₂−θ₂) + (u₂−θ₂)²)`,
    `U = Δ + √((u₁−θ₁)² − 2r(u₁−θ₁)(θ₂−l₂) + (θ₂−l₂)²)` (Zou & Donner 2008, eq. 8).
    """
    t1 = np.asarray(estimate_1, dtype=np.float64)
    t2 = np.asarray(estimate_2, dtype=np.float64)
    r = np.clip(np.asarray(correlation, dtype=np.float64), -1.0, 1.0)
    a, b = t1 - np.asarray(low_1, dtype=np.float64), np.asarray(high_2, dtype=np.float64) - t2
    c, d = np.asarray(high_1, dtype=np.float64) - t1, t2 - np.asarray(low_2, dtype=np.float64)
    delta = np.sqrt(np.maximum(a * a - 2 * r * a * b + b * b, 0.0))
    epsilon = np.sqrt(np.maximum(c * c - 2 * r * c * d + d * d, 0.0))
    difference = t1 - t2
    method = "MOVER difference (Zou & Donner 2008)"
    return MoverInterval(difference, difference - delta, difference + epsilon, method)


def corrected_phi(both: Any, only_1: Any, only_2: Any, neither: Any) -> FloatArray:
    """Newcombe's (1998) corrected phi of a paired 2×2 table (0 where a margin is empty).

    `φ = (AD − BC) / √(EFGH)` with E, F, G, H the margins; when `AD > BC` the numerator is
    `max(AD − BC − N/2, 0)` (method 10's continuity correction towards independence).
    """
    a = np.asarray(both, dtype=np.float64)
    b = np.asarray(only_1, dtype=np.float64)
    c = np.asarray(only_2, dtype=np.float64)
    d = np.asarray(neither, dtype=np.float64)
    n = a + b + c + d
    product = (a + b) * (c + d) * (a + c) * (b + d)
    cross = a * d - b * c
    numerator = np.where(cross > 0, np.maximum(cross - n / 2, 0.0), cross)
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = np.where(product > 0, numerator / np.sqrt(np.where(product > 0, product, 1.0)), 0.0)
    return np.asarray(np.clip(phi, -1.0, 1.0), dtype=np.float64)


def paired_proportion_difference(
    both: Any, only_1: Any, only_2: Any, neither: Any, *, level: float = 0.95
) -> MoverInterval:
    """Difference `p₁ − p₂` of two proportions measured on the same N units (vectorised).

    `both`: units where both succeed; `only_1`/`only_2`: where only the first/second does;
    `neither`. Newcombe (1998) method 10: Wilson intervals for p₁ = (A+B)/N and p₂ = (A+C)/N,
    combined by MOVER with the corrected phi as their correlation. Bounds lie in [−1, 1].
    """
    a = np.asarray(both, dtype=np.float64)
    b = np.asarray(only_1, dtype=np.float64)
    c = np.asarray(only_2, dtype=np.float64)
    d = np.asarray(neither, dtype=np.float64)
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = proportion_bounds(a + b, n, method="wilson", level=level)
    l2, u2 = proportion_bounds(a + c, n, method="wilson", level=level)
    phi = corrected_phi(a, b, c, d)
    result = mover_difference(p1, l1, u1, p2, l2, u2, phi)
    return MoverInterval(
        result.estimate,
        np.clip(result.low, -1.0, 1.0),
        np.clip(result.high, -1.0, 1.0),
        "Newcombe paired MOVER (method 10)",
    )


__all__ = [
    "MoverInterval",
    "corrected_phi",
    "mover_difference",
    "mover_sum",
    "paired_proportion_difference",
]
