"""Adaptive leaderboard runs (`leaderboard.adaptive`): the procedure stops calling a model once
its pairs are decided, never decides a pair the wrong way round at its stated rate, and the
replay over real Inspect logs reports what it would have saved."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from plumbline.cli.main import main
from plumbline.leaderboard.adaptive import (
    AdaptiveProcedure,
    AdaptiveSettings,
    disagrees,
    replay,
    replay_many,
    run_procedure,
)
from plumbline.leaderboard.adaptive_scores import (
    QuestionScores,
    ScoreTable,
    draw_order,
    weighted_values,
)


def _scores(accuracies: list[float], questions: int, seed: int) -> QuestionScores:
    rng = np.random.default_rng(seed)
    scores = (rng.random((len(accuracies), questions)) < np.array(accuracies)[:, None]) * 1.0
    return QuestionScores(
        models=[f"m{index}" for index in range(len(accuracies))],
        scores=scores,
        category_of=rng.choice(3, size=questions, p=[0.5, 0.3, 0.2]).astype(np.int64),
        categories=["a", "b", "c"],
        weights=[0.34, 0.33, 0.33],
        labels=[str(index) for index in range(questions)],
    )


def test_the_weighted_values_average_to_the_sa_bench_overall() -> None:
    scores = _scores([0.3, 0.8], 600, seed=1)
    values, span = weighted_values(scores.scores, scores.category_of, scores.weights)
    for row, model_scores in zip(values, scores.scores, strict=True):
        overall = sum(
            weight * model_scores[scores.category_of == key].mean()
            for key, weight in enumerate(scores.weights)
        )
        assert row.mean() == pytest.approx(overall)
    assert values.max() <= span + 1e-12


def test_a_clear_gap_is_decided_early_and_the_far_model_stops() -> None:
    scores = _scores([0.2, 0.6, 0.62], 3000, seed=2)
    outcome = replay(scores.table(draw_order(3000, 0)), AdaptiveSettings(round_size=50))
    status = {(pair.first, pair.second): pair for pair in outcome.pairs}
    assert status[("m0", "m1")].status == "behind"
    assert status[("m0", "m2")].status == "behind"
    answered = {model.model: model.questions for model in outcome.models}
    # m0 is decided against both long before m1 and m2 are told apart (or the questions end)
    assert answered["m0"] < answered["m1"] == answered["m2"]
    assert outcome.calls_used == sum(answered.values()) < outcome.calls_full
    # each model's interval holds its overall on the whole suite
    values, _ = weighted_values(scores.scores, scores.category_of, scores.weights)
    for index, model in enumerate(outcome.models):
        assert model.low <= values[index].mean() <= model.high


def test_identical_models_are_a_certified_tie_only_with_a_margin() -> None:
    scores = _scores([0.5, 0.5], 400, seed=3)
    scores.scores[1] = scores.scores[0]
    table = scores.table(draw_order(400, 1))
    no_margin = replay(table, AdaptiveSettings(round_size=40))
    assert no_margin.pairs[0].status == "open"
    assert no_margin.stop_reason == "questions" and no_margin.calls_used == 800
    with_margin = replay(table, AdaptiveSettings(round_size=40, tie_margin=0.05))
    assert with_margin.pairs[0].status == "tie"
    assert with_margin.stop_reason == "decided" and with_margin.calls_used < 800
    assert with_margin.groups() == [["m0", "m1"]]


def test_the_budget_stops_before_the_round_that_would_pass_it() -> None:
    scores = _scores([0.5, 0.52, 0.55], 2000, seed=4)
    outcome = replay(
        scores.table(draw_order(2000, 2)), AdaptiveSettings(round_size=100, budget_calls=1000)
    )
    assert outcome.stop_reason == "budget"
    assert 900 <= outcome.calls_used <= 1000
    with pytest.raises(ValueError, match="cannot ask one question"):
        replay(scores.table(draw_order(2000, 2)), AdaptiveSettings(budget_calls=2))


def test_a_dollar_budget_projects_each_round_at_the_cost_per_question_so_far() -> None:
    """Two models at $0.01 and $0.03 a question, a $10 budget: the first round (100 questions,
    $4) is asked in full, then a round only as large as the $6 left affords ($0.04 a question:
    150, cut to the round size 100; then $2 left: 50), then nothing."""
    scores = _scores([0.5, 0.5], 2000, seed=6)
    scores.scores[1] = scores.scores[0]
    table = scores.table(draw_order(2000, 3))
    settings = AdaptiveSettings(round_size=100, budget_usd=10.0)
    procedure = AdaptiveProcedure(
        table.models, 2000, settings, table.pair_path(settings.alpha, settings.tie_margin)
    )
    sizes: list[int] = []

    def ask(size: int, active: list[int]) -> None:
        sizes.append(size)
        procedure.spent_usd += size * 0.04
        procedure.cost_per_question = [0.01, 0.03]

    run_procedure(procedure, ask)
    assert sizes == [100, 100, 50]
    assert procedure.stop_reason == "budget" and procedure.spent_usd == pytest.approx(10.0)
    with pytest.raises(ValueError, match=r"above \$0"):
        AdaptiveSettings(budget_usd=0.0)


def test_the_decisions_are_holms_over_every_pairs_tests() -> None:
    """The statuses follow Holm's step-down on the procedure's own p-values: a rejected null
    `Δ ≤ 0` is a decided pair; and Holm decides a pair Bonferroni alone would still hold
    open at some round (its level rises as other pairs are decided)."""
    from plumbline.stats.multiple import holm

    scores = _scores([0.2, 0.45, 0.5, 0.8], 3000, seed=8)
    table = scores.table(draw_order(3000, 4))
    settings = AdaptiveSettings(round_size=25)
    procedure = AdaptiveProcedure(
        table.models, 3000, settings, table.pair_path(settings.alpha / 6, 0.0)
    )
    before_bonferroni = 0
    while True:
        size, active = procedure.next_round()
        if size == 0:
            break
        procedure.observe(max(procedure.answered) + size, active)
        rejected = holm(procedure.pvalues.ravel()).reshape(-1, 2) <= settings.alpha
        for position, pair in enumerate(procedure.pairs):
            outcome = procedure.status[pair]
            if outcome.questions == max(procedure.answered):
                expected = (
                    "ahead"
                    if rejected[position, 0]
                    else "behind"
                    if rejected[position, 1]
                    else "open"
                )
                assert outcome.status == expected
                bonferroni = procedure.pvalues[position].min() <= settings.alpha / 12
                before_bonferroni += outcome.status != "open" and not bonferroni
    assert before_bonferroni > 0


def test_wrong_orders_stay_rare_with_many_equal_models() -> None:
    """Five models of equal ability: every decision is a wrong one, and they stay under α."""
    wrong = 0
    runs = 60
    for run in range(runs):
        scores = _scores([0.6] * 5, 300, seed=100 + run)
        values, _ = weighted_values(scores.scores, scores.category_of, scores.weights)
        means = values.mean(axis=1)
        outcome = replay(scores.table(draw_order(300, run)), AdaptiveSettings(round_size=30))
        for pair in outcome.pairs:
            truth = means[int(pair.first[1:])] - means[int(pair.second[1:])]
            if (pair.status == "ahead" and truth <= 0) or (pair.status == "behind" and truth >= 0):
                wrong += 1
                break
    assert wrong / runs <= 0.1  # ≤ 5% guaranteed; > 10% of 60 is a 4% chance at 5%


def test_replays_are_seeded_and_report_every_pair() -> None:
    scores = _scores([0.2, 0.5, 0.8], 800, seed=5)
    first = replay_many(scores, 5, AdaptiveSettings(round_size=40), seed=7)
    again = replay_many(scores, 5, AdaptiveSettings(round_size=40), seed=7)
    assert first == again
    assert [(pair.first, pair.second) for pair in first.pairs] == [
        ("m0", "m1"),
        ("m0", "m2"),
        ("m1", "m2"),
    ]
    assert first.median_share < 1.0
    assert all(pair.disagree == 0.0 and pair.decided == 1.0 for pair in first.pairs)


def test_score_table_rejects_nothing_it_needs() -> None:
    table = ScoreTable(["a", "b"], np.zeros((2, 10)), 1.0)
    outcome = replay(table, AdaptiveSettings(round_size=4))
    assert outcome.pairs[0].status == "open" and outcome.stop_reason == "questions"


def test_replay_on_real_logs_through_the_cli(clean_logs: Path) -> None:
    result = CliRunner().invoke(
        main, ["leaderboard", str(clean_logs), "--replay-adaptive", "100", "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["replays"] == 100
    assert report["models"] == ["mockllm/alpha", "mockllm/beta", "mockllm/gamma"]
    assert report["questions"] > 0
    assert 0 < report["median_share"] <= 1
    assert len(report["pairs"]) == 3
    assert "no decided pair is in the wrong order" in report["guarantee"]
    terminal = CliRunner().invoke(main, ["leaderboard", str(clean_logs), "--replay-adaptive", "3"])
    assert terminal.exit_code == 0, terminal.output
    assert "median share of a full run's calls" in terminal.output


def test_a_replay_takes_no_dollar_budget(clean_logs: Path) -> None:
    result = CliRunner().invoke(
        main, ["leaderboard", str(clean_logs), "--replay-adaptive", "3", "--budget", "$5"]
    )
    assert result.exit_code == 2
    assert "--replay-adaptive takes a budget in calls" in result.stderr


def _near_pair_and_far_model(questions: int, seed: int) -> QuestionScores:
    """m1 is m0 with 1% of the questions flipped from wrong to right (1 point ahead); m2 is m0
    with 15% of its right answers wrong (about 9 points behind)."""
    scores = _scores([0.6, 0.6, 0.6], questions, seed=seed)
    rng = np.random.default_rng(seed + 1)
    scores.scores[1] = scores.scores[0]
    wrong = np.flatnonzero(scores.scores[0] == 0)
    scores.scores[1, rng.choice(wrong, size=questions // 100, replace=False)] = 1.0
    scores.scores[2] = scores.scores[0] * (rng.random(questions) >= 0.15)
    return scores


def test_a_tie_margin_settles_a_one_point_gap_within_it_and_pursues_a_far_one() -> None:
    """The indifference-zone reading of δ: the pair 1 point apart ends ordered up to δ (m1 not
    behind m0 by δ or more) long before the questions run out, and stays in one tie group; the
    far model, shown within δ early too, is pursued until decided apart by more than δ."""
    scores = _near_pair_and_far_model(4000, seed=11)
    settings = AdaptiveSettings(round_size=50, tie_margin=0.02)
    outcome = replay(scores.table(draw_order(4000, 5)), settings)
    status = {(pair.first, pair.second): pair.status for pair in outcome.pairs}
    assert status[("m0", "m1")] in ("behind_within_margin", "tie")
    assert status[("m0", "m2")] == "ahead" and status[("m1", "m2")] == "ahead"
    assert outcome.stop_reason == "decided" and outcome.share < 0.5
    assert outcome.groups(["m1", "m0", "m2"]) == [["m1", "m0"], ["m2"]]
    assert "ordered wrongly by 0.02 or more" in outcome.guarantee
    without = replay(scores.table(draw_order(4000, 5)), AdaptiveSettings(round_size=50))
    assert without.calls_used > outcome.calls_used


def test_each_status_contradicts_exactly_what_it_claims() -> None:
    assert disagrees("ahead", 0.02, 0.02) and not disagrees("ahead", 0.021, 0.02)
    assert disagrees("behind", -0.02, 0.02) and not disagrees("behind", -0.03, 0.02)
    assert disagrees("tie", 0.02, 0.02) and not disagrees("tie", -0.019, 0.02)
    assert disagrees("ahead_within_margin", -0.02, 0.02)
    assert not disagrees("ahead_within_margin", -0.019, 0.02)
    assert disagrees("behind_within_margin", 0.02, 0.02)
    assert not disagrees("behind_within_margin", 0.5, 0.5 + 1e-9)
    assert not disagrees("open", 1.0, 0.0)


def test_the_leaderboard_views_list_the_pairs_within_the_margin() -> None:
    from rich.console import Console

    from plumbline.views.leaderboard import margin_pair_names, render_adaptive

    scores = _near_pair_and_far_model(4000, seed=11)
    outcome = replay(
        scores.table(draw_order(4000, 5)), AdaptiveSettings(round_size=50, tie_margin=0.02)
    )
    run = outcome.document(order_seed=5)
    statuses = [pair.status for pair in run.pairs]
    assert "behind_within_margin" in statuses, statuses
    assert margin_pair_names(run) == ["m1 over m0"]
    console = Console(record=True, width=200)
    render_adaptive(run, console)
    text = console.export_text()
    assert "Within δ = 0.02" in text and "m1 over m0" in text
    assert "every pair settled" in text
