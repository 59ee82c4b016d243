"""Every float option of every command refuses NaN and infinities (issue 38, item 8): one
option type (`output.FiniteFloatRange`), so `judge plan --correlation nan` is a usage error."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner
from tests.cli.test_cli_convention import command_paths, resolve

from plumbline.cli.main import main
from plumbline.cli.output import EXIT_USAGE, FiniteFloatRange


def float_options() -> list[tuple[tuple[str, ...], str]]:
    """(command path, option) for every option of every command that takes a float."""
    found: list[tuple[tuple[str, ...], str]] = []
    for path in command_paths():
        command = resolve(path)
        for param in command.params:
            is_float = isinstance(param.type, click.types.FloatParamType)
            if isinstance(param, click.Option) and is_float:
                longs = [opt for opt in param.opts if opt.startswith("--")]
                found.append((path, (longs or param.opts)[0]))
    return found


FLOAT_OPTIONS = float_options()


def test_the_float_options_are_found() -> None:
    named = {(" ".join(path), option) for path, option in FLOAT_OPTIONS}
    assert ("judge plan", "--correlation") in named
    assert ("compare", "--effect") in named
    assert len(named) >= 15


@pytest.mark.parametrize(("path", "option"), FLOAT_OPTIONS)
def test_every_float_option_is_the_finite_type(path: tuple[str, ...], option: str) -> None:
    command = resolve(path)
    param = next(p for p in command.params if option in p.opts)
    assert isinstance(param.type, FiniteFloatRange), (path, option, param.type)


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "+Infinity"])
@pytest.mark.parametrize(("path", "option"), FLOAT_OPTIONS)
def test_every_float_option_refuses_non_finite_values(
    path: tuple[str, ...], option: str, value: str
) -> None:
    result = CliRunner().invoke(main, [*path, f"{option}={value}"])
    assert result.exit_code == EXIT_USAGE, (path, option, value, result.output)
    assert "Traceback" not in result.output
    assert option in result.output, result.output
