"""Each model's posterior probability of being on the true cost–score Pareto front.

Per model m, x_m = (score, log cost per sample) estimates θ_m, the true values. Its sampling
covariance is the stratified jackknife's (Quenouille 1956; Efron & Stein 1981, Ann. Statist. 9),
from the estimates without each question i of category c in turn, x_m(c,i):

    Σ_m = Σ_c (n_c − 1)/n_c Σ_i (x_m(c,i) − x̄_m(c,·)) (x_m(c,i) − x̄_m(c,·))ᵀ

which for the score is the unbiased `Σ_c w_c² s_c² / n_c`. For the log cost it replaces the
delta method (`s² / (n θ̂²)`), whose ratio is biased low on skewed costs (on lognormal σ = 1
costs at 20 questions, pooled over 3 models, 0.83 of the true variance of log θ̂; the jackknife
1.04, simulated; jackknife variances tend to err high, Efron & Stein 1981).

Both variances are pooled over the models (their mean: a common score variance and a common
coefficient of variation of cost), each model's score–cost correlation kept: a skewed cost's
sample that missed its right tail has both a low mean and a low variance, and a model that
answered every question right has a score variance of 0, so a model's own variances would make
its luckiest estimates its most confident ones (as in the bootstrap share this replaced). A
variance estimated from n questions is itself uncertain, the more so the heavier the tails, so
each coordinate's likelihood is a Student-t with Satterthwaite's effective degrees of freedom

    ν_c = 2 / (2/(n_c − 1) + κ/n_c),    ν = (Σ_c v_c)² / Σ_c (v_c² / ν_c)

(v_c the category's term of the variance; var(s²) = σ⁴ (2/(n−1) + κ/n), κ the excess kurtosis
pooled over every model's standardized questions, taken ≥ 0; Satterthwaite 1946, Biometrics
Bulletin 2(6)), drawn as a scale mixture of normals: the coordinate's SE over √w,
w ~ Gamma(ν/2, rate ν/2), per model, coordinate and draw.

The true values are exchangeable: θ_m ~ N(μ, diag(τ²_score, τ²_log cost)) (Efron & Morris 1975,
JASA 70; Gelman et al., Bayesian Data Analysis, 3rd ed., §5.4), with a flat prior on μ and, on
each τ², the uniform shrinkage prior: the shrinkage factor B = σ̄²/(σ̄² + τ²) is uniform on
(0, 1), σ̄² the coordinate's mean sampling variance (Christiansen & Morris 1997, JASA 92;
Daniels 1999, Can. J. Statist. 27). It is proper, so boards can be drawn from it and the
probability checked against them (μ's flat prior is no obstacle: the posterior moves with μ,
so any spread of centres gives the same check; σ̄² comes from the board, so the prior is
matched only approximately). A flat prior on τ is improper: it has no such boards. (μ, τ)
are drawn from their marginal posterior (B on a grid; BDA eq. 5.20–5.21, with the pooled
normal variances), then θ_m from its conjugate normal posterior given (μ, τ, w):

    V_m = (Σ_m⁻¹ + T⁻¹)⁻¹,    mean_m = V_m (Σ_m⁻¹ x_m + T⁻¹ μ)

A model's probability is the share of the draws (fixed seed) in which no other model's θ scores
at least as high for at most the cost. Everything is estimated from the board itself. Below 3
models the board says next to nothing about its spread (the simulation starts at 3): θ_m then
has a flat prior and its posterior is the likelihood. docs/statistics.md has the calibration
simulated through the leaderboard's code (`benchmarks/bench_cost.py`), on boards drawn from
this prior and on boards of a fixed spread, which no small board can learn.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from plumbline.stats.arrays import BoolArray, FloatArray
from plumbline.stats.cost import Stratum, on_front

#: Posterior draws per board, and their generator's seed (the same board, the same numbers).
POSTERIOR_DRAWS = 4000
POSTERIOR_SEED = 4875
#: Fewest models for which the between-model spread τ is estimated (module docstring).
MIN_SHRINK_MODELS = 3
#: Points of the grid over the shrinkage factor B (midpoints of 400 equal cells of (0, 1)).
GRID = 400
METHOD = (
    "hierarchical Bayes: (score, log cost) normal across models (Efron & Morris 1975; Gelman "
    "et al., BDA §5.4), uniform shrinkage prior (Daniels 1999), Student-t likelihood with "
    "the stratified jackknife's covariance and Satterthwaite's degrees of freedom "
    "(Satterthwaite 1946)"
)
UNMEASURED = (
    "no category has 2 questions, so no variance: each model gets the share of exchangeable "
    "models on the front, H_J / J (J models)"
)


@dataclass(frozen=True)
class FrontInput:
    """One priced model: its score on the board's scale (`Σ w_c · score_c`), its cost per
    sample, and the categories both came from (`Stratum`s, weights `w_c`)."""

    score: float
    cost: float
    strata: Sequence[Stratum]


@dataclass(frozen=True)
class FrontPosterior:
    """Each model's posterior probability of being on the front, the method, and the median
    posterior between-model variances of the true scores and log costs (None without
    shrinkage, below 3 models)."""

    probabilities: FloatArray
    method: str
    tau2_score: float | None
    tau2_log_cost: float | None


def excess_kurtosis(columns: Sequence[FloatArray]) -> float:
    """Pooled excess kurtosis `mean(z⁴) − 3` of the values standardized within their stratum
    (SD with n − 1), at least 0 (the normal's degrees of freedom at most); 0 when none varies."""
    fourth: list[FloatArray] = []
    for values in columns:
        if values.size < 2:
            continue
        deviation = values - values.mean()
        variance = float(deviation @ deviation) / (values.size - 1)
        if variance > 0:
            fourth.append((deviation**2 / variance) ** 2)
    return max(float(np.concatenate(fourth).mean()) - 3.0, 0.0) if fourth else 0.0


def satterthwaite_df(terms: FloatArray, sizes: FloatArray, kurtosis: float) -> float:
    """Degrees of freedom of `Σ_c terms_c` (terms_c = a_c s_c², s_c² from sizes_c values)."""
    per_term = 2.0 / (2.0 / (sizes - 1.0) + kurtosis / sizes)
    denominator = float(np.sum(terms**2 / per_term))
    return float(terms.sum() ** 2 / denominator) if denominator > 0 else float(per_term.min())


def sampling_moments(
    item: FrontInput, kurtosis: tuple[float, float], log_scale: bool = True
) -> tuple[FloatArray, FloatArray]:
    """The 2 × 2 stratified jackknife covariance of (score, log cost) (module docstring; of
    (score, cost) when not `log_scale`) and the Satterthwaite degrees of freedom of its two
    variances."""
    total = math.fsum(s.weight for s in item.strata)
    covariance = np.zeros((2, 2))
    terms = np.zeros((2, len(item.strata)))
    # a category of one question adds no term, so its degrees of freedom do not matter
    sizes = np.array([max(s.costs.size, 2) for s in item.strata], np.float64)
    for index, stratum in enumerate(item.strata):
        n = stratum.costs.size
        if n < 2:
            continue
        cost = _left_out_costs(item, stratum, total)
        score = stratum.weight * (stratum.scores.mean() - stratum.scores) / (n - 1)
        pair = np.stack([score, np.log(cost) if log_scale else cost])
        centred = pair - pair.mean(axis=1, keepdims=True)
        term = (n - 1) / n * (centred @ centred.T)
        covariance += term
        terms[:, index] = np.diagonal(term)
    freedom = np.array([satterthwaite_df(terms[k], sizes, kurtosis[k]) for k in range(2)])
    return covariance, freedom


def _measured(item: FrontInput) -> bool:
    """Whether a category of the model has the 2 questions a variance needs."""
    return any(s.costs.size >= 2 for s in item.strata)


def _left_out_costs(item: FrontInput, stratum: Stratum, total: float) -> FloatArray:
    """The model's cost without each question of `stratum` in turn (the other categories
    kept; `total` the sum of the weights; the stratum has at least 2 questions)."""
    n = stratum.costs.size
    result: FloatArray = item.cost + stratum.weight / total * (
        stratum.costs.mean() - stratum.costs
    ) / (n - 1)
    return result


def _loggable(item: FrontInput) -> bool:
    """Whether the model's cost and each of its jackknife's leave-one-out costs are positive."""
    total = math.fsum(s.weight for s in item.strata)
    left_out = [_left_out_costs(item, s, total).min() for s in item.strata if s.costs.size >= 2]
    return item.cost > 0 and min(left_out, default=item.cost) > 0


def _pooled(covariances: FloatArray, measured: BoolArray) -> FloatArray:
    """Both variances pooled over the measured models (their mean: a common score variance and
    a common coefficient of variation of cost), each model's score–cost correlation kept."""
    pooled = covariances.copy()
    scale = np.sqrt(np.maximum(np.diagonal(covariances, axis1=1, axis2=2), 1e-300))
    correlation = np.clip(covariances[:, 0, 1] / (scale[:, 0] * scale[:, 1]), -1.0, 1.0)
    pooled[:, 0, 0] = covariances[measured, 0, 0].mean()
    pooled[:, 1, 1] = covariances[measured, 1, 1].mean()
    pooled[:, 0, 1] = pooled[:, 1, 0] = correlation * np.sqrt(pooled[:, 0, 0] * pooled[:, 1, 1])
    # a model whose values do not vary (one question, all equal) gets a tiny variance
    result: FloatArray = pooled + np.eye(2) * 1e-12
    return result


def _tau_draws(
    estimates: FloatArray, variances: FloatArray, draws: int, rng: np.random.Generator
) -> tuple[FloatArray, FloatArray]:
    """Draws of (τ², μ) from their marginal posterior under a flat prior on μ and the uniform
    shrinkage prior on τ² (B = σ̄²/(σ̄² + τ²) ~ U(0, 1), σ̄² the mean sampling variance;
    Christiansen & Morris 1997, JASA 92; Daniels 1999, Can. J. Statist. 27), B on a grid, then
    (τ², μ) as in Gelman et al., Bayesian Data Analysis, 3rd ed., §5.4, eq. 5.20–5.21."""
    mean_variance = float(variances.mean())
    shrinkage = (np.arange(GRID) + 0.5) / GRID
    tau2 = mean_variance * (1.0 / shrinkage - 1.0)
    total = variances[None, :] + tau2[:, None]
    weights = 1.0 / total
    v_mu = 1.0 / weights.sum(axis=1)
    mu_hat = (weights * estimates[None, :]).sum(axis=1) * v_mu
    log_post = 0.5 * np.log(v_mu) - 0.5 * (
        np.log(total) + (estimates[None, :] - mu_hat[:, None]) ** 2 * weights
    ).sum(axis=1)
    probability = np.exp(log_post - log_post.max())
    picks = rng.choice(shrinkage.size, size=draws, p=probability / probability.sum())
    mu = mu_hat[picks] + np.sqrt(v_mu[picks]) * rng.standard_normal(draws)
    return tau2[picks], mu


def _prior_precision(
    x: FloatArray, variances: FloatArray, draws: int, rng: np.random.Generator
) -> tuple[FloatArray, FloatArray, tuple[float, float] | None]:
    """Per draw, the prior precision T⁻¹ (draws × 1 × 2 × 2) and T⁻¹μ (draws × 1 × 2), and the
    median τ²s; zeros (a flat prior) and None below `MIN_SHRINK_MODELS` models."""
    precision = np.zeros((draws, 1, 2, 2))
    pulled = np.zeros((draws, 1, 2))
    if x.shape[0] < MIN_SHRINK_MODELS:
        return precision, pulled, None
    tau2, mu = zip(
        *(_tau_draws(x[:, k], variances[:, k], draws, rng) for k in range(2)), strict=True
    )
    tau2_r, mu_r = np.stack(tau2, axis=1), np.stack(mu, axis=1)
    precision[:, 0, 0, 0], precision[:, 0, 1, 1] = 1.0 / tau2_r[:, 0], 1.0 / tau2_r[:, 1]
    pulled[:, 0, :] = mu_r / tau2_r
    medians = np.median(tau2_r, axis=0)
    return precision, pulled, (float(medians[0]), float(medians[1]))


def front_posterior(
    inputs: Sequence[FrontInput],
    *,
    draws: int = POSTERIOR_DRAWS,
    seed: int = POSTERIOR_SEED,
) -> FrontPosterior:
    """Each model's posterior probability of being on the true cost–score front (module
    docstring). A cost of 0 has no log, nor one that leaving a question out would make 0: the
    costs are then modelled on their own scale. A model without a category of 2 questions
    borrows the others' pooled variances; when no model has one, each gets H_J / J."""
    scores = np.array([item.score for item in inputs], np.float64)
    costs = np.array([item.cost for item in inputs], np.float64)
    if not inputs:
        return FrontPosterior(np.zeros(0), METHOD, None, None)
    measured = np.array([_measured(item) for item in inputs], dtype=bool)
    if not measured.any():
        # no variance can be estimated: the share of exchangeable models on the front, H_J / J
        share = math.fsum(1.0 / k for k in range(1, len(inputs) + 1)) / len(inputs)
        return FrontPosterior(np.full(len(inputs), share), UNMEASURED, None, None)
    log_scale = all(_loggable(item) for item in inputs)
    kurtosis = (
        excess_kurtosis([s.scores for item in inputs for s in item.strata]),
        excess_kurtosis([s.costs for item in inputs for s in item.strata]),
    )
    moments = [sampling_moments(item, kurtosis, log_scale) for item in inputs]
    sigma = _pooled(np.stack([m[0] for m in moments]), measured)
    freedom = np.stack([m[1] for m in moments])  # models × 2
    x = np.stack([scores, np.log(costs) if log_scale else costs], axis=1)
    rng = np.random.default_rng(seed)
    prior, prior_pull, tau2 = _prior_precision(x, np.diagonal(sigma, axis1=1, axis2=2), draws, rng)
    # Student-t as a scale mixture: each coordinate's SE over √w, w ~ Gamma(ν/2, rate ν/2)
    shrink = 1.0 / np.sqrt(rng.gamma(freedom / 2.0, 2.0 / freedom, (draws, *freedom.shape)))
    likelihood = np.linalg.inv(sigma[None] * shrink[..., :, None] * shrink[..., None, :])
    posterior = np.linalg.inv(likelihood + prior)
    pulled = np.einsum("rmij,mj->rmi", likelihood, x) + prior_pull
    mean = np.einsum("rmij,rmj->rmi", posterior, pulled)
    chol = np.linalg.cholesky(posterior)
    sample = mean + np.einsum("rmij,rmj->rmi", chol, rng.standard_normal((draws, len(inputs), 2)))
    shares = on_front(sample[..., 0], sample[..., 1]).mean(axis=0)
    return FrontPosterior(
        shares, METHOD, None if tau2 is None else tau2[0], None if tau2 is None else tau2[1]
    )
