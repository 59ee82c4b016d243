"""`--parquet` on leaderboard, compare and reliability: rows written with polars, with Inspect's
samples_df column names where they overlap (checked against samples_df itself)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from tests.support.original_sa_bench import APPS, DESIGNS, QUESTIONS, SCRIPT

from plumbline.cli.main import main

EXAMPLES = Path(__file__).parents[2] / "src/plumbline/examples"


def test_leaderboard_parquet_matches_inspect_samples_df(
    original_logs: Path, tmp_path: Path
) -> None:
    out = tmp_path / "samples.parquet"
    result = CliRunner().invoke(main, ["leaderboard", str(original_logs), "--parquet", str(out)])
    assert result.exit_code == 0, result.output
    frame = pl.read_parquet(out)
    per_model = len(QUESTIONS) + len(DESIGNS) + len(APPS)
    assert frame.height == len(SCRIPT) * per_model
    assert not frame["superseded"].any()
    # the leaderboard's category values are the means of the rows' values
    means = frame.group_by("model", "category").agg(pl.col("value").mean())
    good = {row["category"]: row["value"] for row in means.filter(model="mockllm/good").to_dicts()}
    assert good == pytest.approx(
        {"practice_exam": 5 / 6, "architecture_design": 0.8, "cdk_synth": 0.75}
    )
    assert set(frame.filter(category="cdk_synth")["scorer"]) == {"cdk_verify", "cdk_verify_local"}

    from inspect_ai.analysis import samples_df

    theirs = pl.from_pandas(samples_df(str(original_logs), quiet=True)[["eval_id", "log", "id",
                            "epoch", "error"]].astype(str))  # fmt: skip
    shared = ["eval_id", "log", "id", "epoch", "error"]
    ours = frame.select(shared).with_columns(pl.all().cast(pl.String))
    assert sorted(ours.rows()) == sorted(theirs.select(shared).rows())


def test_leaderboard_parquet_marks_superseded_reruns(original_logs: Path, tmp_path: Path) -> None:
    from tests.support.original_sa_bench import run_original

    rerun = tmp_path / "rerun"
    import time

    time.sleep(1.1)  # Inspect stamps `created` to the second
    run_original(rerun, "weak", ["architecture_design"])
    out = tmp_path / "samples.parquet"
    args = ["leaderboard", str(original_logs), str(rerun), "--parquet", str(out)]
    assert CliRunner().invoke(main, args).exit_code == 0
    frame = pl.read_parquet(out)
    superseded = frame.filter(pl.col("superseded"))
    assert superseded.height == len(DESIGNS)
    assert set(superseded["model"]) == {"mockllm/weak"}
    assert not any(str(rerun) in log for log in superseded["log"])


def test_compare_parquet_has_one_row_per_run(tmp_path: Path) -> None:
    records = EXAMPLES / "agent_runs.jsonl"
    out = tmp_path / "runs.parquet"
    arms = ["--treatment", "with_skelly", "--control", "without_skelly"]
    result = CliRunner().invoke(main, ["compare", str(records), *arms, "--parquet", str(out)])
    assert result.exit_code in (0, 1), result.output
    frame = pl.read_parquet(out)
    lines = [line for line in records.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert frame.height == len(lines)
    assert (frame["id"] == frame["task_id"]).all()
    assert (frame["epoch"] == frame["repeat"] + 1).all()
    assert (frame["total_time"] == frame["duration_seconds"]).all()


@pytest.mark.slow
def test_reliability_parquet_has_one_row_per_trial(tmp_path: Path) -> None:
    trials = EXAMPLES / "trials.jsonl"
    out = tmp_path / "trials.parquet"
    result = CliRunner().invoke(
        main, ["reliability", str(trials), "--parquet", str(out), "--resamples", "100"]
    )
    assert result.exit_code == 0, result.output
    frame = pl.read_parquet(out)
    lines = [line for line in trials.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert frame.height == len(lines)
    assert (frame["id"] == frame["prompt_id"]).all() and frame["epoch"].min() == 1
    assert (frame.filter(pl.col("error_message").is_null())["error"] == "").all()


def test_parquet_log_and_task_name_are_samples_dfs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Given relative paths (a directory and a file), `log` is absolute and `task_name` has no
    registry namespace, as in samples_df: the two frames join on either column."""
    from inspect_ai.analysis import EvalInfo, EvalTask, SampleSummary, samples_df
    from tests.support.inspect_fixture_logs import LOGS, SUITE

    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE, encoding="utf-8")
    monkeypatch.chdir(LOGS)
    inputs = ["analysis/test_logs_choices", "log/test_eval_log/log_message_deduplication.eval"]
    out = tmp_path / "samples.parquet"
    result = CliRunner().invoke(
        main, ["leaderboard", *inputs, "--suite", str(suite), "--parquet", str(out)]
    )
    assert result.exit_code in (0, 1), result.output
    ours = pl.read_parquet(out).select("eval_id", "id", "epoch", "log", "task_name")
    assert set(ours["task_name"]) == {"mmlu_0_shot", "guess_number"}
    columns = SampleSummary + EvalInfo + EvalTask
    theirs = pl.from_pandas(
        samples_df(inputs, columns=columns, quiet=True)[
            ["eval_id", "id", "epoch", "log", "task_name"]
        ].astype(str)
    )
    assert sorted(ours.with_columns(pl.all().cast(pl.String)).rows()) == sorted(theirs.rows())
