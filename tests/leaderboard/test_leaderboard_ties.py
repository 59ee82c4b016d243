"""Tie groups: paired MOVER intervals over shared questions inverted to p-values, Holm across
adjacent pairs, and SA Bench's 5 points."""

from __future__ import annotations

import math

import numpy as np
import pytest

from plumbline.leaderboard import CategoryData, parse_suite
from plumbline.leaderboard.scores import category_bounds, score_model
from plumbline.leaderboard.ties import difference_pvalue, pairwise_difference, rank_models
from plumbline.stats.mover import mover_difference


def suite_of(weights: dict[str, float], scoring: str = "rubric"):  # type: ignore[no-untyped-def]
    return parse_suite(
        {
            "suite": {"name": "t"},
            "category": [
                {
                    "key": k,
                    "name": k,
                    "description": k,
                    "weight": w,
                    "scoring": scoring,
                    "tasks": [k],
                    "scorer": "s",
                }
                for k, w in weights.items()
            ],
        }
    )


def data(
    model: str, key: str, values: np.ndarray, questions: np.ndarray | None = None
) -> CategoryData:
    matrix = np.asarray(values, dtype=float).reshape(len(values), -1)
    ids = np.arange(len(values)) if questions is None else questions
    return CategoryData(model, key, ids.astype(np.int64), matrix, 0, 0, ("log",), (key,))


def test_single_category_pair_is_the_mover_difference_with_question_correlation() -> None:
    rng = np.random.default_rng(1)
    suite = suite_of({"c": 1.0})
    a, b = rng.uniform(0.3, 1.0, 30), rng.uniform(0.2, 0.9, 30)
    collected = {("A", "c"): data("A", "c", a), ("B", "c"): data("B", "c", b)}
    models = [score_model(suite, m, collected) for m in ("A", "B")]
    result = pairwise_difference(suite, models[0], models[1])
    la, ua, _ = category_bounds(a)
    lb, ub, _ = category_bounds(b)
    r = np.corrcoef(a, b)[0, 1]
    expected = mover_difference(a.mean(), la, ua, b.mean(), lb, ub, r)
    assert result.difference == pytest.approx(np.mean(a - b))
    assert result.low == pytest.approx(float(expected.low))
    assert result.high == pytest.approx(float(expected.high))
    assert result.shared_questions == {"c": 30}
    _, (comparison,) = rank_models(suite, models)
    assert comparison.pvalue_holm == pytest.approx(comparison.pvalue)  # one test: no correction


def test_pvalue_is_the_interval_inverted() -> None:
    rng = np.random.default_rng(4)
    suite = suite_of({"x": 0.6, "y": 0.4}, scoring="binary")
    for shift in (0.0, 0.1, 0.2, 0.35):
        collected = {}
        for key in ("x", "y"):
            latent = rng.uniform(size=40)
            collected[("A", key)] = data("A", key, (latent < 0.5 + shift).astype(float))
            collected[("B", key)] = data("B", key, (latent < 0.5).astype(float))
        a, b = (score_model(suite, m, collected) for m in "AB")
        result = pairwise_difference(suite, a, b)
        p = difference_pvalue(suite, result)
        assert p is not None and result.low is not None and result.high is not None
        excludes_zero = result.low > 0 or result.high < 0
        assert (p < 0.05) == excludes_zero
        if 1e-9 < p < 1:
            # at level 1 − p, the bound nearest 0 sits on 0
            at = pairwise_difference(suite, a, b, level=1 - p)
            nearest = at.low if result.difference > 0 else at.high
            assert nearest == pytest.approx(0.0, abs=1e-6)


def test_pairs_only_over_shared_questions() -> None:
    suite = suite_of({"c": 1.0})
    a = np.array([1.0, 0.8, 0.6, 0.4, 0.9])
    b = np.array([0.5, 0.7, 0.2])
    collected = {
        ("A", "c"): data("A", "c", a),
        ("B", "c"): data("B", "c", b, questions=np.array([1, 2, 7])),
    }
    models = [score_model(suite, m, collected) for m in ("A", "B")]
    result = pairwise_difference(suite, models[0], models[1])
    assert result.shared_questions == {"c": 2}
    assert result.unpaired == []
    assert result.difference == pytest.approx(np.mean([0.8 - 0.5, 0.6 - 0.7]))


