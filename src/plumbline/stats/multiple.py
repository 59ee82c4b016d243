"""Multiple-comparison adjustments: Holm and Westfall–Young's step-down min-p (family-wise
error), Benjamini–Hochberg (FDR)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from plumbline.stats._validation import ArrayLike, as_float_vector
from plumbline.stats.arrays import FloatArray


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


@dataclass(frozen=True)
class MinPStepDown:
    """Westfall–Young step-down min-p adjustment of resampled tests (`min_p_step_down`)."""

    #: Each test's own p-value, `#{rows with T ≤ T_observed} / rows`.
    pvalues: FloatArray
    #: Adjusted p-values: reject every test with `adjusted ≤ α`.
    adjusted: FloatArray
    #: The smallest adjusted p-value each test could reach with these resamples (its most
    #: extreme resampled value observed, ranked first): above α, no outcome rejects it.
    attainable: FloatArray
    #: Each row's smallest p-value over the tests (the min-p distribution; row 0 observed).
    row_minima: FloatArray

    def critical_p(self, alpha: float) -> float:
        """The largest raw p-value the first step rejects at `alpha`: between α/m (Bonferroni,
        independent tests) and α (one test, or tests that move together)."""
        ordered = np.sort(self.row_minima)
        allowed = int(np.floor(alpha * ordered.size + 1e-9))
        # the first step rejects p when #{rows with min ≤ p} ≤ allowed
        if allowed < 1:
            return 0.0
        if allowed >= ordered.size:
            return 1.0
        below = ordered[ordered < ordered[allowed]]
        return float(below[-1]) if below.size else 0.0


def _row_pvalues(column: FloatArray) -> FloatArray:
    """Every row's p-value within its column, `#{rows r: T_r ≤ T_b} / rows`, with values equal
    up to rounding counted as ties."""
    ordered = np.sort(column)
    tolerance = 1e-9 * (1.0 + np.abs(column))
    counts = np.searchsorted(ordered, column + tolerance, side="right")
    return np.asarray(counts / column.size, dtype=np.float64)


def min_p_step_down(statistics: ArrayLike) -> MinPStepDown:
    """Westfall–Young step-down min-p adjusted p-values of m tests sharing B resamples.

    `statistics` has one row per resample and one column per test, row 0 the observed data and
    rows 1…B drawn under the joint null (the same relabelling for every column of a row);
    smaller is more extreme (negate a column to test the other side). Every row's p-value is
    `p_bj = #{r: T_rj ≤ T_bj} / (B + 1)`. With the observed p-values ordered
    `p_(1) ≤ … ≤ p_(m)`, `p̃_(i) = max_{k ≤ i} #{b: min_{j ≥ k} p_b(j) ≤ p_(k)} / (B + 1)`.
    Because the observed row is one of the B + 1 exchangeable rows, `P(any p̃ ≤ α) ≤ α` under
    the joint null at any B; unlike Holm it uses the tests' dependence (correlated tests cost
    less than m independent ones). Reference: Westfall & Young (1993), "Resampling-Based
    Multiple Testing", Algorithm 2.8; Ge, Dudoit & Speed (2003), TEST 12(1):1–77, §4.
    """
    values = np.asarray(statistics, dtype=np.float64)
    if values.ndim != 2 or values.shape[0] < 1:
        raise ValueError("statistics must be a 2-D array: one row per resample, row 0 observed")
    if not np.all(np.isfinite(values)):
        raise ValueError("statistics must be finite")
    rows, tests = values.shape
    if tests == 0:
        empty = np.empty(0)
        return MinPStepDown(empty, empty.copy(), empty.copy(), np.ones(rows))
    pvalues = np.column_stack([_row_pvalues(values[:, j]) for j in range(tests)])
    observed = pvalues[0]
    order = np.argsort(observed, kind="stable")
    # successive minima: column k holds min over the tests ranked k…m of each row's p-value
    successive = np.minimum.accumulate(pvalues[:, order][:, ::-1], axis=1)[:, ::-1]
    stepped = (successive <= observed[order][None, :]).sum(axis=0) / rows
    adjusted = np.empty(tests)
    adjusted[order] = np.minimum(np.maximum.accumulate(stepped), 1.0)
    smallest = pvalues.min(axis=0)
    overall = pvalues.min(axis=1)
    attainable = (overall[:, None] <= smallest[None, :]).sum(axis=0) / rows
    return MinPStepDown(
        observed.copy(), adjusted, np.asarray(attainable, dtype=np.float64), overall
    )
