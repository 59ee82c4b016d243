"""stats.ppi: the PPI++ estimate, its small-sample interval, paired differences, label budget."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from plumbline.stats import label_budget, ppi_mean, ppi_mean_difference, wilson_interval
from plumbline.stats.ppi import cross_fit_lambdas, ppi_bounds_batch, tuned_lambda
from validation.ppi_coverage import draw, simulate_cell


def _data(seed: int = 3, n: int = 40, big_n: int = 400) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    y = (rng.random(n + big_n) < 0.3).astype(float)
    f = np.clip(0.2 + 0.5 * y + rng.normal(0, 0.15, n + big_n), 0, 1)
    return y[:n], f[:n], f[n:]


def _ppi_py_lambda(y: np.ndarray, f: np.ndarray, u: np.ndarray) -> float:
    """ppi_py.ppi._calc_lam_glm for a mean (inv_hessian = I, clip=True), as ppi_mean_ci calls it:
    grads at the λ=1 estimate; cov_grads = (1/n)(gᵀĝ + ĝᵀg); var = np.cov(concat(ĝ, ĝ_u));
    λ = cov_grads / (2(1 + n/N)·var)."""
    n, big_n = y.size, u.size
    theta = u.mean() + (y - f).mean()
    grads, grads_hat, grads_hat_u = y - theta, f - theta, u - theta
    gc, hc = grads - grads.mean(), grads_hat - grads_hat.mean()
    cov_grads = (1 / n) * (gc @ hc + hc @ gc)
    var = np.cov(np.concatenate([grads_hat, grads_hat_u]))
    return float(np.clip(cov_grads / (2 * (1 + n / big_n) * var), 0, 1))


def test_estimate_and_clt_interval_at_ppi_pythons_lambda_match_its_formulas() -> None:
    y, f, u = _data()
    lam = _ppi_py_lambda(y, f, u)
    # ppi_py's tuned λ is plumbline's `tuned_lambda`; ppi_mean cross-fits it unless λ is given
    assert float(tuned_lambda(y[None], f[None], u[None])[0]) == pytest.approx(lam, rel=1e-12)
    result = ppi_mean(y, f, u, lam=lam)
    assert result.details["lambda"] == pytest.approx(lam, rel=1e-12)
    assert result.details["lambda_method"] == "fixed"
    # ppi_py.ppi.ppi_mean_pointestimate(lam=λ): (λ·Ŷ_u).mean() + (Y − λŶ).mean()
    expected = (lam * u).mean() + (y - lam * f).mean()
    assert result.statistic == pytest.approx(expected, rel=1e-12)
    # ppi_py.ppi.ppi_mean_ci: imputed_std = (λŶ_u).std()/√N, rectifier_std = (Y − λŶ).std()/√n,
    # statsmodels _zconfint_generic(θ̂, √(imputed² + rectifier²), α)
    se = math.hypot((lam * u).std() / math.sqrt(u.size), (y - lam * f).std() / math.sqrt(y.size))
    z = sps.norm.ppf(0.975)
    assert result.standard_error == pytest.approx(se, rel=1e-12)
    assert result.details["clt_interval"]["low"] == pytest.approx(expected - z * se, rel=1e-12)
    assert result.details["clt_interval"]["high"] == pytest.approx(expected + z * se, rel=1e-12)
    # the published interval is a different (score) interval around the same estimate
    assert result.interval.low < result.statistic < result.interval.high
    assert result.interval.low >= 0 and result.interval.high <= 1


def test_lambda_zero_is_the_human_mean_with_wilson() -> None:
    rng = np.random.default_rng(5)
    y = (rng.random(30) < 0.2).astype(float)
    f = (rng.random(30) < 0.5).astype(float)
    u = (rng.random(300) < 0.5).astype(float)
    result = ppi_mean(y, f, u, lam=0)
    wilson = wilson_interval(int(y.sum()), y.size)
    assert result.statistic == y.mean()
    assert result.interval.low == pytest.approx(wilson.interval.low, abs=1e-12)
    assert result.interval.high == pytest.approx(wilson.interval.high, abs=1e-12)
    assert result.details["human_only"] == y.mean()
    assert result.details["judge_only"] == pytest.approx(np.concatenate([f, u]).mean())


def test_lambda_one_is_classic_ppi() -> None:
    y, f, u = _data(seed=9)
    result = ppi_mean(y, f, u, lam=1)
    assert result.statistic == pytest.approx(u.mean() + (y - f).mean(), rel=1e-12)
    assert result.details["lambda"] == 1.0


def test_a_biased_judge_is_corrected_and_the_details_say_how() -> None:
    rng = np.random.default_rng(13)
    y = (rng.random(1080) < 0.5).astype(float)
    f = np.maximum(y, rng.random(1080) < 0.6)  # accepts 60% of failures: judge says ≈ 0.8
    result = ppi_mean(y[:80], f[:80], f[80:])
    assert result.details["judge_only"] > 0.75
    assert result.interval.contains(y.mean())  # the human rate over every judged sample
    assert not (result.interval.low <= result.details["judge_only"] <= result.interval.high)
    assert 0 < result.details["correlation"] < 1
    assert result.details["n_labelled"] == 80 and result.details["n_judged"] == 1080


def test_small_seeded_simulation_holds_coverage_where_the_clt_interval_fails() -> None:
    for judge, rate in (("lenient", 0.9), ("continuous", 0.1), ("flips", 0.1)):
        cell = simulate_cell(judge, rate, 20, datasets=600, seed=1)
        assert cell.coverage >= 0.93, cell
        assert cell.clt_coverage < 0.9, cell
        assert cell.out_of_range == 0
    useless = simulate_cell("useless", 0.5, 50, datasets=600, seed=1)
    assert useless.width_ratio == pytest.approx(1.0, abs=0.03)
    good = simulate_cell("continuous", 0.5, 50, datasets=600, seed=1)
    assert good.width_ratio < 0.62 and good.coverage >= 0.93


def test_paired_difference_is_ppi_on_the_differences() -> None:
    rng = np.random.default_rng(2)
    questions = 600
    hard = rng.random(questions)
    ya = (hard < 0.7).astype(float)
    yb = (hard < 0.5).astype(float)
    fa = np.clip(ya * 0.8 + 0.1 + rng.normal(0, 0.1, questions), 0, 1)
    fb = np.clip(yb * 0.8 + 0.15 + rng.normal(0, 0.1, questions), 0, 1)
    n = 60
    result = ppi_mean_difference(ya[:n], yb[:n], fa[:n], fb[:n], fa[n:], fb[n:])
    assert -1 <= result.interval.low < result.statistic < result.interval.high <= 1
    assert result.interval.contains(0.2)
    zero = ppi_mean_difference(ya[:n], yb[:n], fa[:n], fb[:n], fa[n:], fb[n:], lam=0)
    assert zero.statistic == pytest.approx(ya[:n].mean() - yb[:n].mean())


def test_label_budget_from_the_ppi_variance() -> None:
    plan = label_budget(0.9, 1000, 0.05, rate=0.5)
    z2 = sps.norm.ppf(0.975) ** 2
    assert plan.labels_needed_without_judge == math.ceil(z2 * 0.25 / 0.05**2)
    exact = 0.25 * (1 - 0.81) / (0.05**2 / z2 - 0.25 * 0.81 / 1000)
    assert plan.labels_needed == math.ceil(exact)
    assert plan.labels_needed < plan.labels_needed_without_judge / 3
    useless = label_budget(0.0, 1000, 0.05)
    assert useless.labels_needed == useless.labels_needed_without_judge
    assert label_budget(0.99, 100, 0.01).labels_needed is None  # beyond what N judged allow


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([0, 1, 2], [0, 1, 1], [0.5]), r"human\[2\] is 2.0"),
        (([0, 1, 1], [0, 1], [0.5]), "paired"),
        (([0, 1, 1], [0, 1, 1], []), "judge_unlabelled needs at least 1"),
    ],
)
def test_bad_input_names_the_argument(args: tuple[list[float], ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ppi_mean(*args)


def test_bad_lambda_and_budget_arguments() -> None:
    with pytest.raises(ValueError, match="lam"):
        ppi_mean([0, 1], [0, 1], [1], lam=1.5)
    with pytest.raises(ValueError, match="half_width"):
        label_budget(0.5, 100, 0)
    with pytest.raises(ValueError, match="correlation"):
        label_budget(1.5, 100, 0.1)


def test_paired_difference_coverage_in_a_small_seeded_simulation() -> None:
    from validation.ppi_coverage import simulate_difference_cell

    for judge in ("lenient", "continuous"):
        cell = simulate_difference_cell(judge, 0.75, 0.55, 50, datasets=500, seed=2)
        assert cell.coverage >= 0.92, cell
        assert abs(cell.bias) < 0.02


def test_lambda_is_cross_fitted_leave_one_out() -> None:
    y, f, u = _data(n=12)
    result = ppi_mean(y, f, u)
    assert result.details["lambda_method"].startswith("cross-fitted")
    per_label = cross_fit_lambdas(y[None], f[None], u.size)[0]
    for i in range(y.size):  # item i's λ is PPI++'s λ on the other labels (their variance)
        others = np.delete(np.arange(y.size), i)
        yo, fo = y[others], f[others]
        expected = np.mean((yo - yo.mean()) * (fo - fo.mean())) / (
            (1 + y.size / u.size) * fo.var(ddof=1)
        )
        assert per_label[i] == pytest.approx(float(np.clip(expected, 0, 1)), rel=1e-10)
    estimate = (y - per_label * f).mean() + per_label.mean() * u.mean()
    assert result.details["unclipped"] == pytest.approx(estimate, rel=1e-12)
    assert result.details["lambda"] == pytest.approx(per_label.mean(), rel=1e-12)


def test_tuning_lambda_adds_no_bias_at_few_labels() -> None:
    """A lenient judge (accepts 40% of failures) and 10 labels: λ tuned on the labels it weights
    biased the estimate by about +0.025 (issue 37); cross-fitted, the bias is within Monte
    Carlo error of 0."""
    rng = np.random.default_rng(37)
    y, f, u = draw("lenient", 0.5, 10, 20_000, rng, judged=500)
    estimate, _, _, _ = ppi_bounds_batch(y, f, u)
    tuned = tuned_lambda(y, f, u)
    in_sample = tuned * u.mean(axis=1) + (y - tuned[:, None] * f).mean(axis=1)
    error = estimate.std() / np.sqrt(estimate.size)
    assert abs(estimate.mean() - 0.5) < 3 * error
    assert in_sample.mean() - 0.5 > 0.015  # what the in-sample λ did


def test_label_budget_plans_with_the_clipped_lambda() -> None:
    """Issue 45: the estimator clips λ to [0, 1]: a negative correlation gains nothing."""
    for rho in (-0.8, -0.3, 0.0):
        plan = label_budget(rho, 1000, 0.08)
        assert plan.lambda_planned == 0.0
        assert plan.labels_needed == plan.labels_needed_without_judge
    assert label_budget(0.8, 1000, 0.08).lambda_planned == 0.8
    assert (
        label_budget(0.8, 1000, 0.08).labels_needed < label_budget(-0.8, 1000, 0.08).labels_needed
    )
