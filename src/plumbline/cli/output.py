"""The convention every command shares (README, "Command line").

- `--json [PATH]`: the command's result as JSON, on stdout when no PATH is given (then stdout
  holds nothing else), else written atomically to PATH beside the terminal view;
- exit codes (`EXIT_*`), one `InputError`, one random-seed default, one concurrency option;
- `-q/--quiet` and `-v/--verbose` (on `plumbline` itself) set the level of the `plumbline`
  logger, which every command's diagnostics go through (`logging.getLogger(__name__)`);
- old option spellings keep working for one release, with a deprecation message (`renamed`).

This module is imported by every command's `--help`: it imports click and nothing heavy; rich's
console, pydantic and rich's progress bars load when a command first uses them.
"""

from __future__ import annotations

import contextlib
import functools
import math
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from plumbline.cli.output_paths import (  # the output layer's types, imported from here
    Command as Command,
)
from plumbline.cli.output_paths import (
    DirectoryInputs as DirectoryInputs,
)
from plumbline.cli.output_paths import (
    Group as Group,
)
from plumbline.cli.output_paths import (
    InputFile as InputFile,
)
from plumbline.cli.output_paths import (
    OutputDirectory as OutputDirectory,
)
from plumbline.cli.output_paths import (
    OutputFile as OutputFile,
)
from plumbline.cli.output_paths import (
    OutputJournal as OutputJournal,
)
from plumbline.cli.output_paths import (
    OutputSite as OutputSite,
)
from plumbline.cli.output_paths import (
    OutputType as OutputType,
)
from plumbline.cli.output_paths import (
    check_outputs as check_outputs,
)
from plumbline.cli.output_paths import (
    log_inputs as log_inputs,
)
from plumbline.cli.output_paths import (
    output_params as output_params,
)

if TYPE_CHECKING:
    import logging

    from rich.console import Console

    from plumbline.core.progress import ProgressCallback

F = TypeVar("F", bound=Callable[..., Any])

#: Exit statuses, the same in every command (README, "Exit codes").
EXIT_OK = 0
#: A gate failed, a result is negative (not reproducible, not preferred), or records are invalid.
EXIT_FAILED = 1
#: A usage or input error: a bad option, a file that cannot be used (nothing was computed).
EXIT_USAGE = 2
#: An infrastructure error: a sandbox, cluster, provider or file system failed (nothing judged).
EXIT_INFRA = 3
#: Interrupted (Ctrl-C or SIGTERM); what finished is kept and the same command resumes.
EXIT_INTERRUPTED = 130

#: The default random seed of every command that takes `--seed`.
DEFAULT_SEED = 42

#: The logger every command's diagnostics go through (`-q` and `-v` set its level). The
#: `logging` module itself is imported when a command runs, not for `--help`.
LOGGER = "plumbline"


class InputError(click.ClickException):
    """Bad input data or a suite that cannot be used (exit code 2, like a usage error)."""

    exit_code = EXIT_USAGE


class InfraError(click.ClickException):
    """Something the command needs is not available: a package, a model, a service (exit 3)."""

    exit_code = EXIT_INFRA


class _LazyConsole:
    """A rich Console made on first use, so that importing a command (for `--help`) does not
    import rich's console machinery."""

    def __init__(self, **options: Any) -> None:
        object.__setattr__(self, "_options", options)
        object.__setattr__(self, "_console", None)

    def _get(self) -> Console:
        made = object.__getattribute__(self, "_console")
        if made is None:
            # tables narrower than they need are drawn as lists, never cut (issue 38)
            from plumbline.views.terminal import TerminalConsole

            made = TerminalConsole(**object.__getattribute__(self, "_options"))
            object.__setattr__(self, "_console", made)
        return cast("Console", made)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._get(), name)

    def reset(self) -> None:
        """Forget the console made, so the next use measures the terminal (`COLUMNS`) again:
        rich reads the width once, and a process that runs several commands (a test, a
        notebook) may run them at different widths."""
        object.__setattr__(self, "_console", None)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._get(), name, value)

    def __enter__(self) -> Console:
        return self._get().__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._get().__exit__(*exc)


console = cast("Console", _LazyConsole(highlight=False, emoji=False))
error_console = cast("Console", _LazyConsole(stderr=True, highlight=False, emoji=False))


class FiniteFloatRange(click.FloatRange):
    """A float option that must be a finite number (click's FloatRange lets NaN through)."""

    name = "float range"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number

    def _describe_range(self) -> str:
        """The range shown in `--help`: nothing for an unbounded one (not `x<=None`)."""
        if self.min is None and self.max is None:
            return ""
        return super()._describe_range()


#: A random seed: a non-negative integer (numpy's generators refuse negative ones).
SEED = click.IntRange(min=0, max=2**63 - 1)
#: Any finite number (NaN and infinities refused).
FINITE = FiniteFloatRange()


