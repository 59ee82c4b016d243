"""Power and sample size: closed forms, inversion, and the achieved power checked by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from plumbline.stats import (
    mcnemar_minimum_detectable_effect,
    mcnemar_sample_size,
    paired_minimum_detectable_effect,
    paired_sample_size,
    repeat_variance_factor,
    two_proportion_minimum_detectable_effect,
    two_proportion_sample_size,
)


def test_two_proportion_sample_size_closed_form() -> None:
    result = two_proportion_sample_size(0.80, 0.05)
    za, zb = sps.norm.ppf(0.975), sps.norm.ppf(0.8)
    expected = (
        za * math.sqrt(2 * 0.825 * 0.175) + zb * math.sqrt(0.8 * 0.2 + 0.85 * 0.15)
    ) ** 2 / 0.05**2
    assert result.n_exact == pytest.approx(expected)
    assert result.n == 906
    assert result.per_arm is True
    assert result.total_runs == 906 * 2
    assert result.to_dict()["assumptions"]["target"] == pytest.approx(0.85)


def test_two_proportion_power_achieved_in_simulation() -> None:
    result = two_proportion_sample_size(0.60, 0.10, power=0.8)
    rng = np.random.default_rng(0)
    n = result.n
    a = rng.binomial(n, 0.6, size=20_000)
    b = rng.binomial(n, 0.7, size=20_000)
    pooled = (a + b) / (2 * n)
    z = (b - a) / n / np.sqrt(2 * pooled * (1 - pooled) / n)
    power = np.mean(np.abs(z) > sps.norm.ppf(0.975))
    assert power == pytest.approx(0.80, abs=0.015)


def test_mcnemar_sample_size_closed_form_and_discordance() -> None:
    result = mcnemar_sample_size(0.80, 0.05, discordant=0.15)
    za, zb = sps.norm.ppf(0.975), sps.norm.ppf(0.8)
    expected = (za * math.sqrt(0.15) + zb * math.sqrt(0.15 - 0.0025)) ** 2 / 0.0025
    assert result.n_exact == pytest.approx(expected)
    assert result.assumptions["correlation"] is None
    # Through the correlation: p11 = p1 p2 + ρ √(p1 q1 p2 q2).
    correlated = mcnemar_sample_size(0.80, 0.05, correlation=0.3)
    p11 = 0.8 * 0.85 + 0.3 * math.sqrt(0.8 * 0.2 * 0.85 * 0.15)
    assert correlated.assumptions["discordant"] == pytest.approx(0.8 + 0.85 - 2 * p11)
    # Higher correlation -> fewer discordant questions -> fewer questions needed.
    assert mcnemar_sample_size(0.8, 0.05, correlation=0.7).n < correlated.n
    assert correlated.n < mcnemar_sample_size(0.8, 0.05, correlation=0.0).n
    # Pairing beats two independent samples of the same questions.
    assert mcnemar_sample_size(0.8, 0.05).n < two_proportion_sample_size(0.8, 0.05).n


def test_mcnemar_power_achieved_in_simulation() -> None:
    p1, p2, rho = 0.70, 0.78, 0.4
    result = mcnemar_sample_size(p1, p2 - p1, correlation=rho)
    p11 = p1 * p2 + rho * math.sqrt(p1 * (1 - p1) * p2 * (1 - p2))
    cells = [p11, p1 - p11, p2 - p11, 1 - p1 - p2 + p11]  # both, only A, only B, neither
    counts = np.random.default_rng(1).multinomial(result.n, cells, size=20_000)
    b, c = counts[:, 1], counts[:, 2]
    z = (c - b) / np.sqrt(np.maximum(b + c, 1))
    power = np.mean(np.abs(z) > sps.norm.ppf(0.975))
    assert power == pytest.approx(0.80, abs=0.02)


def test_mcnemar_rejects_impossible_assumptions() -> None:
    with pytest.raises(ValueError, match=r"correlation 0\.9 is impossible"):
        mcnemar_sample_size(0.5, 0.45, correlation=0.9)
    with pytest.raises(ValueError, match=r"discordant share 0\.02 is smaller than the effect"):
        mcnemar_sample_size(0.8, 0.05, discordant=0.02)
    with pytest.raises(ValueError, match=r"baseline \+ effect = 1\.05 must be strictly between"):
        mcnemar_sample_size(0.9, 0.15)
    with pytest.raises(ValueError, match="effect must be non-zero"):
        two_proportion_sample_size(0.5, 0.0)
    with pytest.raises(ValueError, match="power must be strictly between 0 and 1"):
        two_proportion_sample_size(0.5, 0.1, power=80)


def test_paired_t_sample_size_is_the_smallest_adequate_n() -> None:
    result = paired_sample_size(0.5, 1.0)
    assert result.n == 34  # Cohen's table: d = 0.5, two-sided α = .05, power .8 -> 34 pairs

    def power(n: int) -> float:
        critical = sps.t.ppf(0.975, n - 1)
        nc = 0.5 * math.sqrt(n)
        return float(sps.nct.sf(critical, n - 1, nc) + sps.nct.cdf(-critical, n - 1, nc))

    assert power(result.n) >= 0.8 > power(result.n - 1)


def test_paired_t_power_achieved_in_simulation() -> None:
    result = paired_sample_size(0.3, 1.2, power=0.9)
    differences = np.random.default_rng(2).normal(0.3, 1.2, size=(10_000, result.n))
    t = differences.mean(axis=1) / (differences.std(axis=1, ddof=1) / math.sqrt(result.n))
    power = np.mean(np.abs(t) > sps.t.ppf(0.975, result.n - 1))
    assert power == pytest.approx(0.90, abs=0.015)


def test_minimum_detectable_effects_invert_the_sample_sizes() -> None:
    mde = two_proportion_minimum_detectable_effect(0.8, 500)
    assert two_proportion_sample_size(0.8, mde.effect).n_exact == pytest.approx(500, rel=1e-6)
    drop = two_proportion_minimum_detectable_effect(0.8, 500, increase=False)
    assert drop.effect < 0
    assert two_proportion_sample_size(0.8, drop.effect).n_exact == pytest.approx(500, rel=1e-6)
    paired = mcnemar_minimum_detectable_effect(0.8, 300, correlation=0.5)
    assert mcnemar_sample_size(0.8, paired.effect).n_exact == pytest.approx(300, rel=1e-6)
    fixed = mcnemar_minimum_detectable_effect(0.8, 300, discordant=0.2)
    assert mcnemar_sample_size(0.8, fixed.effect, discordant=0.2).n_exact == pytest.approx(
        300, rel=1e-6
    )
    t_mde = paired_minimum_detectable_effect(34, 1.0)
    assert t_mde.effect == pytest.approx(0.5, abs=0.01)
    assert paired_sample_size(t_mde.effect * 1.0001, 1.0).n == 34
    with pytest.raises(ValueError, match="n = 3 is too small to detect any increase"):
        two_proportion_minimum_detectable_effect(0.8, 3)


def test_repeats_shrink_only_the_within_question_share() -> None:
    assert repeat_variance_factor(1, 0.7) == pytest.approx(1.0)
    assert repeat_variance_factor(4, 0.0) == pytest.approx(1.0)
    assert repeat_variance_factor(4, 1.0) == pytest.approx(0.25)
    assert repeat_variance_factor(5, 0.5) == pytest.approx(0.6)
    one = paired_sample_size(0.2, 1.0)
    many = paired_sample_size(0.2, 1.0, epochs=5, within_share=0.5)
    assert many.assumptions["effective_sd"] == pytest.approx(math.sqrt(0.6))
    assert many.n < one.n
    assert many.epochs == 5 and many.total_runs == many.n * 10
    base = mcnemar_sample_size(0.8, 0.05)
    halved = mcnemar_sample_size(0.8, 0.05, epochs=2, within_share=1.0)
    assert halved.n_exact == pytest.approx(base.n_exact / 2)
    with pytest.raises(ValueError, match="within_share must be between 0 and 1"):
        repeat_variance_factor(2, 1.5)
    with pytest.raises(ValueError, match="epochs must be >= 1"):
        repeat_variance_factor(0, 0.5)
