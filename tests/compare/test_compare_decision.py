"""The decision rule: the A/B schema's three gates in its order, and the stricter CI rule."""

from __future__ import annotations

import pytest

from plumbline.compare.decision import ci_gates, decide, schema_gates
from plumbline.compare.result import MIXED, ArmSummary, Margins
from plumbline.stats.result import ConfidenceInterval

BASE = ArmSummary(
    runs=10,
    successes=8,
    success_rate=0.8,
    total_cost_usd=1.0,
    avg_cost_usd=0.1,
    median_cost_usd=0.1,
    median_duration_seconds=60.0,
    median_total_tokens=100_000.0,
    median_non_cache_tokens=50_000.0,
    solved_per_dollar=8.0,
    runs_with_cost=10,
    null_cost_runs=0,
    null_total_tokens_runs=0,
    null_non_cache_tokens_runs=0,
    timed_out_runs=0,
    excluded_infra_failures=0,
    tasks=2,
    min_repeats_per_task=5,
)


def arm(**changes: float | None) -> ArmSummary:
    return BASE.model_copy(update=changes)


def schema_decision(treatment: ArmSummary, control: ArmSummary) -> str:
    return decide("new", "old", schema_gates(treatment, control), "schema").decision


def test_prefer_treatment_when_all_three_gates_hold() -> None:
    better = arm(success_rate=0.9, median_duration_seconds=30.0, median_non_cache_tokens=20_000.0)
    assert schema_decision(better, BASE) == "prefer new"


def test_prefer_control_when_all_three_flip() -> None:
    worse = arm(success_rate=0.7, median_duration_seconds=90.0, median_non_cache_tokens=80_000.0)
    assert schema_decision(worse, BASE) == "prefer old"


@pytest.mark.parametrize(
    "changes",
    [
        {"success_rate": 0.7, "median_duration_seconds": 30.0},
        {"success_rate": 0.9, "median_duration_seconds": 61.0},
        {"median_non_cache_tokens": 50_001.0, "median_duration_seconds": 59.0},
    ],
)
def test_mixed_otherwise(changes: dict[str, float]) -> None:
    assert schema_decision(arm(**changes), BASE) == MIXED == "mixed results - inspect paired deltas"


def test_gates_are_checked_in_order_so_a_three_way_tie_prefers_the_treatment() -> None:
    decision = decide("new", "old", schema_gates(BASE, BASE), "schema")
    assert decision.decision == "prefer new"
    assert decision.tie
    assert [g.verdict for g in decision.gates] == ["tie", "tie", "tie"]


def test_equal_gate_counts_for_both_arms_but_not_a_full_tie() -> None:
    better = arm(median_duration_seconds=30.0)
    decision = decide("new", "old", schema_gates(better, BASE), "schema")
    assert decision.decision == "prefer new"
    assert not decision.tie
    assert [g.verdict for g in decision.gates] == ["tie", "treatment", "tie"]


def test_each_gate_carries_both_values_and_its_verdict() -> None:
    better = arm(success_rate=0.9, median_duration_seconds=90.0)
    gates = schema_gates(better, BASE)
    assert [(g.name, g.treatment, g.control, g.verdict) for g in gates] == [
        ("success_rate", 0.9, 0.8, "treatment"),
        ("median_duration_seconds", 90.0, 60.0, "control"),
        ("median_non_cache_tokens", 50_000.0, 50_000.0, "tie"),
    ]


def test_a_gate_without_data_holds_for_neither_arm() -> None:
    no_tokens = arm(median_non_cache_tokens=None)
    gates = schema_gates(no_tokens, BASE)
    assert gates[2].verdict == "neither"
    assert decide("new", "old", gates, "schema").decision == MIXED


def interval(low: float, high: float) -> ConfidenceInterval:
    return ConfidenceInterval(low, high, 0.95, "test")


def test_ci_rule_passes_only_when_the_interval_excludes_a_regression_beyond_the_margin() -> None:
    margins = Margins(success=0.05, duration=0.10, tokens=0.10)
    passing = ci_gates(
        BASE,
        BASE,
        pass_delta=interval(-0.04, 0.10),
        duration_ratio=interval(0.70, 1.09),
        token_ratio=interval(0.50, 0.95),
        margins=margins,
    )
    assert [g.holds_for_treatment for g in passing] == [True, True, True]
    assert decide("new", "old", passing, "ci").decision == "prefer new"
    failing = ci_gates(
        BASE,
        BASE,
        pass_delta=interval(-0.06, 0.10),  # could be 6 points worse: beyond the 5-point margin
        duration_ratio=interval(0.70, 1.09),
        token_ratio=interval(0.50, 0.95),
        margins=margins,
    )
    assert [g.holds_for_treatment for g in failing] == [False, True, True]
    assert decide("new", "old", failing, "ci").decision == MIXED


def test_ci_rule_can_prefer_the_control() -> None:
    gates = ci_gates(
        BASE,
        BASE,
        pass_delta=interval(-0.30, -0.10),
        duration_ratio=interval(1.2, 1.5),
        token_ratio=interval(1.05, 1.3),
        margins=Margins(),
    )
    assert [g.verdict for g in gates] == ["control", "control", "control"]
    assert decide("new", "old", gates, "ci").decision == "prefer old"


def test_ci_rule_without_an_interval_is_undecided() -> None:
    gates = ci_gates(
        BASE, BASE, pass_delta=None, duration_ratio=None, token_ratio=None, margins=Margins()
    )
    assert decide("new", "old", gates, "ci").decision == MIXED


def test_margins_parse() -> None:
    assert Margins.parse("success=0.02, tokens=0.2") == Margins(success=0.02, tokens=0.2)
    assert Margins.parse("") == Margins()
    for bad, message in (
        ("speed=0.1", "names success, duration, tokens"),
        ("success", "names success"),
        ("success=abc", "not a number"),
        ("duration=1.5", r"\[0, 1\)"),
        ("tokens=-0.1", r"\[0, 1\)"),
    ):
        with pytest.raises(ValueError, match=message):
            Margins.parse(bad)
