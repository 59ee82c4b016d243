"""The calibration check of the front probabilities: binned, clustered by board, Holm-corrected.

A simulation publishes, per model on each board, its probability q of being on the front and
whether it truly is (y ∈ {0, 1}). The probabilities are binned (`EDGES`); in each bin b with
N_b models the calibration error is the mean residual

    D_b = (1/N_b) Σ_{i ∈ b} (y_i − q_i),

zero in expectation for a calibrated forecaster. A board's models are not independent (one on
the front moves the others), so the unit is the board (G boards in the bin). The sandwich
variance with boards as clusters (Liang & Zeger 1986, Biometrika 73; Cameron & Miller 2015,
J. Human Resources 50, §II.C) estimates Var D_b from the observed residuals, which understates
it in a bin of rare events that happen less often than forecast (a Wald test's known fault;
Agresti & Coull 1998, Am. Statist. 52). So the test's variance is the one under the null
(calibration: Var y_i = q_i(1 − q_i)) times the design effect of the board clustering (Kish
1965, Survey Sampling §5.4), the sandwich over the independent-models variance of the same
residuals:

    SE_b² = deff_b · Σ_i q_i(1 − q_i) / N_b²,
    deff_b = G/(G − 1) · Σ_g (Σ_{i ∈ b, g} (r_i − D_b))² / Σ_{i ∈ b} (r_i − D_b)²,  r = y − q.

Each bin of at least `MIN_MODELS` models is tested, t = D_b / SE_b, two-sided with a Student-t
of G − 1 degrees of freedom (`scipy.stats.t`), and the p-values of all bins tested in a run
(every cell: populations × sizes) are adjusted by Holm's step-down (Holm 1979, Scand. J.
Statist. 6), so a calibrated forecaster fails the run with probability at most α = 5% under
any dependence between bins (family-wise). The binomial SE `sqrt(q̄(1 − q̄)/N_b)`, which treats
the models as independent, is kept for comparison, not for the verdict.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from plumbline.stats.arrays import FloatArray, IntArray
from plumbline.stats.multiple import holm

#: The probability bins' edges (the last bin includes 1).
EDGES = (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0)
#: Fewest models for a bin to be tested.
MIN_MODELS = 50
#: Family-wise error rate of a run's check.
ALPHA = 0.05


@dataclass(frozen=True)
class CalibrationBin:
    """One probability bin: its mean probability, the share truly on the front, the models and
    boards in it, the binomial SE (models independent) and the clustered SE (the test's, module
    docstring) of the share − mean probability, the design effect, and the t test's two-sided
    p-value (None when the bin has fewer than `MIN_MODELS` models and is not tested)."""

    mean_probability: float
    observed: float
    models: int
    boards: int
    binomial_se: float
    clustered_se: float
    design_effect: float
    pvalue: float | None

    @property
    def off(self) -> float:
        """The bin's deviation in clustered SEs (signed: positive when too cautious at the top)."""
        return (self.observed - self.mean_probability) / max(self.clustered_se, 1e-12)


@dataclass(frozen=True)
class CalibrationCheck:
    """A run's bins per cell, their Holm-adjusted p-values (same order; None when not tested),
    and the verdict at family-wise level `alpha`."""

    cells: tuple[tuple[CalibrationBin, ...], ...]
    adjusted: tuple[tuple[float | None, ...], ...]
    alpha: float
    passed: bool


def calibration_bins(
    probabilities: FloatArray,
    truths: FloatArray,
    boards: IntArray,
    edges: Sequence[float] = EDGES,
    min_models: int = MIN_MODELS,
) -> tuple[CalibrationBin, ...]:
    """The non-empty bins of one cell (module docstring for the SEs and the test)."""
    bounds = list(edges)
    bounds[-1] += 1e-9
    rows = []
    for low, high in itertools.pairwise(bounds):
        inside = (probabilities >= low) & (probabilities < high)
        count = int(inside.sum())
        if count == 0:
            continue
        mean_p = float(probabilities[inside].mean())
        residual = truths[inside] - probabilities[inside]
        _, cluster = np.unique(boards[inside], return_inverse=True)
        clusters = int(cluster.max()) + 1
        centred = residual - residual.mean()
        sums = np.bincount(cluster, weights=centred)
        factor = clusters / (clusters - 1) if clusters > 1 else 1.0
        spread = float(centred @ centred)
        deff = factor * float(sums @ sums) / spread if spread > 0 else 1.0
        null_variance = float(np.sum(probabilities[inside] * (1.0 - probabilities[inside])))
        clustered = math.sqrt(deff * max(null_variance, 1e-12)) / count
        pvalue = None
        if count >= min_models and clusters > 1:
            t = float(residual.mean()) / clustered
            pvalue = float(2.0 * stats.t.sf(abs(t), clusters - 1))
        binomial = math.sqrt(max(mean_p * (1.0 - mean_p), 1e-12) / count)
        observed = float(truths[inside].mean())
        rows.append(
            CalibrationBin(mean_p, observed, count, clusters, binomial, clustered, deff, pvalue)
        )
    return tuple(rows)


def calibration_check(
    cells: Sequence[Sequence[CalibrationBin]], alpha: float = ALPHA
) -> CalibrationCheck:
    """Holm over every tested bin of every cell: the run passes when none is rejected at
    `alpha` (family-wise error ≤ alpha for a calibrated forecaster)."""
    tested = [b.pvalue for cell in cells for b in cell if b.pvalue is not None]
    adjusted_flat = iter(holm(np.array(tested, np.float64)).tolist())
    adjusted = tuple(
        tuple(None if b.pvalue is None else next(adjusted_flat) for b in cell) for cell in cells
    )
    passed = all(a is None or a > alpha for cell in adjusted for a in cell)
    return CalibrationCheck(tuple(tuple(c) for c in cells), adjusted, alpha, passed)
