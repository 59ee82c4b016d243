"""The bootstrap test of no change (`reliability.no_change`) on small constructed runs."""

from __future__ import annotations

import numpy as np
import pytest

from plumbline.reliability.metrics import (
    agreement_of_draws,
    consistency_of_draws,
    consistency_score,
    semantic_agreement,
)
from plumbline.reliability.no_change import no_change_test


def _mean(values: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """The mean of each draw of per-answer values (the simplest per-prompt statistic)."""
    return values[draws].mean(axis=1)


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


def test_the_same_answers_give_no_change() -> None:
    rng = np.random.default_rng(0)
    runs = {f"p{i}": rng.normal(size=8) for i in range(5)}
    result = no_change_test(runs, runs, _mean, rng=np.random.default_rng(1))
    assert result is not None
    assert result.estimate == 0.0 and result.z == 0.0
    assert result.p_lower == result.p_higher == 0.5
    assert result.prompts == 5 and result.resamples == 400


def test_a_shift_far_beyond_the_baseline_noise_is_found_on_its_side() -> None:
    rng = np.random.default_rng(2)
    old = {f"p{i}": rng.normal(size=10) for i in range(6)}
    new = {key: values - 2.0 for key, values in old.items()}
    result = no_change_test(old, new, _mean, rng=np.random.default_rng(3))
    assert result is not None and result.estimate == pytest.approx(-2.0)
    # the null spread is the baseline's: SD of a difference of two means of 10, over 6 prompts
    assert 0.1 < result.null_standard_error < 0.35
    assert result.p_lower < 1e-6 and result.p_higher > 1 - 1e-6


def test_only_prompts_with_enough_answers_in_both_runs_count() -> None:
    old = {"a": np.array([1.0, 2.0]), "b": np.array([1.0]), "c": np.array([3.0, 4.0])}
    new = {"a": np.array([1.0, 3.0]), "b": np.array([1.0, 2.0])}
    result = no_change_test(old, new, _mean, rng=np.random.default_rng(0), prompts=1)
    assert result is not None and result.prompts == 1 and result.estimate == 0.5
    # below 5 shared prompts (the default) there is no test
    assert no_change_test(old, new, _mean, rng=np.random.default_rng(0)) is None
    assert (
        no_change_test({"b": old["b"]}, new, _mean, rng=np.random.default_rng(0), prompts=1) is None
    )
    constant = {"a": np.array([1.0, 1.0])}
    assert (
        no_change_test(constant, constant, _mean, rng=np.random.default_rng(0), prompts=1) is None
    )
