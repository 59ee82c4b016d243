"""The posterior probability of being on the cost–score front (`stats.front`): its sampling
moments (the stratified jackknife), Satterthwaite's degrees of freedom, clear and unclear
boards, the small-board and free-model paths. Its calibration is simulated by
benchmarks/bench_cost.py."""

from __future__ import annotations

import numpy as np
import pytest

from plumbline.stats.cost import Stratum
from plumbline.stats.front import (
    FrontInput,
    excess_kurtosis,
    front_posterior,
    sampling_moments,
    satterthwaite_df,
)


def _model(rng: np.random.Generator, p: float, cost: float, n: int) -> FrontInput:
    scores = (rng.random(n) < p).astype(np.float64)
    costs = cost * rng.lognormal(0.0, 1.0, n)
    stratum = Stratum(costs, scores, 1.0, "qa")
    return FrontInput(float(scores.mean()), float(costs.mean()), [stratum])


def _left_out(item: FrontInput, category: int, question: int) -> tuple[float, float]:
    """(score, log cost) recomputed from scratch without one question of one category."""
    total = sum(s.weight for s in item.strata)
    score = cost = 0.0
    for index, stratum in enumerate(item.strata):
        keep = np.arange(stratum.costs.size) != question if index == category else slice(None)
        score += stratum.weight * float(stratum.scores[keep].mean())
        cost += stratum.weight / total * float(stratum.costs[keep].mean())
    return score, float(np.log(cost))


def test_sampling_moments_are_the_stratified_jackknife() -> None:
    rng = np.random.default_rng(1)
    first, second = _model(rng, 0.6, 2.0, 40), _model(rng, 0.3, 0.5, 25)
    strata = [
        Stratum(first.strata[0].costs, first.strata[0].scores, 0.7, "qa"),
        Stratum(second.strata[0].costs, second.strata[0].scores, 0.3, "code"),
    ]
    score = 0.7 * first.score + 0.3 * second.score
    cost = 0.7 * first.cost + 0.3 * second.cost
    item = FrontInput(score, cost, strata)
    covariance, freedom = sampling_moments(item, (0.0, 0.0))
    expected = np.zeros((2, 2))
    for category, stratum in enumerate(strata):
        n = stratum.costs.size
        left = np.array([_left_out(item, category, i) for i in range(n)])
        centred = left - left.mean(axis=0)
        expected += (n - 1) / n * centred.T @ centred
    assert covariance == pytest.approx(expected)
    # the score is linear in the questions: its jackknife is the unbiased Σ w_c² s_c² / n_c
    unbiased = sum(s.weight**2 * s.scores.var(ddof=1) / s.scores.size for s in strata)
    assert covariance[0, 0] == pytest.approx(unbiased)
    # normal tails: Satterthwaite's degrees of freedom lie between one category's and the sum's
    assert np.all((freedom >= 24.0) & (freedom <= 63.0))


def test_the_jackknife_is_not_biased_low_on_skewed_costs() -> None:
    # lognormal σ = 1 at 20 questions: the delta method's ratio s²/(n x̄²) averages 0.83 of
    # the true variance of log x̄ (module docstring); the jackknife about 1
    rng = np.random.default_rng(8)
    boards = [_model(rng, 0.5, 1.0, 20) for _ in range(3000)]
    jackknife = np.mean([sampling_moments(b, (0.0, 0.0))[0][1, 1] for b in boards])
    delta = np.mean([b.strata[0].costs.var(ddof=1) / 20 / b.cost**2 for b in boards])
    true_variance = float(np.log(rng.lognormal(0.0, 1.0, (200_000, 20)).mean(axis=1)).var())
    assert jackknife > 0.9 * true_variance
    assert jackknife > 1.1 * delta  # the same boards: the delta method is the lower


def test_heavy_tails_lower_the_degrees_of_freedom() -> None:
    # var(s²) = σ⁴ (2/(n−1) + κ/n): κ = 10 at n = 21 gives 2 / (0.1 + 10/21)
    assert satterthwaite_df(np.array([1.0]), np.array([21.0]), 10.0) == pytest.approx(
        2 / (0.1 + 10 / 21)
    )
    # two equal categories of 11: their sum has 20 degrees of freedom under normal tails
    assert satterthwaite_df(np.array([1.0, 1.0]), np.array([11.0, 11.0]), 0.0) == pytest.approx(20)
    rng = np.random.default_rng(2)
    assert excess_kurtosis([rng.lognormal(0, 1, 2000)]) > 5
    assert excess_kurtosis([np.array([0.0, 1.0, 0.0, 1.0])]) == 0.0  # taken ≥ 0
    assert excess_kurtosis([np.ones(5)]) == 0.0  # nothing varies


def test_a_clear_board_is_near_certain_and_an_unclear_one_is_not() -> None:
    rng = np.random.default_rng(3)
    # best and cheapest, dominated, in the middle: 400 questions leave no doubt
    clear = [_model(rng, 0.9, 0.5, 400), _model(rng, 0.4, 2.0, 400), _model(rng, 0.6, 1.0, 400)]
    result = front_posterior(clear)
    assert result.probabilities[0] > 0.99
    assert result.probabilities[1] < 0.01
    assert result.tau2_score is not None and result.tau2_log_cost is not None
    # three copies of one model at 20 questions: none is sure to be on or off the front
    unclear = [_model(rng, 0.6, 1.0, 20) for _ in range(3)]
    shares = front_posterior(unclear).probabilities
    assert np.all((shares > 0.05) & (shares < 0.95))


