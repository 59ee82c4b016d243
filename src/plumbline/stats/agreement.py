"""Agreement between raters: Krippendorff's alpha at the interval level.

    alpha = 1 − D_o / D_e

with the observed disagreement D_o = (1/n) Σ_u 1/(m_u − 1) Σ_{i≠j} (v_ui − v_uj)² over units u with
m_u ≥ 2 ratings, and the expected disagreement D_e = 1/(n(n − 1)) Σ_{i≠j} (v_i − v_j)² over all n
pairable ratings (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"). Missing
ratings (NaN) are allowed. The interval resamples units (not single ratings), the unit of
agreement.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from plumbline.stats.result import ConfidenceInterval, EstimateResult, check_level


def _unit_sums(values: np.ndarray[Any, np.dtype[np.float64]]) -> tuple[np.ndarray[Any, Any], ...]:
    present = ~np.isnan(values)
    m = present.sum(axis=0).astype(float)
    filled = np.where(present, values, 0.0)
    s1 = filled.sum(axis=0)
    s2 = (filled**2).sum(axis=0)
    return m, s1, s2


def _alpha(m: np.ndarray[Any, Any], s1: np.ndarray[Any, Any], s2: np.ndarray[Any, Any]) -> Any:
    """Alpha along the last axis of unit sums (vectorised over leading resample axes)."""
    pairable = m >= 2
    m = np.where(pairable, m, 0.0)
    s1 = np.where(pairable, s1, 0.0)
    s2 = np.where(pairable, s2, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        # Σ_{i≠j} (v_i − v_j)² = 2(m Σv² − (Σv)²) within a unit
        within = np.where(pairable, 2 * (m * s2 - s1**2) / np.where(pairable, m - 1, 1), 0.0)
        n = m.sum(axis=-1)
        observed = within.sum(axis=-1) / n
        expected = 2 * (n * s2.sum(axis=-1) - s1.sum(axis=-1) ** 2) / (n * (n - 1))
        return 1 - observed / expected, observed, expected


def krippendorff_alpha(
    ratings: ArrayLike,
    *,
    level: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = 0,
) -> EstimateResult:
    """Krippendorff's alpha (interval metric) for a raters × units matrix (NaN = missing).

    Returns alpha with a percentile bootstrap interval over units. Raises ValueError when
    fewer than two units have two or more ratings, or when all ratings are identical
    (alpha is undefined: there is no variation to agree on).
    """
    level = check_level(level)
    values = np.asarray(ratings, dtype=float)
    if values.ndim != 2:
        raise ValueError(
            f"ratings must be a 2-D raters × units array, got {values.ndim} dimensions"
        )
    if np.isinf(values).any():
        raise ValueError("ratings must be finite or NaN (missing)")
    if n_resamples < 0:
        raise ValueError(f"n_resamples must be ≥ 0, got {n_resamples}")
    m, s1, s2 = _unit_sums(values)
    keep = m >= 2
    if keep.sum() < 2:
        raise ValueError("ratings: alpha needs at least two units rated by two or more raters")
    m, s1, s2 = m[keep], s1[keep], s2[keep]
    alpha, observed, expected = _alpha(m, s1, s2)
    if not np.isfinite(alpha):
        raise ValueError("ratings: every rating is the same value, so alpha is undefined")
    low = high = float("nan")
    if n_resamples:
        rng = np.random.default_rng(seed)
        units = len(m)
        counts = rng.multinomial(units, np.full(units, 1 / units), size=n_resamples)
        boot = _alpha_weighted(counts.astype(float), m, s1, s2)
        boot = boot[np.isfinite(boot)]
        if boot.size:
            tail = (1 - level) / 2
            low, high = (float(v) for v in np.quantile(boot, [tail, 1 - tail]))
    return EstimateResult(
        statistic=float(alpha),
        n=int(keep.sum()),
        interval=ConfidenceInterval(low, high, level, "bootstrap over units (percentile)"),
        details={
            "metric": "interval",
            "raters": int(values.shape[0]),
            "pairable_values": int(m.sum()),
            "observed_disagreement": float(observed),
            "expected_disagreement": float(expected),
        },
    )


def _alpha_weighted(
    counts: np.ndarray[Any, Any],
    m: np.ndarray[Any, Any],
    s1: np.ndarray[Any, Any],
    s2: np.ndarray[Any, Any],
) -> np.ndarray[Any, Any]:
    """Alpha for resamples in which unit u appears counts[r, u] times."""
    within = 2 * (m * s2 - s1**2) / (m - 1)
    n = counts @ m
    observed = (counts @ within) / n
    total1 = counts @ s1
    total2 = counts @ s2
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = 2 * (n * total2 - total1**2) / (n * (n - 1))
        result: np.ndarray[Any, Any] = 1 - observed / expected
    return result
