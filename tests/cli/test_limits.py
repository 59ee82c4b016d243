"""Bounded work: every option that multiplies work has an upper bound, and crossing it is a
usage error (exit 2) that names the bound, before any work starts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.agent.helpers import EXAMPLE, example_data, write_suite

from plumbline.cli.main import main
from plumbline.core.limits import (
    MAX_AGENT_RUNS,
    MAX_CONCURRENCY,
    MAX_EPOCHS,
    MAX_REPEATS,
    MAX_RESAMPLES,
    MAX_TRIALS,
)

ROOT = Path(__file__).parents[2]
RUNS = ROOT / "src/plumbline/examples/agent_runs.jsonl"
TRIALS = ROOT / "src/plumbline/examples/trials.jsonl"


@pytest.fixture
def make_suite(tmp_path: Path) -> Callable[..., Path]:
    return lambda changes: write_suite(tmp_path / "suite", changes)


@pytest.mark.parametrize(
    ("args", "option", "bound"),
    [
        (
            ["compare", str(RUNS), "--resamples", str(MAX_RESAMPLES + 1)],
            "--resamples",
            MAX_RESAMPLES,
        ),
        (
            ["reliability", str(TRIALS), "--resamples", str(MAX_RESAMPLES + 1)],
            "--resamples",
            MAX_RESAMPLES,
        ),
        (
            ["agent", "plan", str(EXAMPLE / "suite.toml"), "--repeats", "1000000"],
            "--repeats",
            MAX_REPEATS,
        ),
        (
            ["agent", "run", str(EXAMPLE / "suite.toml"), "-o", "out", "--concurrency", "100000"],
            "--concurrency",
            MAX_CONCURRENCY,
        ),
        (
            [
                "probe",
                "--model",
                "mockllm/model",
                "--prompt",
                "hi",
                "-o",
                "t.jsonl",
                "--trials",
                str(MAX_TRIALS + 1),
            ],
            "--trials",
            MAX_TRIALS,
        ),
        (
            [
                "probe",
                "--model",
                "mockllm/model",
                "--prompt",
                "hi",
                "-o",
                "t.jsonl",
                "--concurrency",
                str(MAX_CONCURRENCY + 1),
            ],
            "--concurrency",
            MAX_CONCURRENCY,
        ),
        (
            ["run", "--model", "mockllm/model", "--epochs", str(MAX_EPOCHS + 1)],
            "--epochs",
            MAX_EPOCHS,
        ),
    ],
)
def test_an_option_past_its_bound_is_a_usage_error(
    args: list[str], option: str, bound: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{option}'" in result.output
    assert f"<={bound}" in result.output
    assert not (tmp_path / "out").exists() and not (tmp_path / "t.jsonl").exists()


def test_a_suite_with_too_many_repeats_is_a_suite_error(make_suite: Callable[..., Path]) -> None:
    path = make_suite({"repeats": MAX_REPEATS + 1})
    result = CliRunner().invoke(main, ["agent", "plan", str(path)])
    assert result.exit_code == 2
    assert f"{path}: repeats: Input should be less than or equal to {MAX_REPEATS}" in result.output


def test_a_plan_past_the_run_bound_is_refused_with_the_product(
    make_suite: Callable[..., Path],
) -> None:
    task = example_data()["tasks"][0]
    tasks = [{**task, "id": f"task-{i}"} for i in range(MAX_AGENT_RUNS // (2 * MAX_REPEATS) + 1)]
    path = make_suite({"tasks": tasks, "repeats": MAX_REPEATS})
    result = CliRunner().invoke(main, ["agent", "plan", str(path)])
    assert result.exit_code == 2
    runs = len(tasks) * 2 * MAX_REPEATS
    assert f"{len(tasks)} tasks × 2 arms × {MAX_REPEATS} repeats = {runs:,} runs" in result.output
    assert f"more than the {MAX_AGENT_RUNS:,}" in result.output


def test_the_terminal_plan_shows_the_start_of_a_long_schedule(
    make_suite: Callable[..., Path],
) -> None:
    path = make_suite({"repeats": 150})  # 2 tasks × 2 arms × 150 = 600 runs
    terminal = CliRunner().invoke(main, ["agent", "plan", str(path)])
    assert terminal.exit_code == 0, terminal.output
    assert "... and 400 more runs (the first 200 are shown; --json prints the whole" in (
        terminal.output.replace("\n", " ")
    )
    printed = CliRunner().invoke(main, ["agent", "plan", str(path), "--json"])
    assert printed.exit_code == 0
    assert printed.output.count('"position"') == 600
