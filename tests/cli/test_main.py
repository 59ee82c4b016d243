"""The top-level command: version, help, and every registered command importable."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from plumbline import __version__
from plumbline.cli.main import COMMANDS, main
from plumbline.cli.output import dumps, to_jsonable


def test_version() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"plumbline, version {__version__}"


def test_help_lists_every_command() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for name in COMMANDS:
        assert name in result.output


def test_every_registered_command_loads_and_has_help() -> None:
    for name in COMMANDS:
        result = CliRunner().invoke(main, [name, "--help"])
        assert result.exit_code == 0, (name, result.output)
        assert "Usage:" in result.output


def test_json_conversion_turns_non_finite_numbers_into_null() -> None:
    assert to_jsonable({"a": math.nan, "b": [1.5, math.inf]}) == {"a": None, "b": [1.5, None]}
    assert json.loads(dumps({"x": math.nan})) == {"x": None}


@pytest.mark.parametrize("as_json", [True, False])
def test_stdout_for_json_only_sends_library_output_to_stderr(
    as_json: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    from rich.console import Console

    from plumbline.cli.output import stdout_for_json_only

    # A console without a file writes to whatever sys.stdout is, as rich's global console
    # (Inspect's log handler) does; the global one itself may be pinned by earlier tests.
    library_console = Console()
    with stdout_for_json_only(as_json):
        library_console.print("from a library")
        print("plain print")
    captured = capsys.readouterr()
    on_stdout = "from a library" in captured.out and "plain print" in captured.out
    on_stderr = "from a library" in captured.err and "plain print" in captured.err
    assert (on_stderr, on_stdout) == (as_json, not as_json)
