"""The permutation test of no change (`reliability.no_change`) on small constructed runs."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats as sps

from plumbline.reliability.metrics import (
    agreement_of_draws,
    consistency_of_draws,
    consistency_score,
    semantic_agreement,
)
from plumbline.reliability.no_change import PromptTrials, permutation_tests


def _prompt(
    old: np.ndarray,
    new: np.ndarray,
    *,
    performance: np.ndarray | None = None,
    latency: np.ndarray | None = None,
    failed: np.ndarray | None = None,
) -> PromptTrials:
    """One prompt's trials: `old` and `new` rows of answer embeddings."""
    rows = np.vstack([old, new])
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    size = rows.shape[0]
    return PromptTrials(
        current=np.arange(size) >= old.shape[0],
        similarity=unit @ unit.T,
        answered=np.ones(size, dtype=bool),
        performance=np.zeros(size) if performance is None else performance,
        latency=np.ones(size) if latency is None else latency,
        failed=np.zeros(size, dtype=bool) if failed is None else failed,
    )


def test_the_scores_of_draws_are_the_published_scores_of_the_drawn_answers() -> None:
    rng = np.random.default_rng(7)
    pool = rng.normal(size=(6, 16))
    draws = rng.integers(0, 6, (300, 10))
    draws[0] = 2  # every answer the same: consistency 1
    consistency = consistency_of_draws(pool, draws)
    agreement = agreement_of_draws(pool, draws)
    for index, draw in enumerate(draws):
        assert consistency[index] == pytest.approx(consistency_score(pool[draw]).score, abs=1e-9)
        expected = semantic_agreement(pool[draw]).similarity
        assert agreement[index] == pytest.approx(expected, abs=1e-9)
    assert consistency[0] == 1.0


def test_the_observed_changes_are_the_published_scores_changes() -> None:
    rng = np.random.default_rng(3)
    pool = rng.normal(size=(5, 16))
    old, new = pool[rng.integers(0, 5, 8)], pool[rng.integers(0, 5, 6)]
    tests = permutation_tests([_prompt(old, new)], rng=np.random.default_rng(0), resamples=50)
    expected = consistency_score(new).score - consistency_score(old).score
    assert tests["consistency"].estimate == pytest.approx(expected, abs=1e-9)
    expected = semantic_agreement(new).similarity - semantic_agreement(old).similarity
    assert tests["agreement"].estimate == pytest.approx(expected, abs=1e-9)
    assert tests["agreement"].prompts == 1 and tests["agreement"].resamples == 50


def test_one_prompt_gives_scipys_two_sample_permutation_test() -> None:
    rng = np.random.default_rng(11)
    old_values, new_values = rng.normal(size=7), rng.normal(size=6) - 0.8
    answers = rng.normal(size=(13, 4))
    trials = _prompt(answers[:7], answers[7:], performance=np.concatenate([old_values, new_values]))
    ours = permutation_tests([trials], rng=np.random.default_rng(1), resamples=20_000)
    exact = sps.permutation_test(
        (new_values, old_values),
        lambda x, y, axis: np.mean(x, axis=axis) - np.mean(y, axis=axis),
        permutation_type="independent",
        alternative="less",
        n_resamples=math.inf,
    )
    # scipy enumerates all C(13, 6) = 1716 relabellings; ours draws 20,000 (SE about 0.002)
    assert ours["performance"].p_lower == pytest.approx(exact.pvalue, abs=0.01)
    assert ours["performance"].smallest_p == pytest.approx(1 / 1716)


def test_cost_on_one_prompt_gives_scipys_test_and_is_absent_unless_priced() -> None:
    rng = np.random.default_rng(12)
    old_costs, new_costs = rng.lognormal(0, 1, 7), 1.5 * rng.lognormal(0, 1, 6)
    answers = rng.normal(size=(13, 4))
    plain = _prompt(answers[:7], answers[7:])
    assert "cost" not in permutation_tests([plain], rng=np.random.default_rng(1), resamples=50)
    priced = replace(plain, cost=np.concatenate([old_costs, new_costs]))
    ours = permutation_tests([priced], rng=np.random.default_rng(1), resamples=20_000)
    exact = sps.permutation_test(
        (new_costs, old_costs),
        lambda x, y, axis: np.mean(x, axis=axis) - np.mean(y, axis=axis),
        permutation_type="independent",
        alternative="greater",
        n_resamples=math.inf,
    )
    assert ours["cost"].estimate == pytest.approx(new_costs.mean() - old_costs.mean())
    # scipy enumerates all C(13, 6) = 1716 relabellings; ours draws 20,000 (SE about 0.002)
    assert ours["cost"].p_higher == pytest.approx(exact.pvalue, abs=0.01)
    # a trial without a cost (failed, or no token counts) is left out of its side's mean
    unpriced = replace(priced, cost=np.concatenate([old_costs[:-1], [np.nan], new_costs]))
    found = permutation_tests([unpriced], rng=np.random.default_rng(1), resamples=50)
    assert found["cost"].estimate == pytest.approx(new_costs.mean() - old_costs[:-1].mean())


