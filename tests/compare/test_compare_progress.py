"""Visible work: compare reports each long step, and the command line shows a progress bar on a
terminal's stderr, never on stdout and never when stderr is not a terminal."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console
from tests.compare.conftest import Run

from plumbline.cli import output
from plumbline.cli.main import main
from plumbline.compare.analysis import compare_runs
from plumbline.compare.result import CompareSettings
from plumbline.records.run_record import read_run_records

ARMS = ["-t", "with_skelly", "-c", "without_skelly"]


@pytest.mark.parametrize(("rule", "steps"), [("schema", 6), ("ci", 8)])
def test_compare_reports_every_interval_and_the_tests(
    example_path: Path, rule: str, steps: int
) -> None:
    calls: list[tuple[int, int, str]] = []
    compare_runs(
        read_run_records([example_path]),
        treatments=["with_skelly"],
        control="without_skelly",
        settings=CompareSettings(rule="ci" if rule == "ci" else "schema", n_resamples=200),
        progress=lambda *call: calls.append(call),
    )
    assert [done for done, _, _ in calls] == list(range(1, steps + 1))
    assert {total for _, total, _ in calls} == {steps}
    assert calls[0][2] == "with_skelly vs without_skelly: pass_delta interval"
    assert calls[-1][2] == "with_skelly vs without_skelly: paired tests"


def test_the_bar_is_drawn_on_a_terminal_stderr_only(
    example_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = io.StringIO()
    monkeypatch.setattr(
        output, "error_console", Console(file=terminal, force_terminal=True, width=120)
    )
    result = CliRunner().invoke(
        main, ["compare", str(example_path), *ARMS, "--resamples", "200", "--json"]
    )
    assert result.exit_code == 0
    json.loads(result.stdout)  # stdout holds the JSON document alone
    drawn = terminal.getvalue()
    assert "comparing" in drawn and "6/6" in drawn

    not_a_terminal = io.StringIO()
    monkeypatch.setattr(output, "error_console", Console(file=not_a_terminal, width=120))
    result = CliRunner().invoke(
        main, ["compare", str(example_path), *ARMS, "--resamples", "200", "--json"]
    )
    assert result.exit_code == 0
    assert not_a_terminal.getvalue() == ""


def test_step_names_are_shown_as_plain_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: Run
) -> None:
    records = [
        run(f"t{t}", arm, r, success=(t + r) % 2 == 0)
        for t in range(3)
        for r in range(1, 4)
        for arm in ("[/bold]a", "[red]b")
    ]
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    terminal = io.StringIO()
    monkeypatch.setattr(
        output, "error_console", Console(file=terminal, force_terminal=True, width=200)
    )
    result = CliRunner().invoke(
        main,
        ["compare", str(path), "-t", "[/bold]a", "-c", "[red]b", "--resamples", "200", "--json"],
    )
    assert result.exit_code == 0, result.output
    assert "[/bold]a vs [red]b" in terminal.getvalue()
