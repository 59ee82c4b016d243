"""`compare_runs`: arms, bootstrap intervals on the right unit, tests, warnings, several arms."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from plumbline import stats
from plumbline.cli.output import dumps
from plumbline.compare.analysis import CompareError, compare_runs, resolve_arms
from plumbline.compare.result import CompareReport, CompareSettings
from plumbline.records.run_record import RunRecordTable, read_run_records

Load = Callable[[list[dict[str, Any]]], RunRecordTable]
FAST = CompareSettings(n_resamples=1000, seed=3)
EXAMPLE_ARMS: dict[str, Any] = {"treatments": ["with_skelly"], "control": "without_skelly"}


def test_arms_have_no_default_names() -> None:
    """Even two arms with the bundled example's names must be named (the issue changed this on
    purpose: there were default names); the error lists the arms and the flags to pass."""
    with pytest.raises(CompareError) as raised:
        resolve_arms(["without_skelly", "with_skelly"], None, None)
    message = str(raised.value)
    assert "--treatment" in message and "--control" in message
    assert "arms found: with_skelly, without_skelly" in message
    assert "e.g. --treatment with_skelly --control without_skelly" in message


def test_other_arms_must_be_named() -> None:
    with pytest.raises(CompareError, match=r"name the arms.*arms found: a, b"):
        resolve_arms(["b", "a"], None, None)
    with pytest.raises(CompareError, match="arm 'x' has no valid runs; arms found: a, b"):
        resolve_arms(["a", "b"], ["x"], None)
    with pytest.raises(CompareError, match="name the control"):
        resolve_arms(["a", "b", "c"], ["a"], None)
    assert resolve_arms(["a", "b"], ["a"], None) == (["a"], "b")
    assert resolve_arms(["a", "b", "c"], None, "c") == (["a", "b"], "c")


def synthetic(
    rng: np.random.Generator,
    tasks: int,
    repeats: int,
    *,
    arms: dict[str, tuple[float, float]],
    task_spread: float = 0.0,
) -> list[dict[str, Any]]:
    """Runs for each arm: (pass-rate shift, time factor); tasks differ by `task_spread`."""
    records = []
    for task in range(tasks):
        base_pass = rng.uniform(0.3, 0.9)
        task_effect = rng.normal(0.0, task_spread)  # the treatment helps some tasks, not others
        for name, (shift, factor) in arms.items():
            treated = name != "control"
            for repeat in range(repeats):
                p = np.clip(base_pass + shift, 0, 1)
                seconds = 60 * factor * rng.lognormal(0, 0.2) + (task_effect if treated else 0.0)
                records.append(
                    {
                        "task_id": f"task-{task:02d}",
                        "arm": name,
                        "repeat": repeat,
                        "success": bool(rng.random() < p),
                        "duration_seconds": float(max(seconds, 1.0)),
                        "total_cost_usd": float(0.05 * factor),
                        "input_tokens": int(9000 * factor * rng.lognormal(0, 0.2)),
                        "output_tokens": 1000,
                        "cache_read_tokens": 100,
                        "cache_write_tokens": 10,
                    }
                )
    return records


def test_report_uses_the_schema_field_names_and_is_strict_json(example_path: Path) -> None:
    report = compare_runs(read_run_records([example_path]), **EXAMPLE_ARMS, settings=FAST)
    data = json.loads(dumps(report))
    assert data == report.model_dump(mode="json")
    assert data["schema_version"] == "plumbline.compare/2"
    assert CompareReport.model_validate(data) == report
    assert data["decision"] == report.decision
    assert set(data["arm_summaries"]) == {"with_skelly", "without_skelly"}
    for name in ("pass_delta", "cost_delta_usd", "duration_delta_seconds", "token_delta"):
        assert {"mean", "median", "ci"} <= set(data["paired"][name])
    fields = data["arm_summaries"]["with_skelly"]
    for name in (
        "runs",
        "successes",
        "success_rate",
        "total_cost_usd",
        "avg_cost_usd",
        "median_cost_usd",
        "median_duration_seconds",
        "median_total_tokens",
        "median_non_cache_tokens",
        "solved_per_dollar",
    ):
        assert name in fields
    assert data["input"]["infra_failures"] == {"with_skelly": 1}
    assert data["arm_summaries"]["without_skelly"]["timed_out_runs"] == 1
    assert [g["name"] for g in data["gates"]] == [
        "success_rate",
        "median_duration_seconds",
        "median_non_cache_tokens",
    ]


def test_bootstrap_intervals_are_seeded_and_cover_the_mean(load: Load) -> None:
    rng = np.random.default_rng(0)
    table = load(synthetic(rng, 8, 5, arms={"T": (0.1, 0.5), "control": (0.0, 1.0)}))
    first = compare_runs(table, treatments=["T"], control="control", settings=FAST)
    again = compare_runs(table, treatments=["T"], control="control", settings=FAST)
    for name, delta in first.primary.paired.deltas():
        assert delta.ci is not None and delta.ci.low is not None and delta.ci.high is not None
        assert delta.ci == getattr(again.primary.paired, name).ci
        mean = delta.mean
        assert mean is not None
        assert delta.ci.low - 1e-9 <= mean <= delta.ci.high + 1e-9
    assert first.primary.paired.duration_delta_seconds.ci.high < 0  # type: ignore[union-attr,operator]


def test_intervals_resample_tasks_not_repeats(load: Load) -> None:
    """When the effect differs between tasks, the task is the unit: the interval must be wider
    than one that treats every repeat as independent."""
    rng = np.random.default_rng(1)
    records = synthetic(rng, 6, 20, arms={"T": (0.0, 1.0), "control": (0.0, 1.0)}, task_spread=30.0)
    table = load(records)
    report = compare_runs(table, treatments=["T"], control="control", settings=FAST)
    clustered = report.primary.paired.duration_delta_seconds.ci
    assert clustered is not None and clustered.low is not None and clustered.high is not None
    by_key = {(r["task_id"], r["arm"], r["repeat"]): r["duration_seconds"] for r in records}
    deltas = [by_key[(t, "T", k)] - by_key[(t, "control", k)] for (t, a, k) in by_key if a == "T"]
    naive = stats.bootstrap_interval(deltas, n_resamples=1000, seed=3).interval
    assert clustered.high - clustered.low > 2 * (naive.high - naive.low)


def test_paired_tests_use_the_pairs(load: Load, run: Any) -> None:
    records = []
    for k in range(12):
        records.append(run(arm="T", repeat=k, success=k < 10, duration_seconds=10.0 + k))
        records.append(run(arm="C", repeat=k, success=k < 4, duration_seconds=20.0 + 2 * k))
    report = compare_runs(load(records), treatments=["T"], control="C", settings=FAST)
    mcnemar = report.primary.tests["mcnemar_success"]
    assert (mcnemar.b, mcnemar.c) == (6, 0)
    assert mcnemar.pvalue == pytest.approx(stats.mcnemar_exact([1] * 6, [0] * 6).pvalue)
    hodges = report.primary.tests["hodges_lehmann_duration_seconds"]
    assert hodges.statistic == pytest.approx(-(10 + np.median(range(12))))
    ratio = report.primary.tests["geometric_mean_ratio_non_cache_tokens"]
    assert ratio.statistic == pytest.approx(1.0)
    assert report.primary.tests["wilcoxon_duration_seconds"].pvalue is not None


def test_degenerate_tests_say_why_instead_of_failing(load: Load, run: Any) -> None:
    records = [run(arm=a, repeat=k) for a in ("T", "C") for k in range(5)]
    report = compare_runs(load(records), treatments=["T"], control="C", settings=FAST)
    wilcoxon = report.primary.tests["wilcoxon_duration_seconds"]
    assert wilcoxon.skipped is not None or wilcoxon.pvalue == 1.0
    if wilcoxon.skipped is not None:
        assert wilcoxon.skipped_reason is not None
        assert wilcoxon.skipped_reason.startswith("not computed: ")
    assert report.decision == "prefer T" and report.primary.tie
    assert any("all three gates are ties" in w for w in report.warnings)


def test_fewer_than_five_repeats_is_warned(load: Load, run: Any) -> None:
    records = [
        run(task_id=t, arm=a, repeat=k)
        for t in ("x", "y")
        for a in ("T", "C")
        for k in range(5 if t == "x" else 3)
    ]
    report = compare_runs(load(records), treatments=["T"], control="C", settings=FAST)
    [warning] = [w for w in report.warnings if "fewer than 5 repeats" in w]
    assert warning.startswith("2 task-arm pairs")
    assert "y/C (3)" in warning and "y/T (3)" in warning and "x/" not in warning


def test_minimum_detectable_difference_shrinks_with_more_tasks(load: Load) -> None:
    rng = np.random.default_rng(5)
    arms = {"T": (0.05, 1.0), "control": (0.0, 1.0)}
    small = compare_runs(load(synthetic(rng, 5, 5, arms=arms)), control="control", settings=FAST)
    large = compare_runs(load(synthetic(rng, 40, 5, arms=arms)), control="control", settings=FAST)
    small_mde = small.primary.minimum_detectable_pass_delta
    large_mde = large.primary.minimum_detectable_pass_delta
    assert small_mde is not None and large_mde is not None
    assert 0 < large_mde < small_mde < 1
    assert large.primary.power_analysis.tasks == 40 and large.primary.power_analysis.epochs == 5


def test_several_treatments_are_each_compared_with_the_control_holm_corrected(
    load: Load,
) -> None:
    rng = np.random.default_rng(2)
    arms = {"fast": (0.0, 0.5), "slow": (0.0, 1.5), "same": (0.0, 1.0), "control": (0.0, 1.0)}
    report = compare_runs(load(synthetic(rng, 6, 6, arms=arms)), control="control", settings=FAST)
    assert [c.treatment for c in report.comparisons] == ["fast", "same", "slow"]
    raw = [c.tests["wilcoxon_duration_seconds"].pvalue for c in report.comparisons]
    adjusted = [c.tests["wilcoxon_duration_seconds"].pvalue_holm for c in report.comparisons]
    assert adjusted == pytest.approx(list(stats.holm(raw)))
    assert report.comparisons[0].gates[1].verdict == "treatment"
    assert report.comparisons[2].gates[1].verdict == "control"
    assert set(report.arm_summaries) == {"fast", "same", "slow", "control"}
    data = report.model_dump(mode="json")
    assert [c["treatment"] for c in data["comparisons"]] == ["fast", "same", "slow"]


def test_ci_rule_decides_from_intervals(load: Load) -> None:
    rng = np.random.default_rng(4)
    records = synthetic(rng, 10, 6, arms={"T": (0.0, 0.5), "control": (0.0, 1.0)})
    for record in records:
        record["success"] = True  # identical success: only the margins can decide it
    table = load(records)
    strict = CompareSettings(rule="ci", n_resamples=1000, seed=3)
    report = compare_runs(table, treatments=["T"], control="control", settings=strict)
    gates = report.primary.gates
    assert all(g.interval is not None for g in gates)
    assert gates[1].interval.high < 1.0  # type: ignore[union-attr]
    assert report.decision == "prefer T"


def test_input_problems_become_warnings(tmp_path: Path, run: Any) -> None:
    path = tmp_path / "runs.jsonl"
    rows = [
        run(arm="T", repeat=1, total_cost_usd=None),
        run(arm="C", repeat=1),
        run(arm="C", repeat=1),
        run(arm="C", repeat=2, infra_failure=True),
        {"task_id": "t1", "arm": "T"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = compare_runs(read_run_records([path]), treatments=["T"], control="C", settings=FAST)
    text = "\n".join(report.warnings)
    assert "1 invalid records were excluded" in text
    assert f"duplicate run t1/C/repeat 1 at {path}:2, {path}:3" in text
    assert "C: 1 infrastructure failures excluded" in text
    assert "T: 1 of 1 runs have no cost" in text
    assert report.input.errors[0].startswith(f"{path}:5: ")
