"""Prediction-powered inference: correct an LLM judge's mean with a few human labels.

A judge scores every sample; a uniformly random subset of n samples also gets a human label.
With the judge's scores `f` on the N unlabelled samples and the labelled pairs `(Y, f)`, the
PPI++ estimate of the human mean θ is

    θ̂(λ) = λ · mean(f_unlabelled) + mean(Y − λ · f_labelled)

(Angelopoulos, Bates, Fannjiang, Jordan & Zrnic 2023, "Prediction-powered inference", Science
382:669–674; Angelopoulos, Duchi & Zrnic 2023, "PPI++: Efficient prediction-powered inference",
arXiv:2311.01453). λ = 0 is the human mean alone, λ = 1 classic PPI; the tuned λ minimises the
variance, `λ̂ = Cov_n(Y, f) / ((1 + n/N) · Var(f over all n + N))`, clipped to [0, 1], exactly as
`ppi_py.ppi_mean_pointestimate` computes it. The estimate is unbiased for every fixed λ whatever
the judge's bias, because the labelled sample is random.

**λ is cross-fitted.** λ̂ tuned on the same labels it then weights is correlated with them,
which biases θ̂ by O(1/n): +0.025 at 10 labels with a lenient judge, +0.007 still at 60
(issue 37; `benchmarks/bench_misspecification.py`). So each labelled item i gets its own λ̂₋ᵢ,
tuned on the *other* labelled items only (leave-one-out, the same formula with their
covariance and variance), and

    θ̂ = mean_i(Y_i − λ̂₋ᵢ f_i) + mean_i(λ̂₋ᵢ) · mean(f_unlabelled),

which is exactly unbiased at every n: λ̂₋ᵢ is independent of (Y_i, f_i) and of the unlabelled
scores (cross-fitting: Chernozhukov et al. 2018, "Double/debiased machine learning",
Econometrics J. 21:C1–C68; Zrnic & Candès 2024, "Cross-prediction-powered inference", PNAS
121(15)). The interval below uses the mean of the λ̂₋ᵢ; `details["lambda"]` reports it and
`details["lambda_method"]` says which λ was used. With many labels λ̂₋ᵢ ≈ λ̂ (ppi_py's).

**The interval.** PPI++'s CLT interval `θ̂ ± z·√(s²(Y − λf)/n + λ²s²(f_u)/N)` covers only
82–90% at 20–50 labels when θ is near 0.1 or 0.9 (benchmarks/bench_ppi.py): a Wald interval,
with the usual Wald failures, made worse because the labels can by chance show no judge error at
all. plumbline inverts a score test instead, as Wilson (1927) does for a proportion:

- **binary human labels**: write the judge through its class-conditional behaviour,
  `m₁ = E[f | Y=1]`, `m₀ = E[f | Y=0]`, `Δ = m₁ − m₀`, and within-class variances `v₁, v₀`
  (none of which depends on θ). Under the null value θ the labelled term's variance is exactly
  `Var(Y − λf) = θ(1−θ)(1 − λΔ)² + λ²(θv₁ + (1−θ)v₀)`; the interval is every θ with
  `(θ̂ − θ)² ≤ z²·[Var(Y − λf)/n + λ²s²(f_u)/N]`, a quadratic in θ solved in closed form, so the
  bounds stay in [0, 1] and λ = 0 gives the Wilson interval exactly.
- **small-sample corrections**: (1) a class with few labels estimates its judge moments
  badly (20 labels at θ = 0.1 hold two positives, often both judged right), so for a 0/1 judge
  (or a class whose judge scores are all equal) each class's `m` and `v` get
  `k = min(2, 20/n_class)` pseudo-observations at the judge's overall mean and variance, the
  Agresti–Coull (1998) device of adding about z²/2 pseudo-counts, fading as the class grows;
  (2) the judge-dependent part of the variance is scaled by `1 + λ((t_{n−2}/z)² − 1)`,
  Korn & Graubard's (1998) degrees-of-freedom correction for moments estimated from n labels
  (a regression on one covariate leaves n − 2), which vanishes at λ = 0.
- **graded human labels** (values strictly between 0 and 1): Wilson at the effective sample size
  `n_eff = θ̂(1−θ̂)/V̂ · (z/t_{n−1})²` with V̂ the PPI++ variance (Korn & Graubard 1998), the rule
  the leaderboard uses for rubric scores.

Simulated (benchmarks/bench_ppi.py, 36 cells: judges useless, 15% flips, lenient, continuous
ρ ≈ 0.9; n ∈ {20, 50, 200} labels; 1,000 judged; θ ∈ {0.1, 0.5, 0.9}): coverage 93.9–99.4%
with λ tuned in-sample (20,000 datasets per cell), 94.0–98.1% with the cross-fitted λ
(`bench_ppi.py --datasets 4000 --seed 0`; every target met), against 57–95% for the CLT
interval.

Paired differences of two models judged on the same questions (`ppi_mean_difference`) combine
the two score intervals by MOVER with the estimated correlation of the two estimates.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from plumbline.stats._validation import (
    ArrayLike,
    as_float_vector,
    t_critical,
    z_critical,
)
from plumbline.stats.arrays import FloatArray
from plumbline.stats.mover import mover_difference
from plumbline.stats.ppi_labels import LabelBudget, SelectionCheck, label_budget, selection_check
from plumbline.stats.proportions import proportion_bounds
from plumbline.stats.result import ConfidenceInterval, EstimateResult, check_level

METHOD = "PPI++ score interval (Wilson-type, small-sample corrected)"
DIFFERENCE_METHOD = "PPI++ paired difference (MOVER of the two score intervals)"
#: `details["lambda_method"]` values.
LAMBDA_CROSS_FIT = "cross-fitted (leave-one-out PPI++ λ per label)"
LAMBDA_FIXED = "fixed"
#: Pseudo-observations per class, at most, for a 0/1 judge's class moments.
PSEUDO = 2.0
PSEUDO_FADE = 20.0


def _in_unit(values: FloatArray, name: str) -> FloatArray:
    outside = (values < 0) | (values > 1)
    if outside.any():
        bad = int(np.flatnonzero(outside)[0])
        raise ValueError(f"{name}[{bad}] is {float(values[bad])}; values must lie in [0, 1]")
    return values


def tuned_lambda(human: FloatArray, judged: FloatArray, unlabelled: FloatArray) -> FloatArray:
    """PPI++'s power-tuning λ per row, clipped to [0, 1] (`ppi_py._calc_lam_glm` for a mean):
    `Cov_n(Y, f) / ((1 + n/N) · Var_{ddof=1}(f over labelled and unlabelled))`."""
    n = human.shape[-1]
    big_n = unlabelled.shape[-1]
    centred_y = human - human.mean(axis=-1, keepdims=True)
    centred_f = judged - judged.mean(axis=-1, keepdims=True)
    covariance = np.sum(centred_y * centred_f, axis=-1) / n
    every = np.concatenate([judged, unlabelled], axis=-1)
    variance = every.var(axis=-1, ddof=1) if every.shape[-1] > 1 else np.zeros(covariance.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(variance > 0, covariance / ((1 + n / big_n) * variance), 0.0)
    return np.asarray(np.clip(lam, 0.0, 1.0), dtype=np.float64)


def cross_fit_lambdas(human: FloatArray, judged: FloatArray, big_n: int) -> FloatArray:
    """Leave-one-out PPI++ λ per labelled item (R × n): item i's λ from the other n − 1
    labelled pairs only, `Cov₋ᵢ(Y, f) / ((1 + n/N) · Var₋ᵢ(f))` (ddof 0 and 1, as
    `tuned_lambda`), clipped to [0, 1]; 0 where the others' scores do not vary."""
    y = np.atleast_2d(human)
    f = np.atleast_2d(judged)
    n = y.shape[-1]
    others = n - 1
    if others < 2:
        return np.zeros(y.shape)
    sum_y = y.sum(axis=-1, keepdims=True) - y
    sum_f = f.sum(axis=-1, keepdims=True) - f
    sum_yf = (y * f).sum(axis=-1, keepdims=True) - y * f
    sum_ff = (f * f).sum(axis=-1, keepdims=True) - f * f
    mean_y, mean_f = sum_y / others, sum_f / others
    covariance = sum_yf / others - mean_y * mean_f
    variance = (sum_ff - others * mean_f * mean_f) / (others - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(variance > 1e-12, covariance / ((1 + n / big_n) * variance), 0.0)
    return np.asarray(np.clip(lam, 0.0, 1.0), dtype=np.float64)


def _class_moments(
    human: FloatArray, judged: FloatArray, mu: FloatArray, spread: FloatArray, pseudo: bool
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(Δ = m₁ − m₀, v₁, v₀) per row, with fading pseudo-observations at (mu, spread)."""
    positive = human == 1.0
    counts = [positive.sum(axis=-1).astype(np.float64), (~positive).sum(axis=-1).astype(float)]
    masks = [positive, ~positive]
    means: list[FloatArray] = []
    variances: list[FloatArray] = []
    for count, mask in zip(counts, masks, strict=True):
        values = np.where(mask, judged, 0.0)
        total = values.sum(axis=-1)
        raw_mean = np.divide(total, count, out=mu.copy(), where=count > 0)
        squares = np.sum(np.where(mask, (judged - raw_mean[..., None]) ** 2, 0.0), axis=-1)
        degenerate = squares <= 0
        k = np.where(pseudo | degenerate, np.minimum(PSEUDO, PSEUDO_FADE / np.maximum(count, 1)), 0)
        mean = (total + k * mu) / (count + k)
        squares = np.sum(np.where(mask, (judged - mean[..., None]) ** 2, 0.0), axis=-1)
        squares = squares + k * (spread + (mu - mean) ** 2)
        dof = count + k - 1
        variance = np.divide(squares, dof, out=spread.copy(), where=dof > 0)
        means.append(np.where(count + k > 0, mean, mu))
        variances.append(variance)
    return means[0] - means[1], variances[0], variances[1]


def ppi_bounds_batch(
    human: Any, judged: Any, unlabelled: Any, lam: Any = None, *, level: float = 0.95
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """The vectorised core of `ppi_mean`: one dataset per row of `human`/`judged` (R × n) and
    `unlabelled` (R × N); returns (estimates, lows, highs, λ), bounds in [0, 1].

    `lam` is None (cross-fitted: PPI++'s λ per label from the other labels, and the returned
    λ is their mean), a number, or one λ per row. No validation: use `ppi_mean`.
    """
    level = check_level(level)
    y = np.atleast_2d(np.asarray(human, dtype=np.float64))
    f = np.atleast_2d(np.asarray(judged, dtype=np.float64))
    u = np.atleast_2d(np.asarray(unlabelled, dtype=np.float64))
    n, big_n = y.shape[-1], u.shape[-1]
    rows = y.shape[0]
    per_label: FloatArray
    if lam is None:
        per_label = cross_fit_lambdas(y, f, big_n)
        lam_used = per_label.mean(axis=-1)
    else:
        lam_used = np.broadcast_to(np.asarray(lam, dtype=np.float64), (rows,)).copy()
        per_label = np.broadcast_to(lam_used[:, None], y.shape)
    z = z_critical(level)
    mu = u.mean(axis=-1)
    spread = u.var(axis=-1, ddof=1) if big_n > 1 else np.zeros(rows)
    estimate = lam_used * mu + (y - per_label * f).mean(axis=-1)
    binary_y = np.all((y == 0.0) | (y == 1.0), axis=-1)
    binary_f = bool(np.all((f == 0.0) | (f == 1.0)) and np.all((u == 0.0) | (u == 1.0)))
    # Binary human labels: the score interval with class-conditional judge moments.
    delta, v1, v0 = _class_moments(y, f, mu, spread, binary_f)
    t = t_critical(level, n - 2) if n > 2 else t_critical(level, 1)
    inflate = 1 + lam_used * ((t / z) ** 2 - 1)
    a_term = (1 - lam_used * delta) ** 2 * inflate
    b_term = lam_used**2 * v1 * inflate
    c_term = lam_used**2 * v0 * inflate
    k_term = lam_used**2 * spread / big_n
    z2 = z * z
    qa = 1 + z2 * a_term / n
    qb = -(2 * estimate + z2 * (a_term + b_term - c_term) / n)
    qc = estimate**2 - z2 * c_term / n - z2 * k_term
    root = np.sqrt(np.maximum(qb * qb - 4 * qa * qc, 0.0))
    score_low = (-qb - root) / (2 * qa)
    score_high = (-qb + root) / (2 * qa)
    # Graded human labels: Wilson at the effective n of the PPI++ variance.
    residual = y - per_label * f
    variance = (residual.var(axis=-1, ddof=1) if n > 1 else np.zeros(rows)) / n
    variance = variance + lam_used**2 * spread / big_n
    p = np.clip(estimate, 0.0, 1.0)
    ratio = (z / t_critical(level, n - 1)) ** 2 if n > 1 else 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where(
            (variance > 0) & (p > 0) & (p < 1), p * (1 - p) / variance * ratio, float(n)
        )
    graded_low, graded_high = proportion_bounds(p * n_eff, n_eff, method="wilson", level=level)
    low = np.where(binary_y, score_low, graded_low)
    high = np.where(binary_y, score_high, graded_high)
    low = np.clip(np.minimum(low, np.clip(estimate, 0, 1)), 0.0, 1.0)
    high = np.clip(np.maximum(high, np.clip(estimate, 0, 1)), 0.0, 1.0)
    return estimate, low, high, lam_used


def _correlation(x: FloatArray, y: FloatArray) -> float | None:
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def _check_lambda(lam: float | None) -> float | None:
    if lam is None:
        return None
    if isinstance(lam, bool) or not isinstance(lam, int | float) or not 0 <= lam <= 1:
        raise ValueError(f"lam must be None or a number in [0, 1], got {lam!r}")
    return float(lam)


def ppi_mean(
    human: ArrayLike,
    judge_labelled: ArrayLike,
    judge_unlabelled: ArrayLike,
    *,
    level: float = 0.95,
    lam: float | None = None,
) -> EstimateResult:
    """The human mean estimated from n human labels and a judge's scores (values in [0, 1]).

    `human[i]` and `judge_labelled[i]` are the same sample; `judge_unlabelled` holds the judge's
    scores on the other samples (the labelled ones drawn uniformly at random from all). The
    estimate is `λ·mean(judge_unlabelled) + mean(human − λ·judge_labelled)`, reported clipped to
    [0, 1] (`details["unclipped"]` keeps the raw value); `lam=None` tunes λ (PPI++, clipped to
    [0, 1], cross-fitted leave-one-out so that tuning adds no bias), `lam=0` is the human mean,
    `lam=1` classic PPI. The interval is the small-sample score interval described in the
    module docstring (Wilson 1927 inverted for the rectified estimator; Agresti & Coull 1998
    pseudo-counts; Korn & Graubard 1998 degrees of freedom).

    `standard_error` is PPI++'s plug-in `√(s²(Y − λf)/n + λ²s²(f_u)/N)`. `details`: `lambda`
    (the mean λ when cross-fitted), `lambda_method`, `judge_only` (the judge's mean over every
    judged sample), `human_only` (the labels' mean),
    `correlation` (Pearson, labelled pairs; None when either side is constant), `n_labelled`,
    `n_judged` (labelled + unlabelled), `clt_interval` (PPI++'s normal interval, for
    comparison) and `unclipped`.

    References: Angelopoulos et al. (2023), Science 382:669–674; Angelopoulos, Duchi & Zrnic
    (2023), arXiv:2311.01453; Wilson (1927), JASA 22:209–212.
    """
    level = check_level(level)
    lam = _check_lambda(lam)
    y = _in_unit(as_float_vector(human, "human", min_size=2), "human")
    f = _in_unit(as_float_vector(judge_labelled, "judge_labelled", min_size=2), "judge_labelled")
    u = _in_unit(
        as_float_vector(judge_unlabelled, "judge_unlabelled", min_size=1), "judge_unlabelled"
    )
    if y.size != f.size:
        raise ValueError(
            f"human and judge_labelled must be paired (same length), got {y.size} and {f.size}"
        )
    estimate, low, high, used = ppi_bounds_batch(y, f, u, lam, level=level)
    lam_used = float(used[0])
    raw = float(estimate[0])
    lambda_method = LAMBDA_FIXED if lam is not None else LAMBDA_CROSS_FIT
    residual = y - lam_used * f
    se = math.sqrt(residual.var() / y.size + (lam_used**2) * u.var() / u.size)
    z = z_critical(level)
    every = np.concatenate([f, u])
    return EstimateResult(
        statistic=min(max(raw, 0.0), 1.0),
        n=int(y.size),
        interval=ConfidenceInterval(float(low[0]), float(high[0]), level, METHOD),
        standard_error=se,
        details={
            "lambda": lam_used,
            "lambda_method": lambda_method,
            "judge_only": float(every.mean()),
            "human_only": float(y.mean()),
            "correlation": _correlation(y, f),
            "n_labelled": int(y.size),
            "n_judged": int(every.size),
            "clt_interval": {"low": raw - z * se, "high": raw + z * se},
            "unclipped": raw,
        },
    )


def ppi_difference_bounds_batch(
    human_a: Any,
    human_b: Any,
    judged_a: Any,
    judged_b: Any,
    unlabelled_a: Any,
    unlabelled_b: Any,
    lam: Any = None,
    *,
    level: float = 0.95,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """The vectorised core of `ppi_mean_difference`: (differences, lows, highs, correlations).

    Each model's PPI estimate and score interval (`ppi_bounds_batch`, its own tuned λ), combined
    by MOVER with the correlation of the two estimates (Zou & Donner 2008; Newcombe 1998's
    method 10 does the same for two Wilson intervals of paired proportions):
    `r = Ĉov(θ̂_A, θ̂_B) / √(V̂_A V̂_B)` with the plug-in
    `Ĉov = Cov(Y_A − λ_A f_A, Y_B − λ_B f_B)/n + λ_A λ_B Cov(f_A, f_B on the unlabelled)/N`.
    """
    ya = np.atleast_2d(np.asarray(human_a, dtype=np.float64))
    yb = np.atleast_2d(np.asarray(human_b, dtype=np.float64))
    fa = np.atleast_2d(np.asarray(judged_a, dtype=np.float64))
    fb = np.atleast_2d(np.asarray(judged_b, dtype=np.float64))
    ua = np.atleast_2d(np.asarray(unlabelled_a, dtype=np.float64))
    ub = np.atleast_2d(np.asarray(unlabelled_b, dtype=np.float64))
    ea, la, ha, lam_a = ppi_bounds_batch(ya, fa, ua, lam, level=level)
    eb, lb, hb, lam_b = ppi_bounds_batch(yb, fb, ub, lam, level=level)
    n, big_n = ya.shape[-1], ua.shape[-1]
    ra = ya - lam_a[:, None] * fa
    rb = yb - lam_b[:, None] * fb

    def covariance(x: FloatArray, y: FloatArray) -> FloatArray:
        size = x.shape[-1]
        if size < 2:
            return np.zeros(x.shape[0])
        centred = (x - x.mean(axis=-1, keepdims=True)) * (y - y.mean(axis=-1, keepdims=True))
        return np.asarray(centred.sum(axis=-1) / (size - 1), dtype=np.float64)

    joint = covariance(ra, rb) / n + lam_a * lam_b * covariance(ua, ub) / big_n
    var_a = covariance(ra, ra) / n + lam_a**2 * covariance(ua, ua) / big_n
    var_b = covariance(rb, rb) / n + lam_b**2 * covariance(ub, ub) / big_n
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where((var_a > 0) & (var_b > 0), joint / np.sqrt(var_a * var_b), 0.0)
    r = np.clip(r, -1.0, 1.0)
    pa, pb = np.clip(ea, 0, 1), np.clip(eb, 0, 1)
    result = mover_difference(pa, la, ha, pb, lb, hb, r)
    difference = pa - pb
    low = np.clip(np.minimum(result.low, difference), -1.0, 1.0)
    high = np.clip(np.maximum(result.high, difference), -1.0, 1.0)
    return difference, low, high, r


def ppi_mean_difference(
    human_a: ArrayLike,
    human_b: ArrayLike,
    judge_labelled_a: ArrayLike,
    judge_labelled_b: ArrayLike,
    judge_unlabelled_a: ArrayLike,
    judge_unlabelled_b: ArrayLike,
    *,
    level: float = 0.95,
    lam: float | None = None,
) -> EstimateResult:
    """θ_A − θ_B for two models judged (and labelled) on the same questions, paired.

    Entry i of the four labelled arrays is one question for both models, and so is entry j of
    the two unlabelled ones. The difference of the two PPI estimates (each with its own tuned
    λ, or `lam` for both), with the MOVER interval of `ppi_difference_bounds_batch`: each
    model's score interval keeps its skew near 0 and 1, and the correlation of the two
    estimates (the questions' shared difficulty) narrows the difference as pairing should.
    Bounds lie in [−1, 1]. Simulated coverage (correlated questions, the four judges of
    `ppi_coverage`, 20–200 labels; 4,000 datasets per cell): 92.9–98.5%, at least 94.0% from 50
    labels.
    Reference: Zou & Donner (2008), Statistics in Medicine 27:1693–1702.
    """
    level = check_level(level)
    lam = _check_lambda(lam)
    arrays = [
        _in_unit(as_float_vector(values, name, min_size=minimum), name)
        for values, name, minimum in (
            (human_a, "human_a", 2),
            (human_b, "human_b", 2),
            (judge_labelled_a, "judge_labelled_a", 2),
            (judge_labelled_b, "judge_labelled_b", 2),
            (judge_unlabelled_a, "judge_unlabelled_a", 1),
            (judge_unlabelled_b, "judge_unlabelled_b", 1),
        )
    ]
    ya, yb, fa, fb, ua, ub = arrays
    if not ya.size == yb.size == fa.size == fb.size:
        raise ValueError("the labelled arrays of both models must be paired (same length)")
    if ua.size != ub.size:
        raise ValueError("the unlabelled arrays of both models must be paired (same length)")
    difference, low, high, r = ppi_difference_bounds_batch(ya, yb, fa, fb, ua, ub, lam, level=level)
    first = ppi_mean(ya, fa, ua, level=level, lam=lam)
    second = ppi_mean(yb, fb, ub, level=level, lam=lam)
    return EstimateResult(
        statistic=float(difference[0]),
        n=int(ya.size),
        interval=ConfidenceInterval(float(low[0]), float(high[0]), level, DIFFERENCE_METHOD),
        standard_error=None,
        details={
            "correlation_of_estimates": float(r[0]),
            "lambda_a": first.details["lambda"],
            "lambda_b": second.details["lambda"],
            "judge_only": first.details["judge_only"] - second.details["judge_only"],
            "human_only": first.details["human_only"] - second.details["human_only"],
            "n_labelled": int(ya.size),
            "n_judged": int(ya.size + ua.size),
        },
    )


__all__ = [
    "DIFFERENCE_METHOD",
    "METHOD",
    "LabelBudget",
    "SelectionCheck",
    "cross_fit_lambdas",
    "label_budget",
    "ppi_bounds_batch",
    "ppi_difference_bounds_batch",
    "ppi_mean",
    "ppi_mean_difference",
    "selection_check",
    "tuned_lambda",
]