def seed_option(help: str) -> Callable[[F], F]:
    """`--seed N` with the one default (`DEFAULT_SEED`) every command shares."""
    return click.option("--seed", type=SEED, default=DEFAULT_SEED, show_default=True, help=help)


def choice_option(*names: str, choices: Sequence[str], default: str, help: str) -> Callable[[F], F]:
    """An option taking one of `choices`, its `default` shown in --help."""
    return click.option(
        *names, type=click.Choice(list(choices)), default=default, show_default=True, help=help
    )


def concurrency_option(
    help: str, *, default: int | None, maximum: int, old: tuple[str, ...] = ()
) -> Callable[[F], F]:
    """`--concurrency N`, the one name for "how many at once"; `old` spellings still work for
    one release (hidden, with a deprecation message)."""

    def decorate(function: F) -> F:
        kind = click.IntRange(min=1, max=maximum)
        for name in old:
            function = renamed(name, "--concurrency", "concurrency", type=kind)(function)
        return click.option(
            "--concurrency",
            type=kind,
            default=default,
            show_default=default is not None,
            help=help,
        )(function)

    return decorate


def max_tokens_option(
    help: str, *, default: int | None = None, minimum: int = 1
) -> Callable[[F], F]:
    """`--max-tokens N`: the most tokens a model may generate per call (None: the provider's)."""
    return click.option(
        "--max-tokens",
        type=click.IntRange(min=minimum),
        default=default,
        show_default=default is not None,
        help=help,
    )


def limit_option(help: str) -> Callable[[F], F]:
    """`--limit N`: only a seeded subset of N of the items (samples, calibration items)."""
    return click.option("--limit", type=click.IntRange(min=1), help=help)


#: `--strict`, for the commands that read run records: stop at the first invalid one (without
#: it, invalid records are listed and left out).
strict_records_option = click.option(
    "--strict", is_flag=True, help="Fail on the first invalid record."
)

#: `--suite NAME|PATH` (default sa-bench), for the commands that read a suite's questions.
suite_option = click.option(
    "--suite",
    default="sa-bench",
    show_default=True,
    help="A built-in suite name or the path of a suite TOML file.",
)


def output_option(**attrs: Any) -> Callable[[F], F]:
    """`-o/--output`: what the command writes (`attrs` give its type, a file, a directory or
    a journal, and its help)."""
    return click.option("-o", "--output", **attrs)


def markdown_option(help: str) -> Callable[[F], F]:
    """`--markdown PATH`: the result as Markdown too, given to the command as `markdown_path`."""
    return click.option("--markdown", "markdown_path", type=OutputFile(path_type=Path), help=help)


def parquet_option(help: str) -> Callable[[F], F]:
    """`--parquet PATH`: the rows behind the result as Parquet, given as `parquet_path`."""
    return click.option("--parquet", "parquet_path", type=OutputFile(path_type=Path), help=help)


def warn(message: str, *args: object) -> None:
    """A warning on stderr through the `plumbline` logger (shown with `-q` too): something the
    user should act on that does not stop the command."""
    import logging

    logging.getLogger(LOGGER).warning(message, *args)


def deprecation(old: str, new: str) -> None:
    """Say on stderr that `old` is deprecated in favour of `new` (a warning, never silenced)."""
    warn("%s is deprecated and will be removed in the next release: use %s", old, new)


def renamed(old: str, new: str, dest: str, **option: Any) -> Callable[[F], F]:
    """A hidden option `old` that still works for one release and means the option `new`
    (parameter `dest`): given on the command line (and `new` not), its value is used, with a
    deprecation message on stderr."""
    key = f"plumbline.renamed.{dest}"

    def remember(ctx: click.Context, param: click.Parameter, value: Any) -> None:
        source = ctx.get_parameter_source(param.name or "")
        if value is None or value == () or source is not click.core.ParameterSource.COMMANDLINE:
            return
        deprecation(old, new)
        ctx.meta[key] = value

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            ctx = click.get_current_context()
            given = ctx.get_parameter_source(dest) is click.core.ParameterSource.COMMANDLINE
            if key in ctx.meta and not given:
                kwargs[dest] = ctx.meta[key]
            return function(*args, **kwargs)

        return cast(
            F,
            click.option(
                old,
                f"renamed_{dest}",
                hidden=True,
                expose_value=False,
                callback=remember,
                help=f"Deprecated spelling of {new}.",
                **option,
            )(wrapper),
        )

    return decorate


# --- The output layer ------------------------------------------------------------------------
#
def write_output(path: str | Path, data: str | bytes, what: str = "output") -> None:
    """Write one output file of a command (see `records.io.write_atomic`: atomic for a regular
    file, through a link to its target, streamed into a FIFO or a character device)."""
    import logging

    from plumbline.records.io import write_atomic

    write_atomic(path, data)
    logging.getLogger(__name__).debug("wrote %s to %s", what, path)


