"""The without-replacement betting tests (`stats.betting`): under the null their p-values stay
above a at every look at once with probability at least 1 − a, for every population; a clear
difference is found early; what the values drawn already refute is refuted for sure."""

from __future__ import annotations

import numpy as np
import pytest

from plumbline.stats.betting import without_replacement_pvalues


def _population(kind: str, size: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "rare ones":
        return (rng.random(size) < 0.05).astype(float)
    if kind == "half ones":
        return (rng.random(size) < 0.5).astype(float)
    if kind == "two clusters":
        return np.where(rng.random(size) < 0.25, 0.05, 0.8)
    return rng.choice([-1.0, 0.0, 0.0, 1.0], size)


@pytest.mark.parametrize("kind", ["rare ones", "half ones", "two clusters", "signs"])
@pytest.mark.parametrize("direction", ["above", "below"])
def test_the_pvalue_holds_at_every_look_at_once(kind: str, direction: str) -> None:
    """The null at the population's own mean (the hardest null that is true): over 300 random
    orders, the share where the p-value EVER falls to 0.1 stays below 0.1 (a fixed-sample
    p-value looked at after every value would fall far more often)."""
    rng = np.random.default_rng(len(kind) + len(direction))
    size = 200
    values = _population(kind, size, rng)
    low = -1.0 if kind == "signs" else 0.0
    mean = float(values.mean())
    runs = 300
    rejected = 0
    for _ in range(runs):
        pvalues = without_replacement_pvalues(
            rng.permutation(values),
            size,
            mean,
            direction,
            low=low,
            high=1.0,  # type: ignore[arg-type]
        )
        assert np.all(np.diff(pvalues) <= 0) and np.all((pvalues >= 0) & (pvalues <= 1))
        rejected += bool(pvalues[-1] <= 0.1)
    # guaranteed ≤ 10%; above 15% of 300 is a 1% chance at a true 10%
    assert rejected / runs <= 0.15


def test_a_clear_difference_is_found_early_and_only_in_its_direction() -> None:
    rng = np.random.default_rng(7)
    size = 2000
    values = (rng.random(size) < 0.7).astype(float)
    order = rng.permutation(values)
    above = without_replacement_pvalues(order, size, 0.5, "above")
    below = without_replacement_pvalues(order, size, 0.5, "below")
    first = int(np.argmax(above <= 0.001))
    assert above[first] <= 0.001 and first < 300
    assert below[-1] == 1.0


def test_what_the_values_drawn_refute_is_refuted_for_sure() -> None:
    """Ten ones of a population of twelve: its mean is at least 10/12, so `mean ≤ 0.8` is
    refuted once the tenth one is drawn, whatever the bets did."""
    values = np.ones(10)
    pvalues = without_replacement_pvalues(values, 12, 0.8, "above")
    assert pvalues[-1] == 0.0
    # a null outside the range is refuted (or never) from the start
    assert np.all(without_replacement_pvalues(values, 12, -0.1, "above") == 0.0)
    assert np.all(without_replacement_pvalues(values, 12, 1.0, "above") == 1.0)


def test_bad_input_says_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="population"):
        without_replacement_pvalues(np.ones(5), 4, 0.5, "above")
    with pytest.raises(ValueError, match=r"values must lie in \[0, 1\]"):
        without_replacement_pvalues(np.array([0.5, 2.0]), 10, 0.5, "above")
    with pytest.raises(ValueError, match="high must be above low"):
        without_replacement_pvalues(np.ones(2), 10, 0.5, "above", low=1.0, high=1.0)
