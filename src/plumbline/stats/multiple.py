"""Multiple-comparison adjustments: Holm (family-wise error) and Benjamini–Hochberg (FDR)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from plumbline.stats._validation import ArrayLike, as_float_vector

FloatArray = npt.NDArray[np.float64]


def _pvalues(pvalues: ArrayLike) -> FloatArray:
    values = as_float_vector(pvalues, "pvalues", min_size=0)
    if np.any((values < 0) | (values > 1)):
        bad = int(np.flatnonzero((values < 0) | (values > 1))[0])
        raise ValueError(f"pvalues[{bad}] is {float(values[bad])}; p-values lie in [0, 1]")
    return values


def holm(pvalues: ArrayLike) -> FloatArray:
    """Holm's step-down adjusted p-values, in the input order.

    With p sorted ascending, `p̃_(i) = max_{j ≤ i} min(1, (m − j + 1) p_(j))`. Reject every
    hypothesis with `p̃ ≤ α` to control the family-wise error rate at α under any dependence.
    Reference: Holm (1979), Scand. J. Statist. 6:65–70.
    """
    values = _pvalues(pvalues)
    m = values.size
    if m == 0:
        return values.copy()
    order = np.argsort(values, kind="stable")
    scaled = (m - np.arange(m)) * values[order]
    adjusted_sorted = np.minimum(np.maximum.accumulate(scaled), 1.0)
    adjusted = np.empty(m)
    adjusted[order] = adjusted_sorted
    return adjusted


def benjamini_hochberg(pvalues: ArrayLike) -> FloatArray:
    """Benjamini–Hochberg step-up adjusted p-values (q-values), in the input order.

    With p sorted ascending, `q_(i) = min_{j ≥ i} min(1, m p_(j) / j)`. Reject `q ≤ α` to control
    the false discovery rate at α for independent or positively dependent tests. Same values as
    `scipy.stats.false_discovery_control(p, method="bh")`.
    Reference: Benjamini & Hochberg (1995), JRSS B 57(1):289–300.
    """
    values = _pvalues(pvalues)
    m = values.size
    if m == 0:
        return values.copy()
    order = np.argsort(values, kind="stable")
    scaled = values[order] * m / np.arange(1, m + 1)
    adjusted_sorted = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    adjusted = np.empty(m)
    adjusted[order] = adjusted_sorted
    return adjusted