def json_option(function: F) -> F:
    """`--json [PATH]`: the result as JSON, on stdout without PATH, else written to PATH.

    The command receives `json_path`: None (no --json), "-" (stdout) or the path. A PATH that
    is also one of the command's inputs is refused (it would overwrite the input: `Command`).
    """
    return click.option(
        "--json",
        "json_path",
        is_flag=False,
        flag_value="-",
        default=None,
        type=OutputFile(allow_dash=True),
        metavar="[PATH]",
        help="Write the result as JSON to PATH, or print it on stdout (and nothing else "
        "there) when no PATH is given.",
    )(function)


def wants_json(json_path: str | None) -> bool:
    """Is stdout reserved for the JSON document (`--json` with no PATH)?"""
    return json_path == "-"


def parse_model_args(values: tuple[str, ...]) -> dict[str, Any]:
    """`-M KEY=VALUE` options as model arguments, each VALUE read as JSON where it parses.

    `-M do_sample=false` is the boolean False and `-M threads=2` the integer 2, as in Inspect's
    own `-M`; a VALUE that is not JSON (`-M device=cpu`) stays a string. Every command that
    takes `-M` (run, probe, judge) reads it here, so the same flag means the same everywhere.
    """
    import json

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
    if hasattr(value, "model_dump") and callable(value.model_dump):  # a pydantic model
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
    import json

    return json.dumps(to_jsonable(value), indent=2, ensure_ascii=False, allow_nan=False)


@contextlib.contextmanager
def stdout_for_json_only(json_path: str | bool | None) -> Iterator[None]:
    """With `--json` and no PATH, send whatever libraries print meanwhile to stderr.

    Inspect logs through rich's global console, which writes to stdout; then stdout holds the
    one JSON document `emit` prints afterwards. (`True` is accepted for "stdout is JSON".)
    """
    to_stdout = json_path is True or json_path == "-"
    with contextlib.redirect_stdout(sys.stderr) if to_stdout else contextlib.nullcontext():
        yield


def write_json(result: Any, path: str) -> None:
    """Write a result as JSON to `path`, atomically."""
    write_output(path, dumps(result) + "\n", "JSON")


def emit(result: Any, json_path: str | bool | None, render: Callable[[Console], None]) -> None:
    """Show a command's result by the `--json [PATH]` convention.

    No --json: `render` draws it on the terminal. `--json`: the JSON document is printed on
    stdout, and nothing else. `--json PATH`: the JSON is written to PATH and `render` draws
    the terminal view as without --json. (`True` is accepted for "stdout".)
    """
    if json_path is True or json_path == "-":
        click.echo(dumps(result))
        return
    if isinstance(json_path, str):
        write_json(result, json_path)
    render(console)


def quiet() -> bool:
    """Did the user ask for quiet (`-q`): no progress bars or progress lines on stderr?"""
    import logging

    return not logging.getLogger(LOGGER).isEnabledFor(logging.INFO)


@contextlib.contextmanager
def progress_bar(label: str) -> Iterator[ProgressCallback]:
    """A progress bar on stderr for a job that can take more than a few seconds.

    It is shown only when stderr is a terminal (never in logs, pipes or CI) and not with `-q`,
    and is cleared when the job ends, so stdout (a `--json` document) is never mixed with it.
    Step names are shown as plain text: they can hold arm, model or file names.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn(label, markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}", markup=False),
        console=error_console,
        transient=True,
        disable=quiet() or not error_console.is_terminal,
    ) as progress:
        task = progress.add_task("", total=None)

        def advance(done: int, total: int, what: str) -> None:
            progress.update(task, completed=done, total=total, description=what)

        yield advance


def configure_logging(verbosity: int) -> None:
    """Set up the `plumbline` logger: -1 quiet (warnings and errors only), 0 normal (info),
    1 verbose (debug). Messages go to whatever `sys.stderr` is then (click's test runner
    replaces it), as `plumbline: LEVEL: message` (info messages plain), with control
    characters shown as escapes (messages carry model names and file paths)."""
    import logging

    logger = logging.getLogger(LOGGER)
    logger.setLevel({-1: logging.WARNING, 0: logging.INFO}.get(verbosity, logging.DEBUG))
    if not any(getattr(h, "plumbline_stderr", False) for h in logger.handlers):
        handler = _stderr_handler()
        logger.addHandler(handler)
        logger.propagate = False


def _stderr_handler() -> logging.Handler:
    import logging

    class StderrHandler(logging.Handler):
        plumbline_stderr = True

        def emit(self, record: logging.LogRecord) -> None:
            try:
                sys.stderr.write(self.format(record) + "\n")
                sys.stderr.flush()
            except Exception:
                self.handleError(record)

        def format(self, record: logging.LogRecord) -> str:
            from plumbline.core.escape import visible_controls

            message = visible_controls(record.getMessage())
            if record.levelno == logging.INFO:
                return message
            return f"plumbline: {record.levelname.lower()}: {message}"

    return StderrHandler()
