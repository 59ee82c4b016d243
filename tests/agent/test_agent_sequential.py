"""`plumbline agent run --until-decided`: a real run of the example suite (the fake agent fixes
the bugs only with the treatment's hint, so the arms are clearly different) stops launching
trials once the sequential verdict is reached, says what the fixed design would have needed,
and resumes to the same verdict without running anything more."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from tests.agent.helpers import fake_agent, read_jsonl

from plumbline.agent.schedule import build_schedule
from plumbline.agent.sequential import SequentialMonitor
from plumbline.cli.main import main
from plumbline.records.run_record import RunRecord
from plumbline.stats import plan_sequential, run_sequential

MakeSuite = Callable[..., Path]


def _run(suite: Path, output: Path, *extra: str) -> Any:
    return CliRunner().invoke(
        main,
        [
            "agent",
            "run",
            str(suite),
            "--agent",
            fake_agent(),
            "--profile",
            "claude-code",
            "-o",
            str(output),
            "--kill-grace",
            "0.3",
            "--seed",
            "3",
            # The fake agent calls no model (its records carry its own report, and say so), and
            # its scripted durations, not the harness's noisy clock, make the time gate decide.
            "--no-meter",
            "--duration-from",
            "agent",
            "--until-decided",
            "--effect",
            "0.3",
            *extra,
        ],
        catch_exceptions=False,
    )


def test_until_decided_stops_a_real_run_early_and_resumes_to_the_same_verdict(
    make_suite: MakeSuite, tmp_path: Path
) -> None:
    suite = make_suite()
    out = tmp_path / "results"
    design = plan_sequential(0.5, 0.3)
    result = _run(suite, out, "--concurrency", "2", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    sequential = document["sequential"]
    assert sequential["verdict"] == "better" and sequential["decided"]
    assert sequential["fixed_pairs"] == design.fixed_pairs
    assert sequential["max_pairs"] == design.max_pairs
    # every pair is +1: the boundary is crossed after the same pairs as run_sequential says
    wins = run_sequential([1] * design.max_pairs, [0] * design.max_pairs, design).stopped_at
    assert sequential["pairs_used"] == wins
    # the schedule holds enough pairs for the cap; most of it never ran
    assert sequential["scheduled_pairs"] >= design.max_pairs
    found = read_jsonl(out / "records.jsonl")
    assert len(found) == sequential["trials_recorded"] == document["ran"]
    # the decided pairs plus at most the trials in flight when the verdict came
    assert 2 * sequential["pairs_used"] <= len(found) <= 2 * sequential["pairs_used"] + 2
    assert sequential["trials_not_run"] == sequential["trials_scheduled"] - len(found)
    assert sequential["trials_not_run"] > len(found)
    assert all(r["success"] is (r["arm"] == "with_hint") for r in found)
    # resuming reaches the same verdict at the same pair and starts nothing new
    again = _run(suite, out, "--concurrency", "2")
    assert again.exit_code == 0, again.output
    text = " ".join(again.output.split())
    assert "ran 0, already recorded" in text
    assert f"with_hint vs without_hint better after {wins} pairs" in text
    assert f"The fixed design would have needed {design.fixed_pairs} pairs" in text
    assert "assuming a within-pair correlation 0 (independent arms: the most pairs)" in text
    assert "an approximate confidence sequence elsewhere" in text
    assert len(read_jsonl(out / "records.jsonl")) == len(found)


def test_collect_analyze_reports_the_sequential_verdict(
    make_suite: MakeSuite, tmp_path: Path
) -> None:
    out = tmp_path / "results"
    result = _run(make_suite(), out, "--collect-analyze", "--max-pairs", "12", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["sequential"]["max_pairs"] == 12
    compare = json.loads((out / "compare.json").read_text())
    assert compare["sequential"]["verdict"] == "better"
    assert compare["decision"] == "prefer with_hint"


def test_options_need_until_decided_and_two_arms(make_suite: MakeSuite, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["agent", "run", str(make_suite()), "-o", str(tmp_path / "o"), "--effect", "0.2"],
    )
    assert result.exit_code == 2 and "only apply with --until-decided" in result.output
    result = CliRunner().invoke(
        main,
        ["agent", "run", str(make_suite()), "-o", str(tmp_path / "o"), "--correlation", "0.5"],
    )
    assert result.exit_code == 2 and "only apply with --until-decided" in result.output


def test_until_decided_refuses_the_abba_order(make_suite: MakeSuite, tmp_path: Path) -> None:
    """abba runs the tasks in the same order in every repeat: the first tasks would decide for
    the suite, so the sequential verdict needs the random schedule (and says why)."""
    out = tmp_path / "results"
    result = _run(make_suite(), out, "--order", "abba")
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert "--until-decided needs --order random, not abba" in text
    assert "the first tasks' pairs would decide for the whole suite" in text
    assert not (out / "records.jsonl").exists()


def test_a_stated_correlation_is_planned_for_and_shown(
    make_suite: MakeSuite, tmp_path: Path
) -> None:
    out = tmp_path / "results"
    design = plan_sequential(0.5, 0.3, correlation=0.5)
    result = _run(make_suite(), out, "--correlation", "0.5", "--json")
    assert result.exit_code == 0, result.output
    sequential = json.loads(result.stdout)["sequential"]
    assert sequential["correlation"] == 0.5
    assert sequential["fixed_pairs"] == design.fixed_pairs
    assert sequential["max_pairs"] == design.max_pairs
    assert design.max_pairs < plan_sequential(0.5, 0.3).max_pairs


def _record(task: str, arm: str, repeat: int, success: bool) -> RunRecord:
    return RunRecord.model_validate(
        {
            "task_id": task,
            "arm": arm,
            "repeat": repeat,
            "success": success,
            "duration_seconds": 1.0,
            "total_cost_usd": None,
            "input_tokens": None,
            "output_tokens": None,
            "cache_read_tokens": None,
            "cache_write_tokens": None,
        }
    )


def test_the_monitor_reads_pairs_in_schedule_order_not_finishing_order() -> None:
    schedule = build_schedule(["a", "b"], ["T", "C"], 20, seed=1)
    design = plan_sequential(0.5, 0.3)
    forward = SequentialMonitor(schedule, "T", "C", design)
    backward = SequentialMonitor(schedule, "T", "C", design)
    records = [_record(u.task_id, u.arm, u.repeat, u.arm == "T") for u in schedule[:30]]
    for record in records:
        forward.add(record)
    for record in reversed(records):
        backward.add(record)
    assert forward.stopped and backward.stopped
    assert forward.result is not None and backward.result is not None
    wins = run_sequential([1] * design.max_pairs, [0] * design.max_pairs, design).stopped_at
    assert forward.result.stopped_at == backward.result.stopped_at == wins
    # a pair whose first unit is missing holds the prefix back
    gap = SequentialMonitor(schedule, "T", "C", design)
    for record in records[2:]:
        gap.add(record)
    assert not gap.stopped
