"""A test of "no change" for consistency and agreement, calibrated by the baseline's own noise.

The regression check's intervals (paired t over prompts) hold whatever the current model does,
so they must be as wide as the noisier of the two runs allows. A claim of `regressed` or
`improved` needs less: only that the current run could not have come from the baseline model.
Under that null hypothesis both runs of a prompt are independent draws of the baseline model's
answers to it, so the null spread of each prompt's change `Δ_p = s(current) − s(baseline)` is
estimated by drawing both sets from the baseline's own answers (with replacement, at each run's
size), `resamples` times, with the bootstrap's (n − 1)/n share of the variance given back. The
statistic is a weighted mean of the changes, `T = Σ w_p Δ_p` with `w_p ∝ 1 / (v_p + v̄)` (`v_p`
the null variance of prompt p, `v̄` their mean): a prompt the baseline answers so erratically
that its score is mostly noise counts less, the others about equally. `z = T / SD(T*)` over the
same draws, referred to the normal distribution (one-sided p-values). A bootstrap test that
resamples from a distribution obeying the null: Efron & Tibshirani (1993), "An Introduction to
the Bootstrap", §16.2; its false-alarm rate is approximate and simulated in
`benchmarks/bench_reliability_regression.py`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

FloatArray = npt.NDArray[np.float64]
#: A per-prompt score of sets of answers: given one prompt's answers (embedding rows for
#: consistency and agreement, per-answer values for performance) and draws (each row a set of
#: indices into them), the score of each draw.
Statistic = Callable[[FloatArray, npt.NDArray[np.intp]], FloatArray]
#: Resamples behind the null standard error (its relative error is about 1/√(2·400) ≈ 3.5%).
NULL_RESAMPLES = 400
#: Fewer shared prompts give no test: at 3 prompts × 5 trials its false alarms for agreement
#: were 2.5% where 0.83% is claimed (benchmarks/bench_reliability_regression.py).
MIN_PROMPTS = 5


@dataclass(frozen=True)
class NoChange:
    """The result of `no_change_test`."""

    estimate: float
    null_standard_error: float
    z: float
    #: One-sided p-value for a change downwards (`Δ` this low or lower under the null).
    p_lower: float
    #: One-sided p-value for a change upwards.
    p_higher: float
    prompts: int
    resamples: int


def _all(rows: FloatArray) -> npt.NDArray[np.intp]:
    return np.arange(rows.shape[0])[None, :]


def _precision_weights(variances: FloatArray) -> FloatArray | None:
    """Weights ∝ 1 / (v_p + v̄): a prompt whose score the baseline measures far less precisely
    than the average prompt counts less; the others count about equally (v̄, the mean, keeps
    weights from following the noise of small v_p estimates)."""
    floor = float(np.mean(variances))
    if not floor > 0:
        return None
    raw = 1.0 / (variances + floor)
    return np.asarray(raw / raw.sum(), dtype=np.float64)


def no_change_test(
    baseline: Mapping[str, FloatArray],
    current: Mapping[str, FloatArray],
    statistic: Statistic,
    *,
    rng: np.random.Generator,
    resamples: int = NULL_RESAMPLES,
    minimum: int = 2,
    prompts: int = MIN_PROMPTS,
) -> NoChange | None:
    """`z = T / SD(T*)` over the prompts both runs answered at least `minimum` times; None when
    fewer than `prompts` did (the normal reference needs several) or the null spread is 0."""
    shared = sorted(
        p
        for p in set(baseline) & set(current)
        if baseline[p].shape[0] >= minimum and current[p].shape[0] >= minimum
    )
    if len(shared) < max(prompts, 1):
        return None
    changes = np.array(
        [
            statistic(current[p], _all(current[p]))[0]
            - statistic(baseline[p], _all(baseline[p]))[0]
            for p in shared
        ]
    )
    null = np.empty((len(shared), resamples))
    for index, prompt in enumerate(shared):
        rows, new_size = baseline[prompt], current[prompt].shape[0]
        old_size = rows.shape[0]
        as_new = rng.integers(0, old_size, (resamples, new_size))
        as_old = rng.integers(0, old_size, (resamples, old_size))
        drawn = statistic(rows, as_new) - statistic(rows, as_old)
        # a bootstrap from n answers has (n − 1)/n of their variance: give it back
        null[index] = drawn.mean() + (drawn - drawn.mean()) * math.sqrt(old_size / (old_size - 1))
    weights = _precision_weights(null.var(axis=1, ddof=1))
    if weights is None:
        return None
    estimate = float(weights @ changes)
    spread = float(np.std(weights @ null, ddof=1))
    if not math.isfinite(spread) or spread <= 0:
        return None
    z = estimate / spread
    return NoChange(
        estimate=estimate,
        null_standard_error=spread,
        z=z,
        p_lower=float(sps.norm.cdf(z)),
        p_higher=float(sps.norm.sf(z)),
        prompts=len(shared),
        resamples=resamples,
    )
