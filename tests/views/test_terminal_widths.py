"""Terminal views never drop a column or cut a word (issue 38, item 4).

Every command whose terminal view can run here without a model or a sandbox is run at 80 and
40 columns (a CI log, `| head`, a narrow pane) and at 400 (where every table fits): each word of
the wide view is in the narrow ones, whole, and no line is wider than the terminal. Tables that
do not fit are drawn as a list, and the view says so. The views of the commands that need a
model or a sandbox (`run`, `probe`, `judge calibrate`, `cdk check`, `agent run`) draw their tables
on the same console (`cli.output.console`, a `views.terminal.TerminalConsole`); the reliability
view, which `probe` prints, is drawn here from a real analysis.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest
from click.testing import CliRunner
from pages_support import example_path, example_trials, reliability_document
from report_scenario import Scenario
from rich.cells import cell_len
from rich.table import Table
from rich.text import Text
from tests.support.small_inputs import write_claude_result

from plumbline.cli import output
from plumbline.cli.main import main
from plumbline.views.terminal import TerminalConsole, layout

WIDTHS = (80, 40)
WIDE = 400
#: Characters that draw tables (rules and borders), never part of a word.
_RULES = re.compile(r"[\s\u2500-\u257f|]+")
_BOX = re.compile(r"[\u2500-\u257f]")

Args = Callable[[Scenario, Path], list[str]]


def _compare_json(scenario: Scenario, tmp: Path) -> str:
    path = tmp / "compare.json"
    if not path.exists():
        result = CliRunner().invoke(main, [*COMPARE, "--json", str(path)])
        assert result.exit_code == 0, result.output
    return str(path)


COMPARE = [
    "compare",
    str(example_path("agent_runs.jsonl")),
    "-t",
    "with_skelly",
    "-c",
    "without_skelly",
    "--resamples",
    "200",
]

COMMANDS: dict[str, Args] = {
    "interval": lambda s, t: ["interval", "--successes", "7", "--trials", "10"],
    "power": lambda s, t: ["power", "--baseline", "0.8", "--effect", "0.05", "--paired"],
    "power --sequential": lambda s, t: [
        "power",
        "--baseline",
        "0.6",
        "--effect",
        "0.2",
        "--sequential",
    ],
    "judge plan": lambda s, t: [
        "judge",
        "plan",
        "--correlation",
        "0.6",
        "--judged",
        "500",
        "--half-width",
        "0.05",
    ],
    "compare": lambda s, t: COMPARE,
    "compare --sequential": lambda s, t: [*COMPARE, "--sequential"],
    "records validate": lambda s, t: ["records", "validate", str(example_path("agent_runs.jsonl"))],
    "records convert": lambda s, t: [
        "records",
        "convert",
        "--from",
        "claude-code",
        str(write_claude_result(t / "claude.json")),
        "--arm",
        "treatment",
        "--task-id",
        "t1",
        "-o",
        str(t / "runs.jsonl"),
    ],
    "agent plan": lambda s, t: [
        "agent",
        "plan",
        str(example_path("agent_suite") / "suite.toml"),
        "--profile",
        "claude-code",
    ],
    "leaderboard build": lambda s, t: [
        "leaderboard",
        "build",
        str(s.logs),
        "-o",
        str(t / "leaderboard.json"),
    ],
    "leaderboard check": lambda s, t: [
        "leaderboard",
        "check",
        str(s.leaderboard),
        "--against",
        str(s.leaderboard),
    ],
    "report": lambda s, t: ["report", _compare_json(s, t), "-o", str(t / "site")],
}


def _words(text: str) -> list[str]:
    return [word for word in _RULES.split(text) if word]


def check_view(wide: str, narrow: str, width: int) -> None:
    """Every word of the wide view is in the narrow one, whole (a word longer than half the
    terminal may be folded across lines, in order, as a long path is); no table is wider than
    the terminal (each table has a rule as wide as itself; prose printed with `soft_wrap` is
    left to the terminal to wrap, and loses nothing)."""
    for line in narrow.splitlines():
        if _BOX.search(line):
            assert cell_len(line.rstrip()) <= width, f"{cell_len(line.rstrip())} > {width}: {line}"
    present = set(_words(narrow)) | {word.rstrip(":") for word in _words(narrow)}
    folded = "".join(_words(narrow))
    missing = [
        word
        for word in _words(wide)
        if word not in present and not (cell_len(word) > width // 2 and word in folded)
    ]
    assert not missing, f"lost at {width} columns: {missing[:10]}\n{narrow}"


def _run(args: list[str], width: int) -> str:
    cast(Any, output.console).reset()  # rich reads COLUMNS once: measure again
    try:
        result = CliRunner().invoke(main, args, env={"COLUMNS": str(width), "NO_COLOR": "1"})
    finally:
        cast(Any, output.console).reset()  # the next test, at its own width
    assert result.exit_code in (0, 1), result.output
    return result.stdout


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_keeps_every_column_at_80_and_40(
    name: str, scenario: Scenario, tmp_path: Path
) -> None:
    args = COMMANDS[name](scenario, tmp_path)
    wide = _run(args, WIDE)
    assert wide.strip(), name
    for width in WIDTHS:
        narrow = _run(args, width)
        check_view(wide, narrow, width)


def test_the_leaderboard_keeps_overall_errors_and_the_pairs_columns(
    scenario: Scenario, tmp_path: Path
) -> None:
    args = COMMANDS["leaderboard build"](scenario, tmp_path)
    document = json.loads(Path(scenario.leaderboard).read_text())
    for width in WIDTHS:
        view = _run(args, width)
        words = {word.rstrip(":") for word in _words(view)}
        assert {"overall", "errors", "Δ", "(Holm)"} <= words, view
        for model in document["models"]:
            assert f"{model['overall']:.3f}" in words, (model["model"], view)
        if width == 40:
            assert "shown as a list" in " ".join(view.split())


def test_the_reliability_view_keeps_every_column() -> None:
    from plumbline.reliability.result import ReliabilityReport

    report = ReliabilityReport.model_validate(reliability_document(example_trials()))
    views = {}
    for width in (WIDE, *WIDTHS):
        console = TerminalConsole(width=width, record=True, color_system=None)
        from plumbline.views.reliability import render_terminal

        render_terminal(report, console)
        views[width] = console.export_text()
    for width in WIDTHS:
        check_view(views[WIDE], views[width], width)


def _table(*headers: str) -> Table:
    table = Table(title="t")
    for header in headers:
        table.add_column(header, overflow="fold")
    return table


def test_a_table_rich_would_fold_keeps_its_words_whole() -> None:
    """rich shrinks the widest columns first, below their longest word (`Architectu|re`);
    the console gives each column at least its longest word and wraps at spaces."""
    table = _table("model", "Architecture Design", "Practice Exam", "overall [95% CI]")
    table.add_row("scripted/oracle", "0.985 [0.87, 1.00] n=5", "1.000 [0.57, 1.00]", "0.995")
    console = TerminalConsole(width=60, record=True, color_system=None)
    assert layout(console, console.options, table).kind == "narrowed"
    console.print(table)
    text = console.export_text()
    assert "Architecture" in _words(text) and "scripted/oracle" in _words(text)
    assert all(cell_len(line) <= 60 for line in text.splitlines())


def test_a_table_too_wide_for_any_wrapping_is_a_list_that_says_so() -> None:
    table = _table(*(f"column{n}" for n in range(8)))
    table.add_row(*(Text(f"value-{n}-of-the-row") for n in range(8)))
    console = TerminalConsole(width=40, record=True, color_system=None)
    plan = layout(console, console.options, table)
    assert plan.kind == "list" and plan.needed > 40
    console.print(table)
    text = console.export_text()
    assert f"this table needs {plan.needed} columns, the terminal has 40" in " ".join(text.split())
    for n in range(8):
        assert f"column{n}: value-{n}-of-the-row" in text
