"""`judge sample` draws each model's labels uniformly from its own judged questions (nothing
padded in from outside them), and the labelled-vs-unlabelled check that `leaderboard --labels`
runs holds its 1% level on uniform draws and catches labels picked by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from plumbline.leaderboard.label_sampling import uniform_picks
from plumbline.stats import selection_check


def _questions(count: int, prefix: str = "q") -> list[tuple[str, str]]:
    return [("task", f"{prefix}{i:03d}") for i in range(count)]


def test_each_model_gets_a_uniform_draw_of_its_own_questions() -> None:
    """`wide` was scored on 40 questions, `narrow` on 10 of them. Drawing 8 each: every one
    of `wide`'s questions must be picked with probability 8/40 (a draw that took the shared
    questions first would give `wide` only shared ones), `narrow` never gets a question it
    was not scored on, and models with the same questions get the same picks."""
    wide = _questions(40)
    narrow = wide[:10]
    rng = np.random.default_rng(37)
    counts = {q: 0 for q in wide}
    draws = 4000
    for _ in range(draws):
        picks = uniform_picks({"wide": wide, "narrow": narrow, "twin": list(wide)}, 8, rng)
        assert len(picks["wide"]) == len(set(picks["wide"])) == 8
        assert set(picks["narrow"]) <= set(narrow) and len(picks["narrow"]) == 8
        assert picks["twin"] == picks["wide"]
        for question in picks["wide"]:
            counts[question] += 1
    frequencies = np.array(list(counts.values())) / draws
    error = np.sqrt(0.2 * 0.8 / draws)
    assert np.all(np.abs(frequencies - 0.2) < 4.5 * error), frequencies
    shared, own = frequencies[:10].mean(), frequencies[10:].mean()
    assert abs(shared - own) < 0.02


def test_the_check_is_exact_for_a_0_1_judge() -> None:
    others = np.array([1.0] * 50 + [0.0] * 50)
    nine = selection_check(np.array([1.0] * 9 + [0.0]), others)
    distribution = sps.hypergeom(110, 59, 10)
    expected = min(1.0, 2 * min(distribution.cdf(9), distribution.sf(8)))
    assert nine.pvalue == pytest.approx(expected, rel=1e-12)
    assert not nine.chosen  # p ≈ 0.03: not below the 1% level
    assert nine.labelled_mean == 0.9 and nine.unlabelled_mean == 0.5
    check = selection_check(np.ones(10), others)
    distribution = sps.hypergeom(110, 60, 10)
    assert check.pvalue == pytest.approx(2 * distribution.sf(9), rel=1e-12)
    assert check.chosen and check.alpha == 0.01
    assert "hypergeometric" in check.method


@pytest.mark.parametrize("binary", [True, False])
def test_uniform_draws_are_flagged_at_most_one_percent_of_the_time(binary: bool) -> None:
    rng = np.random.default_rng(11 if binary else 12)
    flagged = 0
    draws = 2000
    for _ in range(draws):
        scores = rng.random(300)
        judge = (scores < 0.7).astype(float) if binary else np.clip(scores**2, 0, 1)
        picked = rng.permutation(300)[:20]
        mask = np.zeros(300, dtype=bool)
        mask[picked] = True
        flagged += selection_check(judge[mask], judge[~mask]).chosen
    assert flagged / draws <= 0.01 + 2 * np.sqrt(0.01 * 0.99 / draws)


def test_labels_picked_where_the_judge_said_yes_are_caught() -> None:
    rng = np.random.default_rng(5)
    caught = 0
    for _ in range(500):
        judge = (rng.random(300) < 0.6).astype(float)
        # a labeller who picks 30 questions, two in three of them among the judge's "yes"
        yes, no = np.flatnonzero(judge == 1), np.flatnonzero(judge == 0)
        picked = np.concatenate([rng.choice(yes, 20, replace=False), rng.choice(no, 10, False)])
        mask = np.zeros(300, dtype=bool)
        mask[picked] = True
        caught += selection_check(judge[mask], judge[~mask]).chosen
    assert caught / 500 < 0.2  # 67% vs 60%: too mild to see at 30 labels
    strong = 0
    for _ in range(500):
        judge = (rng.random(300) < 0.6).astype(float)
        yes = np.flatnonzero(judge == 1)
        mask = np.zeros(300, dtype=bool)
        mask[rng.choice(yes, 30, replace=False)] = True  # only the judge's "yes"
        strong += selection_check(judge[mask], judge[~mask]).chosen
    assert strong / 500 > 0.99


@pytest.mark.parametrize("labels", [5, 6, 7, 8, 9, 10])
@pytest.mark.parametrize("rate", [0.3, 0.555, 0.7, 0.9])
def test_labels_picked_from_the_judges_yes_are_never_called_random(
    labels: int, rate: float
) -> None:
    """Issue 45: the judge's "yes" answers alone, at 5–10 labels, are `chosen` or `cannot tell`,
    never `random`: when the check cannot reach its level, it says so."""
    ones = round(rate * 300)
    every = np.array([1.0] * ones + [0.0] * (300 - ones))
    check = selection_check(np.ones(labels), every[labels:])
    assert check.verdict in ("chosen", "cannot tell")
    assert check.chosen or not check.can_tell
    # the same count drawn from a judge with scores in between (normal approximation)
    scores = np.linspace(0, 1, 300)
    graded = selection_check(scores[-labels:], scores[:-labels])
    assert graded.verdict in ("chosen", "cannot tell")


def test_seven_hand_picked_labels_cannot_tell() -> None:
    """The audit's case: 7 of the judge's yes answers at a yes rate of 0.555: 2 × 0.555⁷ ≈ 0.03,
    the check cannot reach 1%, so it cannot tell (it used to say 'yes')."""
    every = np.array([1.0] * 167 + [0.0] * 133)
    check = selection_check(np.ones(7), every[7:])
    assert not check.chosen and not check.can_tell and check.verdict == "cannot tell"
    assert check.floor_pvalue >= 0.01 and check.labelled == 7
    big = selection_check(np.array([1.0] * 10 + [0.0] * 10), every[20:])
    assert big.can_tell and big.verdict == "random"