def test_weighted_combination_and_missing_category() -> None:
    suite = suite_of({"x": 0.5, "y": 0.5})
    rng = np.random.default_rng(2)
    ax, bx, ay = rng.uniform(0, 1, 12), rng.uniform(0, 1, 12), rng.uniform(0, 1, 9)
    collected = {
        ("A", "x"): data("A", "x", ax),
        ("B", "x"): data("B", "x", bx),
        ("A", "y"): data("A", "y", ay),  # B never ran y: a fixed 0
    }
    models = [score_model(suite, m, collected) for m in ("A", "B")]
    result = pairwise_difference(suite, models[0], models[1])
    x = pairwise_difference(suite_of({"x": 1.0}), *models)  # the x part alone
    ly, uy, _ = category_bounds(ay)
    assert result.difference == pytest.approx(0.5 * np.mean(ax - bx) + 0.5 * np.mean(ay))
    assert x.low is not None and x.high is not None
    below = math.sqrt((0.5 * (x.difference - x.low)) ** 2 + (0.5 * (ay.mean() - ly)) ** 2)
    above = math.sqrt((0.5 * (x.high - x.difference)) ** 2 + (0.5 * (uy - ay.mean())) ** 2)
    assert result.low == pytest.approx(result.difference - below)
    assert result.high == pytest.approx(result.difference + above)
    assert [part.kind for part in result.parts] == ["paired", "one model"]


def test_holm_across_adjacent_pairs_and_groups() -> None:
    suite = suite_of({"c": 1.0})
    rng = np.random.default_rng(3)
    base = rng.uniform(0.0, 0.1, 40)
    noise = rng.normal(0, 0.05, 40)
    noise -= noise.mean()  # "close" is 0.5 points below "top" on average: t ≈ 0.6
    values = {
        "top": base + 0.7,
        "close": base + 0.695 + noise,
        "far": base + 0.2 + rng.normal(0, 0.02, 40),
    }
    collected = {(m, "c"): data(m, "c", np.clip(v, 0, 1)) for m, v in values.items()}
    ranked, comparisons = rank_models(suite, [score_model(suite, m, collected) for m in values])
    assert [m.model for m in ranked] == ["top", "close", "far"]
    raw = [c.pvalue for c in comparisons]
    assert all(p is not None for p in raw)
    small, large = sorted(raw)  # type: ignore[type-var]
    expected = {small: min(1.0, 2 * small), large: min(1.0, max(2 * small, large))}
    for comparison in comparisons:
        assert comparison.pvalue_holm == pytest.approx(expected[comparison.pvalue])
    assert [c.tied for c in comparisons] == [True, False]
    assert [m.tie_group for m in ranked] == [1, 1, 2]
    # SA Bench's reading: within 5 points is "statistically equivalent"
    assert [c.sa_bench_equivalent for c in comparisons] == [True, False]
    assert [m.sa_bench_group for m in ranked] == [1, 1, 2]


def test_identical_models_are_tied_and_one_question_has_no_se() -> None:
    suite = suite_of({"c": 1.0})
    same = np.array([0.5, 0.7, 0.9])
    collected = {("A", "c"): data("A", "c", same), ("B", "c"): data("B", "c", same.copy())}
    _, (comparison,) = rank_models(suite, [score_model(suite, m, collected) for m in "AB"])
    assert comparison.pvalue == 1.0 and comparison.tied
    lonely = {("A", "c"): data("A", "c", np.array([0.5])), ("B", "c"): data("B", "c", same)}
    models = [score_model(suite, m, lonely) for m in "AB"]
    assert models[0].categories["c"].interval is not None
    assert models[0].categories["c"].interval.low is None
    assert models[0].overall_interval.low is None
    _, (untestable,) = rank_models(suite, models)
    assert untestable.pvalue is None and untestable.tied  # not shown to differ


def test_a_perfect_binary_category_does_not_make_the_overall_certain() -> None:
    suite = suite_of({"exam": 0.5, "cdk": 0.5}, scoring="binary")
    perfect = np.ones(5)
    collected = {("A", "exam"): data("A", "exam", perfect), ("A", "cdk"): data("A", "cdk", perfect)}
    model = score_model(suite, "A", collected)
    exam = model.categories["exam"].interval
    assert exam is not None and exam.method == "Wilson" and exam.low is not None
    assert model.categories["exam"].standard_error == 0.0  # the plain question-level SE
    # MOVER: 1 − √(2·(0.5·(1 − l))²)
    expected = 1 - math.sqrt(2 * (0.5 * (1 - exam.low)) ** 2)
    assert model.overall_interval.low == pytest.approx(expected)
    assert model.overall_interval.high == 1.0
    assert model.overall_interval.low < 0.9  # five right answers per category prove little
