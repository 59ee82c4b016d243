"""One convention across every command (README, "Command line"): help on every option, a fast
`--help` that imports nothing heavy, `--json [PATH]`, exit codes, `-q`/`-v`, renamed options."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from plumbline.cli import output
from plumbline.cli.main import COMMANDS, SHORT_HELP, main

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
#: Modules `plumbline --help` and `plumbline CMD --help` must not import (issue 17, fast start).
HEAVY = (
    "scipy",
    "numpy",
    "pandas",
    "polars",
    "pyarrow",
    "inspect_ai",
    "torch",
    "transformers",
    "sentence_transformers",
    "ray",
    "jinja2",
    "pydantic",
    "httpx",
    "openai",
    "rich.console",
    "asyncio",
)


def command_paths() -> list[tuple[str, ...]]:
    """Every command and every subcommand of a group, as argument lists."""
    ctx = click.Context(main)
    paths: list[tuple[str, ...]] = []
    for name in sorted(COMMANDS):
        command = main.get_command(ctx, name)
        paths.append((name,))
        if isinstance(command, click.Group):
            paths.extend((name, sub) for sub in sorted(command.commands))
    return paths


def resolve(path: tuple[str, ...]) -> click.Command:
    command: click.Command | None = main
    ctx = click.Context(main)
    for name in path:
        assert isinstance(command, click.Group), path
        command = command.get_command(ctx, name)
    assert command is not None, path
    return command


def test_every_option_of_every_command_has_help() -> None:
    missing = [
        f"{' '.join(path) or 'plumbline'} {param.opts[0]}"
        for path in [(), *command_paths()]
        for param in resolve(path).params
        if isinstance(param, click.Option) and not param.hidden and not (param.help or "").strip()
    ]
    assert missing == []


def test_help_imports_nothing_heavy() -> None:
    """`plumbline --help` and every `plumbline CMD [SUB] --help`, in a fresh interpreter: none of
    the heavy modules is imported (the first command that imports one is named)."""
    script = textwrap.dedent(
        f"""
        import sys
        from plumbline.cli.main import main
        heavy = {HEAVY!r}
        for path in {[(), *command_paths()]!r}:
            try:
                main.main([*path, "--help"], prog_name="plumbline", standalone_mode=False)
            except SystemExit:
                pass
            loaded = [name for name in heavy if name in sys.modules]
            if loaded:
                print("plumbline", *path, "--help imports", *loaded, file=sys.stderr)
                sys.exit(1)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_the_short_help_table_says_what_each_command_says() -> None:
    assert set(SHORT_HELP) == set(COMMANDS)
    for name in COMMANDS:
        listed = click.Command(name, help=SHORT_HELP[name]).get_short_help_str(1000)
        assert listed == resolve((name,)).get_short_help_str(1000), name
    shown = CliRunner().invoke(main, ["--help"])
    assert shown.exit_code == 0
    assert re.search(r"^  interval +Estimate a success rate", shown.output, re.MULTILINE)


def test_agent_profile_names_are_the_harness_profiles() -> None:
    from plumbline.agent.profiles import PROFILES
    from plumbline.cli.agent import PROFILE_NAMES

    assert sorted(PROFILE_NAMES) == sorted(PROFILES)


def _readme_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("\n## Command line\n")
    return text[start : text.index("\n## ", start + 1)]


def _table_rows(section: str, header: str) -> list[list[str]]:
    lines = section[section.index(header) :].splitlines()
    rows = []
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_the_readme_cli_table_matches_help() -> None:
    """Every option the README's command table lists is an option of that command, and every
    command and subcommand has a row."""
    rows = _table_rows(_readme_section(), "| command | main options |")
    assert len(rows) >= len(COMMANDS)
    listed: set[tuple[str, ...]] = set()
    for command_cell, options_cell, _ in rows:
        path = tuple(command_cell.strip("`").split()[1:])
        command = resolve(path)
        if isinstance(command, click.Group):  # `plumbline leaderboard LOGS` is its build
            default = {"leaderboard": "build", "history": "show"}[path[-1]]
            command = resolve((*path, default))
            path = (*path, default)
        listed.add(path)
        known = {opt for p in command.params for opt in (*p.opts, *p.secondary_opts)}
        for option in re.findall(r"`([^`]+)`", options_cell):
            for spelling in option.split("/"):
                assert spelling in known, f"{' '.join(path)}: README lists {spelling}"
    leaves = {
        path
        for path in command_paths()
        if not isinstance(resolve(path), click.Group)
        or not any(other[: len(path)] == path and other != path for other in command_paths())
    }
    assert leaves - listed == set(), "commands without a row in the README's CLI table"