def test_a_deterministic_prompt_answered_once_differently_is_no_regression() -> None:
    """The issue-37 mechanism: a baseline with identical answers has no spread of its own, so a
    test calibrated on the baseline alone called one changed answer a regression (z = −3.8).
    Relabelling both runs' trials sees that one odd answer could have fallen in either run."""
    rng = np.random.default_rng(5)
    prompts = []
    for index in range(5):
        answer = rng.normal(size=16)
        old = np.tile(answer, (5, 1))
        new = np.tile(answer, (5, 1))
        if index == 0:
            new[2] = rng.normal(size=16)
        prompts.append(_prompt(old, new))
    tests = permutation_tests(prompts, rng=np.random.default_rng(2), resamples=4000)
    assert tests["agreement"].estimate < 0 and tests["consistency"].estimate <= 0
    # the odd answer lands in the current run in half the relabellings of that prompt
    assert tests["agreement"].p_lower == pytest.approx(0.5, abs=0.03)
    assert tests["agreement"].p_lower > 0.05 / 6


def test_the_level_holds_for_prompts_from_deterministic_to_erratic() -> None:
    """Nothing changed: each one-sided p-value is at most 5% in at most about 5% of runs (the
    test is exact; this checks the code), here at 5 prompts × 3 trials with heavy tails."""
    rng = np.random.default_rng(20)
    runs, below = 300, dict.fromkeys(("agreement", "consistency", "latency_p95"), 0)
    for _ in range(runs):
        prompts = []
        for _ in range(5):
            pool = rng.normal(size=(12, 16))
            weights = rng.dirichlet(np.full(12, math.exp(rng.uniform(math.log(0.03), 1.6))))
            answers = pool[rng.choice(12, 6, p=weights)]
            prompts.append(_prompt(answers[:3], answers[3:], latency=rng.lognormal(0, 1.5, 6)))
        tests = permutation_tests(prompts, rng=rng, resamples=199)
        for name in below:
            below[name] += tests[name].p_lower <= 0.05
    for name, count in below.items():
        # 300 runs at a true 5%: above 25 has a chance of about 1.5%
        assert count <= 25, name


def test_a_shift_far_beyond_the_noise_is_found_on_its_side() -> None:
    rng = np.random.default_rng(2)
    prompts = []
    for _ in range(6):
        answers = rng.normal(size=(20, 4))
        latency = rng.lognormal(0, 0.3, 20)
        latency[10:] *= 5
        prompts.append(_prompt(answers[:10], answers[10:], latency=latency))
    tests = permutation_tests(prompts, rng=np.random.default_rng(3), resamples=999)
    assert tests["latency_p50"].estimate > 0
    assert tests["latency_p50"].p_higher == pytest.approx(1 / 1000)
    assert tests["latency_p50"].p_lower == 1.0
    # nothing failed: the error rate's change is 0 under every relabelling
    assert tests["error_rate"].estimate == 0 and tests["error_rate"].p_lower == 1.0


def test_prompts_without_trials_in_both_runs_are_left_out() -> None:
    rng = np.random.default_rng(0)
    only_old = _prompt(rng.normal(size=(3, 4)), np.zeros((0, 4)))
    assert permutation_tests([only_old], rng=rng, resamples=10) == {}
    both = _prompt(rng.normal(size=(3, 4)), rng.normal(size=(3, 4)))
    tests = permutation_tests([only_old, both], rng=rng, resamples=10)
    assert tests["agreement"].prompts == 1
    assert tests["agreement"].smallest_p == pytest.approx(1 / 11)  # 20 relabellings, 10 drawn
    with pytest.raises(ValueError, match="same trials"):
        PromptTrials(
            current=np.zeros(2, dtype=bool),
            similarity=np.eye(3),
            answered=np.ones(2, dtype=bool),
            performance=np.zeros(2),
            latency=np.zeros(2),
            failed=np.zeros(2, dtype=bool),
        )


def test_the_relabellings_are_seeded_by_the_pooled_trials_not_by_their_labels() -> None:
    """A fixed seed alone would draw the same relabellings for every comparison of one shape,
    making a Monte Carlo p-value's small error systematic: the draws depend on the pooled data
    too, never on which run a trial came from."""
    from plumbline.reliability.no_change import pooled_digest

    rng = np.random.default_rng(9)
    answers = rng.normal(size=(8, 4))
    latency = rng.lognormal(0, 1, 8)
    first = _prompt(answers[:4], answers[4:], latency=latency)
    order = np.array([5, 1, 7, 0, 3, 6, 2, 4])
    swapped = _prompt(answers[order][:4], answers[order][4:], latency=latency[order])
    assert pooled_digest([first]) == pooled_digest([swapped])
    other = _prompt(answers[:4], answers[4:], latency=latency * 1.01)
    assert pooled_digest([first]) != pooled_digest([other])
