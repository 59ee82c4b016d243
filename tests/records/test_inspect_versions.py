"""Inspect's own committed test logs, of every log version Inspect reads (fixtures/inspect_logs,
copied from Inspect's repository: see its README): `records convert` converts every sample
Inspect can read, and the leaderboard's category means equal those of Inspect's `samples_df`,
de-duplicated as plumbline de-duplicates reruns (the newest log wins a (sample, epoch))."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.support.inspect_fixture_logs import LOGS, SUITE

from plumbline.cli.main import main
from plumbline.records.adapters import RunContext
from plumbline.records.adapters.inspect_log import convert_inspect, sample_time
from plumbline.records.log_files import find_log_files

OLD = LOGS / "scorer" / "logs" / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"

CATEGORIES = {
    "popularity": ("popularity", "score_match"),
    "mmlu": ("mmlu_0_shot", "score_choice"),
    "guess": ("guess_number", "score_closeness_log"),
    "input": ("input_task", "score_model_graded_fact"),
}


def _log_paths() -> list[Path]:
    return [Path(str(path)) for path in find_log_files([LOGS]).logs]


def _inspect_samples() -> list[tuple[str, str, Any, int, Any]]:
    """(task, model, sample id, epoch, sample) of every sample Inspect reads in the fixtures."""
    from inspect_ai.log import read_eval_log

    found = []
    for path in _log_paths():
        log = read_eval_log(str(path))
        for sample in log.samples or []:
            found.append((log.eval.task, log.eval.model, sample.id, sample.epoch, sample))
    return found


def test_the_fixtures_span_old_and_new_log_versions() -> None:
    samples = _inspect_samples()
    without_total_time = [s for *_, s in samples if s.total_time is None]
    assert len(without_total_time) >= 20 and len(samples) > len(without_total_time)


def test_a_sample_without_total_time_lasts_the_span_of_its_events() -> None:
    from inspect_ai.log import read_eval_log

    sample = read_eval_log(str(OLD)).samples[0]  # type: ignore[index]
    assert sample.total_time is None and sample.started_at is None
    timing = sample_time(sample)
    stamps = [e.timestamp for e in sample.events]
    assert timing.source == "events"
    assert timing.seconds == (max(stamps) - min(stamps)).total_seconds() > 0
    assert timing.started == min(stamps).isoformat()


def test_convert_reads_every_sample_inspect_reads(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    result = CliRunner().invoke(
        main, ["records", "convert", "--from", "inspect", str(LOGS), "-o", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output + result.stderr
    summary = json.loads(result.stdout)
    assert summary["errors"] == []
    units = {(task, model, str(sid), epoch) for task, model, sid, epoch, _ in _inspect_samples()}
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    # One record per (task, sample, epoch) of each model: reruns are kept once (the newest).
    assert len(records) == summary["records"] == len(units)
    keys = {(r["task_id"], r["arm"], r["repeat"]) for r in records}
    assert keys == {(f"{task}/{sid}", model, epoch) for task, model, sid, epoch in units}
    assert all(r["duration_seconds"] > 0 for r in records)
    assert {r["duration_source"] for r in records} == {"events", "total_time"}
    # Sample 1 of different tasks of one model are different runs.
    mini = {r["task_id"] for r in records if r["arm"] == "openai/gpt-4o-mini"}
    assert {"popularity/1", "input_task/1"} <= mini
    # Logs that gave no samples are said, as the leaderboard says them.
    notes = summary["notes"]
    for status in ("'error'", "'cancelled'", "'success'"):
        assert any(f"log status is {status}" in n and "holds no samples" in n for n in notes)
    assert any("its 3 recorded sample-epochs are converted" in n for n in notes)
    assert any("kept the newer log's" in n for n in notes)
    assert "note: " in result.stderr
    # What `records convert` wrote is valid as a whole: no (task, arm, repeat) twice.
    validated = CliRunner().invoke(main, ["records", "validate", str(out), "--json"])
    assert validated.exit_code == 0, validated.output
    assert json.loads(validated.stdout)["invalid"] == 0


def test_unscored_samples_follow_the_sample_errors_policy() -> None:
    unscored = (
        LOGS
        / "scorer"
        / "logs"
        / OLD.name.replace("15-18-04", "15-17-00").replace(
            "mj7khqpMM4GBCfVQozKgzB", "dPiJifoWeEQBrfWsAopzWr"
        )
    )
    failures = convert_inspect([unscored], RunContext())
    assert failures.errors == [] and len(failures.records) == 10
    assert all(not r.success and not r.infra_failure for r in failures.records)
    assert all(r.failure_reason and "no score" in r.failure_reason for r in failures.records)
    excluded = convert_inspect([unscored], RunContext(), sample_errors="infra")
    assert all(r.infra_failure for r in excluded.records)


def test_leaderboard_equals_samples_df_means(tmp_path: Path) -> None:
    import pandas as pd
    from inspect_ai.analysis import EvalInfo, EvalModel, EvalTask, SampleSummary, samples_df
    from inspect_ai.scorer import value_to_float

    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE, encoding="utf-8")
    out = tmp_path / "board.json"
    result = CliRunner().invoke(
        main,
        ["leaderboard", str(LOGS), "--suite", str(suite), "--errors", "exclude", "-o", str(out)],
    )
    assert result.exit_code in (0, 1), result.output
    board = {entry["model"]: entry for entry in json.loads(out.read_text())["models"]}

    frame = samples_df(
        [str(p) for p in _log_paths()],
        columns=SampleSummary + EvalInfo + EvalModel + EvalTask,
        quiet=True,
    )
    # De-duplicated as plumbline does: the newest log (created, then path) wins a sample.
    frame = frame.sort_values(["created", "log"]).drop_duplicates(
        ["model", "task_name", "id", "epoch"], keep="last"
    )
    convert = value_to_float()
    compared = 0
    for (model, task), group in frame.groupby(["model", "task_name"]):
        key = next(k for k, (name, _) in CATEGORIES.items() if name == task)
        column = CATEGORIES[key][1]
        values = [convert(v) for v in group[column] if not pd.isna(v)]
        if not values:
            assert board.get(model, {}).get(key) in (None, 0.0)
            continue
        assert board[model][key] == pytest.approx(math.fsum(values) / len(values), abs=1e-12)
        compared += 1
    assert compared >= 6