def test_the_readme_exit_code_table_matches_the_constants() -> None:
    rows = _table_rows(_readme_section(), "| status | constant | meaning |")
    documented = {cell[1].strip("`"): int(cell[0]) for cell in rows}
    constants = {name: getattr(output, name) for name in dir(output) if name.startswith("EXIT_")}
    assert documented == constants


def test_json_path_that_is_an_input_is_refused(tmp_path: Path) -> None:
    records = tmp_path / "runs.jsonl"
    records.write_text("{}\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["records", "validate", str(records), "--json", str(records)])
    assert result.exit_code == output.EXIT_USAGE
    assert "both an input and an output (--json PATH)" in result.output
    assert records.read_text(encoding="utf-8") == "{}\n"


def test_json_goes_to_stdout_alone_or_to_a_path_beside_the_terminal_view(tmp_path: Path) -> None:
    args = ["interval", "-k", "42", "-n", "50"]
    printed = CliRunner().invoke(main, [*args, "--json"])
    assert printed.exit_code == output.EXIT_OK
    assert json.loads(printed.stdout)["n"] == 50
    path = tmp_path / "interval.json"
    written = CliRunner().invoke(main, [*args, "--json", str(path)])
    assert written.exit_code == output.EXIT_OK
    assert written.stdout.strip() == "0.840 [0.715, 0.917] Wilson 95%, n=50"
    assert json.loads(path.read_text(encoding="utf-8")) == json.loads(printed.stdout)


def test_quiet_and_verbose_set_what_reaches_stderr(tmp_path: Path) -> None:
    path = tmp_path / "interval.json"
    args = ["interval", "-k", "1", "-n", "2", "--json", str(path)]
    verbose = CliRunner().invoke(main, ["-v", *args])
    assert verbose.exit_code == 0
    assert f"plumbline: debug: wrote JSON to {path}" in verbose.stderr
    normal = CliRunner().invoke(main, args)
    assert normal.exit_code == 0 and normal.stderr == ""
    both = CliRunner().invoke(main, ["-q", "-v", *args])
    assert both.exit_code == output.EXIT_USAGE
    assert "not both" in both.stderr


def test_renamed_options_still_work_with_a_deprecation_message(tmp_path: Path) -> None:
    """`judge calibrate --max-concurrency N --output PATH` (the old spellings) mean
    `--concurrency N --json PATH`, and say so on stderr; the new spellings say nothing."""
    report = tmp_path / "judge.json"
    base = ["judge", "calibrate", "--judge", "mockllm/model", "--limit", "1", "--runs", "1"]
    old = CliRunner().invoke(main, [*base, "--max-concurrency", "1", "--output", str(report)])
    # mockllm's reply is no verdict: unscored, so the calibration fails (exit 1), as it should
    assert old.exit_code == output.EXIT_FAILED, old.output
    assert json.loads(report.read_text(encoding="utf-8"))["judges"]
    for spelling, new in (("--max-concurrency", "--concurrency"), ("--output", "--json PATH")):
        assert f"plumbline: warning: {spelling} is deprecated" in old.stderr
        assert f"use {new}" in old.stderr
    report.unlink()
    new = CliRunner().invoke(main, [*base, "--concurrency", "1", "--json", str(report)])
    assert new.exit_code == output.EXIT_FAILED
    assert "deprecated" not in new.stderr and report.exists()


@pytest.mark.parametrize(
    ("path", "old", "new"),
    [(("run",), "--max-connections", "--concurrency")],
)
def test_old_spellings_are_hidden_options(path: tuple[str, ...], old: str, new: str) -> None:
    command = resolve(path)
    hidden = [p for p in command.params if old in p.opts]
    assert len(hidden) == 1 and isinstance(hidden[0], click.Option) and hidden[0].hidden
    assert any(new in p.opts for p in command.params)
    shown = CliRunner().invoke(main, [*path, "--help"])
    assert new in shown.output and old not in shown.output


def test_warnings_reach_stderr_when_quiet_with_control_characters_shown(tmp_path: Path) -> None:
    """A warning goes through the `plumbline` logger: shown under `-q`, never on stdout (which
    holds the JSON), and a control character in a path is shown, not sent to the terminal."""
    logs = tmp_path / "logs\x1b[31m"
    logs.mkdir()
    result = CliRunner().invoke(main, ["-q", "leaderboard", str(logs), "--json"])
    assert result.exit_code == output.EXIT_FAILED, result.output  # nothing ranked
    assert json.loads(result.stdout)["models"] == []
    assert "plumbline: warning: no scorable logs found in" in result.stderr
    assert "logs\\x1b[31m" in result.stderr and "\x1b" not in result.stderr
