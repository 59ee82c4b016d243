"""The output convention shared by every command: a rich rendering, or JSON with --json."""

from __future__ import annotations

import contextlib
import json
import math
import sys
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import click
from pydantic import BaseModel
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from plumbline.progress import ProgressCallback

F = TypeVar("F", bound=Callable[..., Any])

console = Console(highlight=False, emoji=False)
error_console = Console(stderr=True, highlight=False, emoji=False)


class FiniteFloatRange(click.FloatRange):
    """A float option that must be a finite number (click's FloatRange lets NaN through)."""

    name = "float range"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


#: A random seed: a non-negative integer (numpy's generators refuse negative ones).
SEED = click.IntRange(min=0, max=2**63 - 1)
#: Any finite number (NaN and infinities refused).
FINITE = FiniteFloatRange()


def json_option(function: F) -> F:
    """Add the standard `--json` flag (print the result as JSON on stdout)."""
    return click.option(
        "--json", "as_json", is_flag=True, help="Print the result as JSON instead of a table."
    )(function)


def parse_model_args(values: tuple[str, ...]) -> dict[str, Any]:
    """`-M KEY=VALUE` options as model arguments, each VALUE read as JSON where it parses.

    `-M do_sample=false` is the boolean False and `-M threads=2` the integer 2, as in Inspect's
    own `-M`; a VALUE that is not JSON (`-M device=cpu`) stays a string. Every command that
    takes `-M` (run, probe, judge) reads it here, so the same flag means the same everywhere.
    """
    parsed: dict[str, Any] = {}
    for value in values:
        key, sep, raw = value.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {value!r}", param_hint="-M")
        try:
            parsed[key] = json.loads(raw)
        except ValueError:
            parsed[key] = raw
    return parsed


def model_args_option(applies_to: str) -> Callable[[F], F]:
    """`-M/--model-arg KEY=VALUE` (repeatable), parsed by `parse_model_args` in every command."""
    return click.option(
        "-M",
        "--model-arg",
        "model_args",
        multiple=True,
        metavar="KEY=VALUE",
        help=f"Model argument for {applies_to} (Inspect model_args); VALUE is read as JSON where "
        "it parses (`-M do_sample=false` is the boolean false).",
    )


def to_jsonable(value: Any) -> Any:
    """Turn results (pydantic models, dataclasses with `to_dict`, numpy scalars) into JSON values.

    Non-finite floats become null: JSON has no NaN, and a missing value must not read as a number.
    """
    if isinstance(value, BaseModel):
        return to_jsonable(value.model_dump(mode="python"))
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return to_jsonable(value.to_dict())
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalar
        return to_jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def dumps(value: Any) -> str:
    """Serialise a result as indented JSON (strict: no NaN or Infinity)."""
    return json.dumps(to_jsonable(value), indent=2, ensure_ascii=False, allow_nan=False)


@contextlib.contextmanager
def stdout_for_json_only(as_json: bool) -> Iterator[None]:
    """With `--json`, send whatever libraries print meanwhile to stderr.

    Inspect logs through rich's global console, which writes to stdout; with --json, stdout
    holds the one JSON document `emit` prints afterwards.
    """
    with contextlib.redirect_stdout(sys.stderr) if as_json else contextlib.nullcontext():
        yield


def emit(result: Any, as_json: bool, render: Callable[[Console], None]) -> None:
    """Print `result` as JSON when `as_json`, otherwise call `render` with the console."""
    if as_json:
        click.echo(dumps(result))
    else:
        render(console)


@contextlib.contextmanager
def progress_bar(label: str) -> Iterator[ProgressCallback]:
    """A progress bar on stderr for a job that can take more than a few seconds.

    It is shown only when stderr is a terminal (never in logs, pipes or CI) and is cleared when
    the job ends, so stdout (a `--json` document) is never mixed with it. Step names are shown as
    plain text: they can hold arm, model or file names.
    """
    with Progress(
        TextColumn(label, markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}", markup=False),
        console=error_console,
        transient=True,
        disable=not error_console.is_terminal,
    ) as progress:
        task = progress.add_task("", total=None)

        def advance(done: int, total: int, what: str) -> None:
            progress.update(task, completed=done, total=total, description=what)

        yield advance