def test_the_same_board_gives_the_same_probabilities() -> None:
    rng = np.random.default_rng(4)
    board = [_model(rng, p, c, 30) for p, c in [(0.5, 1.0), (0.7, 1.5), (0.6, 0.8), (0.4, 2)]]
    first = front_posterior(board).probabilities
    assert np.array_equal(first, front_posterior(board).probabilities)
    assert np.all((first >= 0) & (first <= 1))


def test_small_boards_and_free_models() -> None:
    rng = np.random.default_rng(5)
    single = front_posterior([_model(rng, 0.5, 1.0, 20)])
    assert single.probabilities.tolist() == [1.0]
    assert single.tau2_score is None  # no spread to estimate below 3 models
    pair = front_posterior([_model(rng, 0.9, 0.5, 200), _model(rng, 0.3, 3.0, 200)])
    assert pair.probabilities[0] > 0.99 and pair.probabilities[1] < 0.01
    # a model that costs nothing has no log cost: costs are modelled on their own scale
    free = FrontInput(0.5, 0.0, [Stratum(np.zeros(20), np.full(20, 0.5), 1.0, "qa")])
    shares = front_posterior([free, _model(rng, 0.6, 1.0, 20), _model(rng, 0.4, 1.0, 20)])
    assert np.all(np.isfinite(shares.probabilities)) and shares.probabilities[0] > 0.5
    assert front_posterior([]).probabilities.size == 0


def test_the_order_of_the_models_does_not_matter() -> None:
    rng = np.random.default_rng(6)
    board = [_model(rng, p, c, 40) for p, c in [(0.5, 1.0), (0.7, 1.5), (0.6, 0.8), (0.4, 2)]]
    shares = front_posterior(board).probabilities
    order = [2, 0, 3, 1]
    permuted = front_posterior([board[i] for i in order]).probabilities
    # the same posterior; only which random draws each model gets differs (4,000 draws)
    assert permuted == pytest.approx(shares[order], abs=0.03)
    # every draw has a front, so the expected number of models on it is at least one
    assert 1.0 <= shares.sum() <= len(board)


def test_the_front_does_not_use_the_cost_intervals_bootstrap() -> None:
    from benchmarks.bench_cost import SUITE, TABLE, simulated_category

    from plumbline.leaderboard.cost import board_costs
    from plumbline.leaderboard.scores import score_model

    rng = np.random.default_rng(7)
    names = ("a", "b", "c")
    data = {
        (m, "qa"): simulated_category(
            m, (rng.random(30) < 0.6).astype(float), rng.lognormal(0, 1, 30)
        )
        for m in names
    }
    ranked = [score_model(SUITE, m, data) for m in names]
    full = board_costs(SUITE, data, ranked, TABLE)[1]
    few = board_costs(SUITE, data, ranked, TABLE, replicates=20)[1]
    # so the calibration runs board_costs with few replicates and publishes the same numbers
    assert [e.probability_on_front for e in few] == [e.probability_on_front for e in full]


def test_the_calibrations_prior_boards_have_uniform_shrinkage_factors() -> None:
    from benchmarks.bench_cost import prior_truths
    from scipy import stats

    rng = np.random.default_rng(9)
    n, models = 50, 4000  # enough models per board that the spread is its sample SD
    noise = (np.e - 1) / n
    spreads = np.array([np.log(prior_truths(rng, models, n)[1]).var() for _ in range(400)])
    shrinkage = noise / (noise + spreads)
    # B = σ²/(σ² + τ²) is uniform on (0, 1), as the front's posterior assumes
    assert stats.kstest(shrinkage, "uniform").pvalue > 0.01


def test_a_cost_the_jackknife_would_make_zero_and_unmeasured_boards() -> None:
    rng = np.random.default_rng(10)
    # leaving out the one paid question makes this model's cost 0, which has no log
    lopsided = FrontInput(0.5, 0.1, [Stratum(np.array([0.0, 0.0, 0.3]), np.ones(3), 1.0, "qa")])
    board = [lopsided, _model(rng, 0.6, 1.0, 20), _model(rng, 0.4, 0.5, 20)]
    shares = front_posterior(board).probabilities
    assert np.all(np.isfinite(shares)) and np.all((shares >= 0) & (shares <= 1))
    # one question per model: no variance anywhere, so each gets H_3 / 3 = 11/18
    single = [_model(rng, p, c, 1) for p, c in [(0.5, 1.0), (0.7, 2.0), (0.6, 0.5)]]
    result = front_posterior(single)
    assert result.probabilities == pytest.approx([11 / 18] * 3)
    assert "H_J / J" in result.method
    # a model with one question borrows the others' pooled variance
    mixed = [_model(rng, 0.5, 1.0, 1), _model(rng, 0.6, 1.0, 30), _model(rng, 0.4, 2.0, 30)]
    assert np.all(np.isfinite(front_posterior(mixed).probabilities))
