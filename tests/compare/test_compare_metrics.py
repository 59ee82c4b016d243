"""The A/B schema's per-arm metrics and paired deltas, the reference harness's mistakes fixed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from plumbline.compare.metrics import (
    arm_summaries,
    delta_summaries,
    pair_runs,
    per_task_table,
    prepare_runs,
)
from plumbline.compare.result import PRIMARY_DELTAS
from plumbline.records.run_record import RunRecordTable, read_run_records

Load = Callable[[list[dict[str, Any]]], RunRecordTable]


def summaries_of(table: RunRecordTable, arms: list[str]) -> dict[str, Any]:
    return arm_summaries(prepare_runs(table.frame), arms)


def test_matches_an_independent_per_record_implementation(
    example_path: Path, bench_module: ModuleType
) -> None:
    """The bundled example has null costs, an infra failure and a timeout: both agree."""
    records = [json.loads(line) for line in example_path.read_text().splitlines()]
    expected = bench_module.naive_seed_analysis(records, "with_skelly", "without_skelly")
    prepared = prepare_runs(read_run_records([example_path]).frame)
    summaries = arm_summaries(prepared, ["with_skelly", "without_skelly"])
    for arm, fields in expected["arm_summaries"].items():
        ours = summaries[arm].model_dump()
        for name, value in fields.items():
            assert ours[name] == pytest.approx(value, rel=1e-12), (arm, name)
    deltas = delta_summaries(
        pair_runs(prepared, "with_skelly", "without_skelly"), list(PRIMARY_DELTAS)
    )
    for name, stats in expected["paired"].items():
        assert deltas[name].mean == pytest.approx(stats["mean"], rel=1e-12)
        assert deltas[name].median == pytest.approx(stats["median"], rel=1e-12)


def test_even_count_median_averages_the_two_middle_values(load: Load, run: Any) -> None:
    durations = [1.0, 2.0, 3.0, 10.0]
    table = load([run(repeat=i, duration_seconds=d) for i, d in enumerate(durations)])
    summary = summaries_of(table, ["T"])["T"]
    assert summary.median_duration_seconds == 2.5 == np.median(durations)


def test_null_costs_are_excluded_and_counted_never_zero(load: Load, run: Any) -> None:
    table = load(
        [
            run(repeat=1, total_cost_usd=0.1, success=True),
            run(repeat=2, total_cost_usd=None, success=True),
            run(repeat=3, total_cost_usd=0.3, success=False),
        ]
    )
    summary = summaries_of(table, ["T"])["T"]
    assert summary.runs == 3
    assert summary.null_cost_runs == 1
    assert summary.runs_with_cost == 2
    assert summary.total_cost_usd == pytest.approx(0.4)
    assert summary.avg_cost_usd == pytest.approx(0.2)  # 0.4 / 2, not 0.4 / 3
    assert summary.median_cost_usd == pytest.approx(0.2)  # median of {0.1, 0.3}, not of {0, ...}
    # The unknown-cost success is not bought for free: one costed success per 0.4 USD.
    assert summary.solved_per_dollar == pytest.approx(1 / 0.4)


def test_null_tokens_are_excluded_from_token_medians(load: Load, run: Any) -> None:
    table = load(
        [
            run(repeat=1, input_tokens=100, output_tokens=10),
            run(repeat=2, input_tokens=None, output_tokens=10),
            run(repeat=3, input_tokens=300, output_tokens=30, cache_read_tokens=None),
        ]
    )
    summary = summaries_of(table, ["T"])["T"]
    assert summary.median_non_cache_tokens == pytest.approx((110 + 330) / 2)
    assert summary.median_total_tokens == pytest.approx(100 + 10 + 500 + 50)
    assert summary.null_non_cache_tokens_runs == 1
    assert summary.null_total_tokens_runs == 2


def test_solved_per_dollar_is_null_when_total_cost_is_zero(load: Load, run: Any) -> None:
    table = load([run(repeat=1, total_cost_usd=0.0), run(repeat=2, total_cost_usd=None)])
    summary = summaries_of(table, ["T"])["T"]
    assert summary.total_cost_usd == 0.0
    assert summary.solved_per_dollar is None
    nothing = summaries_of(load([run(total_cost_usd=None)]), ["T"])["T"]
    assert nothing.total_cost_usd is None and nothing.avg_cost_usd is None


def test_a_timeout_is_a_failure_and_an_infra_failure_is_excluded(load: Load, run: Any) -> None:
    table = load(
        [
            run(repeat=1, success=True),
            run(repeat=2, success=True, timed_out=True, duration_seconds=600.0),
            run(repeat=3, success=False, infra_failure=True, duration_seconds=1.0),
            run(arm="C", repeat=1, infra_failure=True),
        ]
    )
    summaries = summaries_of(table, ["T", "C"])
    assert summaries["T"].runs == 2
    assert summaries["T"].successes == 1
    assert summaries["T"].timed_out_runs == 1
    assert summaries["T"].median_duration_seconds == pytest.approx(305.0)
    assert summaries["T"].excluded_infra_failures == 1
    assert summaries["C"].runs == 0 and summaries["C"].excluded_infra_failures == 1


def test_duplicates_are_reported_with_locations_and_kept_out_of_pairs(load: Load, run: Any) -> None:
    table = load(
        [
            run(arm="T", repeat=1, duration_seconds=5.0),
            run(arm="T", repeat=1, duration_seconds=7.0),
            run(arm="C", repeat=1),
            run(arm="T", repeat=2),
            run(arm="C", repeat=2, duration_seconds=4.0),
        ]
    )
    prepared = prepare_runs(table.frame)
    [duplicate] = prepared.duplicates
    path = table.files[0]
    assert (duplicate.task_id, duplicate.arm, duplicate.repeat) == ("t1", "T", 1)
    assert duplicate.locations == [f"{path}:1", f"{path}:2"]
    pairs = pair_runs(prepared, "T", "C")
    assert pairs["repeat"].to_list() == [2]
    assert arm_summaries(prepared, ["T"])["T"].runs == 3  # both copies are real runs


def test_paired_deltas_are_treatment_minus_control(load: Load, run: Any) -> None:
    table = load(
        [
            run(arm="T", repeat=1, success=True, duration_seconds=10.0, total_cost_usd=0.5),
            run(arm="C", repeat=1, success=False, duration_seconds=30.0, total_cost_usd=None),
            run(arm="T", repeat=2, success=False, duration_seconds=20.0, input_tokens=0),
            run(arm="C", repeat=2, success=True, duration_seconds=25.0, total_cost_usd=0.2),
            run(arm="T", repeat=3, success=True),  # no control partner
        ]
    )
    pairs = pair_runs(prepare_runs(table.frame), "T", "C")
    assert pairs["pass_delta"].to_list() == [1, -1]
    assert pairs["duration_delta_seconds"].to_list() == [-20.0, -5.0]
    assert pairs["cost_delta_usd"].to_list() == [None, pytest.approx(-0.1)]
    assert pairs["token_delta"].to_list() == [0, -1000]
    deltas = delta_summaries(pairs, list(PRIMARY_DELTAS))
    assert deltas["duration_delta_seconds"].mean == pytest.approx(-12.5)
    assert deltas["cost_delta_usd"].n == 1 and deltas["cost_delta_usd"].null_pairs == 1


def test_per_task_table(load: Load, run: Any) -> None:
    records = [
        run(task_id=task, arm=arm, repeat=r, success=(arm == "T" or r == 1))
        for task in ("a", "b")
        for arm in ("T", "C")
        for r in (1, 2)
    ] + [run(task_id="c", arm="T", repeat=1)]
    prepared = prepare_runs(load(records).frame)
    table = per_task_table(prepared, pair_runs(prepared, "T", "C"), "T", "C")
    rows = {row["task_id"]: row for row in table.to_dicts()}
    assert rows["a"]["pairs"] == 2
    assert rows["a"]["success_rate_treatment"] == 1.0
    assert rows["a"]["success_rate_control"] == 0.5
    assert rows["a"]["mean_pass_delta"] == 0.5
    assert rows["c"]["pairs"] == 0 and rows["c"]["runs_control"] == 0


def test_pairing_by_position_equals_the_join(load: Load, run: Any) -> None:
    """Arms listing the same keys in the same order pair row by row; any other order joins."""
    rng = np.random.default_rng(3)
    keys = [(f"task-{t}", r) for t in range(3) for r in range(4)]
    treatment = [
        run(task_id=t, arm="T", repeat=r, duration_seconds=float(rng.integers(1, 99)))
        for t, r in keys
    ]
    control = [
        run(task_id=t, arm="C", repeat=r, duration_seconds=float(rng.integers(1, 99)))
        for t, r in keys
    ]
    aligned = pair_runs(prepare_runs(load(treatment + control).frame), "T", "C")
    shuffled = pair_runs(prepare_runs(load(treatment + control[::-1]).frame), "T", "C")
    assert aligned.equals(shuffled)
    assert aligned.height == len(keys)
    assert aligned["duration_delta_seconds"].to_list() == [
        t["duration_seconds"] - c["duration_seconds"]
        for t, c in zip(treatment, control, strict=True)
    ]
    # A control missing a key (and one the treatment lacks) still pairs by the join.
    partial = pair_runs(prepare_runs(load(treatment[1:] + control[:-1]).frame), "T", "C")
    assert partial.height == len(keys) - 2
