"""Krippendorff's alpha (interval) against published values and its edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from plumbline.stats.agreement import krippendorff_alpha

NAN = math.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the 4 coders × 12 units
# example with missing values: interval alpha = 0.849.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]


def test_published_example() -> None:
    result = krippendorff_alpha(KRIPPENDORFF_2011, seed=1)
    assert result.statistic == pytest.approx(0.849, abs=5e-4)
    assert result.n == 11  # the unit rated once is not pairable
    assert result.details["pairable_values"] == 40
    assert result.interval.low <= result.statistic <= result.interval.high


def test_perfect_agreement_is_one_and_shuffled_ratings_are_near_zero() -> None:
    values = np.linspace(0, 1, 30)
    assert krippendorff_alpha([values, values, values], n_resamples=0).statistic == 1
    rng = np.random.default_rng(3)
    noise = [rng.permutation(values) for _ in range(3)]
    assert abs(krippendorff_alpha(noise, n_resamples=0).statistic) < 0.3


def test_matches_the_definition_by_brute_force() -> None:
    rng = np.random.default_rng(7)
    ratings = rng.normal(size=(3, 9))
    ratings[0, 2] = ratings[2, 5] = NAN
    pairs_within, values = [], []
    for unit in ratings.T:
        present = unit[~np.isnan(unit)]
        if len(present) < 2:
            continue
        values.extend(present)
        diffs = [
            (a - b) ** 2 for i, a in enumerate(present) for j, b in enumerate(present) if i != j
        ]
        pairs_within.append(sum(diffs) / (len(present) - 1))
    n = len(values)
    observed = sum(pairs_within) / n
    expected = sum((a - b) ** 2 for a in values for b in values) / (n * (n - 1))
    result = krippendorff_alpha(ratings, n_resamples=0)
    assert result.statistic == pytest.approx(1 - observed / expected)


@pytest.mark.parametrize(
    ("ratings", "message"),
    [
        ([1, 2, 3], "2-D"),
        ([[1, NAN], [NAN, 2]], "at least two units"),
        ([[1, 1], [1, 1]], "undefined"),
        ([[1, math.inf], [1, 2]], "finite"),
    ],
)
def test_bad_input(ratings: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        krippendorff_alpha(ratings)  # type: ignore[arg-type]
