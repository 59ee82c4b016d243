"""The without-replacement confidence sequence (`stats.confidence_sequences`): it holds at every
look at once, for every population, and closes on the mean when every value is drawn."""

from __future__ import annotations

import numpy as np
import pytest

from plumbline.stats.confidence_sequences import without_replacement_sequence


@pytest.mark.parametrize("population_kind", ["rare ones", "half ones", "two clusters", "signs"])
def test_it_holds_at_every_look_at_once(population_kind: str) -> None:
    """Over 300 random orders, the share of orders where the sequence misses the population's
    mean at ANY look stays below α (a fixed-sample interval looked at after every value would
    miss far more often)."""
    rng = np.random.default_rng(len(population_kind))
    size = 200
    low, high = 0.0, 1.0
    if population_kind == "rare ones":
        values = (rng.random(size) < 0.05).astype(float)
    elif population_kind == "half ones":
        values = (rng.random(size) < 0.5).astype(float)
    elif population_kind == "two clusters":
        values = np.where(rng.random(size) < 0.25, 0.05, 0.8)
    else:
        values = rng.choice([-1.0, 0.0, 0.0, 1.0], size)
        low = -1.0
    mean = float(values.mean())
    runs = 300
    misses = 0
    for _ in range(runs):
        sequence = without_replacement_sequence(
            rng.permutation(values), size, low=low, high=high, level=0.9
        )
        assert np.all(sequence.lows <= sequence.highs)
        misses += bool(np.any((sequence.lows > mean + 1e-12) | (sequence.highs < mean - 1e-12)))
    # guaranteed ≤ 10%; above 15% of 300 is a 1% chance at a true 10%
    assert misses / runs <= 0.15


def test_it_only_narrows_and_closes_on_the_mean_when_all_is_drawn() -> None:
    rng = np.random.default_rng(3)
    values = rng.random(500)
    sequence = without_replacement_sequence(values, 500)
    assert np.all(np.diff(sequence.lows) >= 0) and np.all(np.diff(sequence.highs) <= 0)
    assert sequence.low == pytest.approx(values.mean(), abs=1e-9)
    assert sequence.high == pytest.approx(values.mean(), abs=1e-9)
    assert sequence.mean == pytest.approx(values.mean())
    # half the population drawn: a real interval, well inside the range
    assert 0.0 < sequence.highs[249] - sequence.lows[249] < 0.3


def test_bad_input_is_refused_with_the_argument_named() -> None:
    with pytest.raises(ValueError, match="population"):
        without_replacement_sequence([0.1, 0.2], 1)
    with pytest.raises(ValueError, match=r"lie in \[0, 1\]"):
        without_replacement_sequence([1.5], 3)
    with pytest.raises(ValueError, match="level"):
        without_replacement_sequence([0.5], 3, level=1.0)
