"""Percentiles with the interpolation method named (numpy's "linear" by default, as in CERT)."""

from __future__ import annotations

from typing import Any

import numpy as np

from plumbline.stats._validation import ArrayLike, as_float_vector
from plumbline.stats.arrays import FloatArray

#: numpy's percentile methods (Hyndman & Fan 1996 types 1–9 plus numpy's own).
METHODS = (
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "linear",
    "median_unbiased",
    "normal_unbiased",
    "lower",
    "higher",
    "midpoint",
    "nearest",
)


def percentile(values: ArrayLike, q: Any, *, method: str = "linear") -> float | FloatArray:
    """The `q`-th percentile(s) of `values` (q in [0, 100]), computed by numpy with `method`.

    "linear" (Hyndman & Fan type 7, numpy's default) is what the CERT document uses:
    `np.percentile(latencies, 95)`. For 0.1, 0.2, …, 1.0 it gives p50 0.55, p95 0.955, p99 0.991.
    A scalar q returns a float; a sequence of q returns an array of the same length.
    Reference: Hyndman & Fan (1996), "Sample Quantiles in Statistical Packages", Am. Stat. 50(4).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    data = as_float_vector(values, "values", min_size=1)
    try:
        qs = np.asarray(q, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"q must be a number or a sequence of numbers in [0, 100], got {q!r}"
        ) from None
    if qs.ndim > 1 or not np.all(np.isfinite(qs)) or np.any((qs < 0) | (qs > 100)):
        raise ValueError(f"q must be in [0, 100], got {q!r}")
    result = np.percentile(data, qs, method=method)  # type: ignore[call-overload]
    if qs.ndim == 0:
        return float(result)
    return np.asarray(result, dtype=np.float64)
