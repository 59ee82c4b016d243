"""Sequential A/B: the plan agrees with `power`, the stop rule is valid when looking after every
pair (a small seeded simulation; the full one is benchmarks/bench_sequential.py), and
`run_sequential` stops early on a clear win and declares no winner on identical arms."""

from __future__ import annotations

import numpy as np
import pytest

from plumbline.stats import (
    expected_pairs,
    mcnemar_sample_size,
    paired_sample_size,
    plan_sequential,
    plan_sequential_continuous,
    run_sequential,
)
from plumbline.stats.sequential import stopping_points
from plumbline.stats.sequential_model import _null_crossing


@pytest.fixture(scope="module")
def plan():  # type: ignore[no-untyped-def]
    # a small design so the simulations stay fast: 0.5 -> 0.7
    return plan_sequential(0.5, 0.2)


def test_fixed_pairs_is_the_paired_power_design(plan) -> None:  # type: ignore[no-untyped-def]
    # the default plan assumes independent arms (correlation 0), and says so
    assert plan.fixed_pairs == mcnemar_sample_size(0.5, 0.2, correlation=0.0).n
    assert plan.assumptions["correlation"] == 0.0
    other = plan_sequential(0.6, 0.1, correlation=0.5)
    assert other.fixed_pairs == mcnemar_sample_size(0.6, 0.1, correlation=0.5).n
    assert other.assumptions["correlation"] == 0.5
    assert plan.fixed_pairs < plan.max_pairs <= 1.7 * plan.fixed_pairs
    assert plan.planned_power >= 0.8


def test_the_calibration_is_exact_and_below_ville(plan) -> None:  # type: ignore[no-untyped-def]
    crossing = _null_crossing(plan.mixture, plan.level_constant, plan.max_pairs)
    assert crossing <= plan.alpha
    assert plan.level_constant < 2 * np.log(1 / plan.alpha)  # tighter than Ville's inequality
    # a slightly smaller constant would exceed alpha: the calibration spends alpha
    assert _null_crossing(plan.mixture, plan.level_constant - 0.05, plan.max_pairs) > crossing


def _shared_difficulty(
    rng: np.random.Generator, runs: int, n: int, p_t: float, p_c: float
) -> np.ndarray:
    from scipy import stats as sps

    z = rng.standard_normal((runs, n))
    t = 0.7 * z + 0.71 * rng.standard_normal((runs, n)) < sps.norm.ppf(p_t)
    c = 0.7 * z + 0.71 * rng.standard_normal((runs, n)) < sps.norm.ppf(p_c)
    return t.astype(float) - c.astype(float)


def test_looking_after_every_pair_keeps_false_decisions_below_alpha(plan) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(7)
    runs = 3000
    for d in (
        (rng.random((runs, plan.max_pairs)) < 0.5).astype(float)
        - (rng.random((runs, plan.max_pairs)) < 0.5).astype(float),
        _shared_difficulty(rng, runs, plan.max_pairs, 0.5, 0.5),
    ):
        _, code = stopping_points(d, plan)
        false = np.mean(np.isin(code, (1, -1)))
        # 3 standard errors above alpha would still fail a broken rule (naive: ~0.25)
        assert false <= plan.alpha + 3 * np.sqrt(0.05 * 0.95 / runs)
        naive = np.abs(np.cumsum(d, axis=1)) / np.sqrt(np.maximum(np.cumsum(d * d, axis=1), 1))
        assert np.mean(np.any(naive > 1.96, axis=1)) > 0.15  # the problem being solved


def test_power_and_early_stopping_match_the_exact_figures(plan) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(11)
    runs = 3000
    psi = plan.assumptions["discordant"]
    # draw pairs with the plan's discordance at 0.5 vs 0.7: P(+1) = (psi + 0.2)/2
    u = rng.random((runs, plan.max_pairs))
    d = np.where(u < (psi + 0.2) / 2, 1.0, np.where(u < psi, -1.0, 0.0))
    first, code = stopping_points(d, plan)
    assert np.mean(code == 1) >= 0.8 - 3 * np.sqrt(0.16 / runs)
    used = np.where(first >= 0, first + 1, plan.max_pairs)
    assert abs(np.mean(used) - expected_pairs(plan, 0.2)) < 3
    assert expected_pairs(plan, 0.3) < 0.6 * plan.fixed_pairs


def test_a_clear_win_stops_early() -> None:
    plan = plan_sequential(0.5, 0.1)
    rng = np.random.default_rng(3)
    control = (rng.random(plan.max_pairs) < 0.45).astype(int)
    treatment = (rng.random(plan.max_pairs) < 0.9).astype(int)
    result = run_sequential(treatment, control, plan)
    assert result.verdict == "better"
    assert result.reason == "boundary"
    assert result.stopped_at < 0.5 * plan.fixed_pairs
    assert result.interval.low > 0
    assert result.interval.low <= result.estimate <= result.interval.high
    assert len(result.path) == result.stopped_at
    reverse = run_sequential(control, treatment, plan)
    assert reverse.verdict == "worse" and reverse.stopped_at == result.stopped_at


def test_identical_arms_declare_no_winner() -> None:
    plan = plan_sequential(0.5, 0.1)
    rng = np.random.default_rng(5)
    outcomes = (rng.random(plan.max_pairs + 50) < 0.6).astype(int)
    result = run_sequential(outcomes, outcomes, plan)
    assert result.verdict == "undecided"
    assert result.reason == "cap" and result.complete
    assert result.stopped_at == plan.max_pairs
    assert result.pairs_available == plan.max_pairs + 50
    assert result.interval.low < 0 < result.interval.high
    partial = run_sequential(outcomes[:20], outcomes[:20], plan)
    assert partial.reason == "data" and not partial.complete


def test_equivalence_needs_a_margin() -> None:
    plan = plan_sequential(0.5, 0.1, margin=0.1)
    outcomes = np.tile([1, 0], plan.max_pairs)
    result = run_sequential(outcomes, outcomes, plan)
    assert result.verdict == "equivalent"
    assert result.interval.low > -0.1 and result.interval.high < 0.1
    assert result.stopped_at < plan.max_pairs


def test_continuous_plan_and_run() -> None:
    plan = plan_sequential_continuous(0.5, 1.0)
    assert plan.fixed_pairs == paired_sample_size(0.5, 1.0).n
    assert plan.max_pairs > plan.fixed_pairs
    rng = np.random.default_rng(2)
    control = rng.lognormal(0, 0.3, plan.max_pairs)
    result = run_sequential(control + 1.0, control, plan)
    assert result.verdict == "better" and result.interval.low > 0
    assert result.stopped_at < plan.fixed_pairs


def test_bad_input_names_the_argument() -> None:
    plan = plan_sequential(0.5, 0.1)
    with pytest.raises(ValueError, match=r"treatment\[1\] is 2; binary outcomes must be 0 or 1"):
        run_sequential([1, 2], [0, 0], plan)
    with pytest.raises(ValueError, match="same length"):
        run_sequential([1, 0], [0], plan)
    with pytest.raises(ValueError, match="margin"):
        plan_sequential(0.5, 0.1, margin=-1)
    with pytest.raises(ValueError, match="baseline"):
        plan_sequential(1.5, 0.1)
