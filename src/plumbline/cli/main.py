"""The `plumbline` command.

Subcommands are imported lazily: `plumbline --help` lists them from `COMMANDS` without
importing any, `plumbline CMD --help` imports only CMD's module (which imports nothing heavy at
module level), and a job's heavy dependencies (scipy, Inspect AI, torch) load only when it runs.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from plumbline import __version__
from plumbline.cli.output import EXIT_INFRA, configure_logging

# name -> "module:attribute" of a click command or group
COMMANDS: dict[str, str] = {
    "interval": "plumbline.cli.stats_commands:interval",
    "power": "plumbline.cli.stats_commands:power",
    "compare": "plumbline.cli.compare:compare",
    "records": "plumbline.cli.records:records",
    "leaderboard": "plumbline.cli.leaderboard:leaderboard",
    "probe": "plumbline.cli.reliability:probe",
    "reliability": "plumbline.cli.reliability:reliability",
    "demo": "plumbline.cli.demo:demo",
    "run": "plumbline.cli.run:run",
    "cdk": "plumbline.cli.cdk:cdk",
    "judge": "plumbline.cli.judge:judge",
    "report": "plumbline.cli.report:report",
    "agent": "plumbline.cli.agent:agent",
    "history": "plumbline.cli.history:history",
    "store": "plumbline.cli.store:store",
}

#: name -> the command's short help, as `plumbline --help` lists it (without importing it; a
#: test checks that each equals the command's own first docstring line).
SHORT_HELP: dict[str, str] = {
    "agent": "Run coding agents on a suite's tasks in A/B arms and collect run records.",
    "cdk": "CDK synthesis scoring (sandboxed `cdk synth` plus cfn-lint).",
    "compare": "Compare agent arms from run records: the A/B schema's three gates, paired "
    "deltas with bootstrap intervals, paired tests, and a decision.",
    "demo": "Run plumbline's jobs on built-in data, offline; write every result and a site "
    "under -o, and end with the answers.",
    "history": "Every result recorded in a results store, in time order, and whether any "
    "metric changed.",
    "interval": "Estimate a success rate with its confidence interval.",
    "judge": "LLM-judge tools for the architecture_design category.",
    "leaderboard": "Weighted multi-category leaderboards from Inspect logs, with intervals and "
    "tie groups.",
    "power": "How many questions (and repeats) are needed to detect a difference, or with --n, "
    "the smallest difference a given number of questions can detect.",
    "probe": "Call models repeatedly with the same prompts and journal every trial.",
    "records": "Run records: convert agent output to them, and validate them.",
    "reliability": "Compute the five CERT metrics, with intervals, from trial records (no model "
    "calls).",
    "report": "Render a static site from INPUTS: leaderboard, compare and reliability JSON, and "
    "the Inspect logs, run records or trial records behind them (for drill-down pages).",
    "store": "The results store: record result files written earlier (see `plumbline history`).",
    "run": "Run SUITE (`sa-bench`, or a suite TOML file) against every --model; print the "
    "leaderboard.",
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def __init__(self, *args: Any, lazy_commands: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = lazy_commands

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List the commands with their short help from `SHORT_HELP`, importing none."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            if name in self.lazy_commands and name in SHORT_HELP:
                stand_in = click.Command(name, help=SHORT_HELP[name])
                rows.append((name, stand_in.get_short_help_str(limit)))
                continue
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy_commands:
            module_name, attribute = self.lazy_commands[cmd_name].split(":")
            command = getattr(importlib.import_module(module_name), attribute)
            if not isinstance(command, click.Command):
                raise TypeError(f"{self.lazy_commands[cmd_name]} is not a click command")
            return command
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; an unexpected exception becomes one line on stderr and exit 3.

        Bad input is reported by each command as `file:line: problem` (exit 1 or 2); anything
        else that escapes is a defect or an infrastructure failure, and a traceback helps only
        the person debugging it: `--debug` or `PLUMBLINE_DEBUG=1` shows it.
        """
        rest = ctx.args[: ctx.args.index("--") if "--" in ctx.args else None]
        ctx.meta[HELP_ONLY] = any(arg in ctx.help_option_names for arg in rest)
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except ModuleNotFoundError as error:  # an extra not installed: say which, in a line
            from plumbline.core.extras import missing_extra_line

            line = missing_extra_line(error)
            if line is None or _debugging(ctx):
                raise
            click.echo(line, err=True)
            sys.exit(EXIT_INFRA)
        except OSError as error:  # the file system refused: a path to fix, not a defect
            if _debugging(ctx):
                raise
            click.echo(os_error_line(error), err=True)
            sys.exit(EXIT_INFRA)
        except Exception as error:
            if _debugging(ctx):
                raise
            click.echo(internal_error_line(error), err=True)
            sys.exit(EXIT_INFRA)


#: Exit status for an internal or infrastructure error (nothing was judged): `EXIT_INFRA`.
INTERNAL_ERROR = EXIT_INFRA
DEBUG_ENV = "PLUMBLINE_DEBUG"
#: ctx.meta key: the arguments ask a subcommand for its help, and nothing runs.
HELP_ONLY = "plumbline.help_only"


def _debugging(ctx: click.Context) -> bool:
    return bool(ctx.params.get("debug")) or os.environ.get(DEBUG_ENV, "") not in ("", "0")


def os_error_line(error: OSError) -> str:
    """The one line printed when the file system refuses (a path that cannot be read or
    written): what failed and on which path."""
    from plumbline.core.escape import visible_controls

    reason = error.strerror or str(error)
    paths = [str(p) for p in (error.filename, error.filename2) if p not in (None, "")]
    where = f": {' -> '.join(paths)}" if paths else ""
    return visible_controls(f"plumbline: error: {reason}{where}")


def internal_error_line(error: BaseException) -> str:
    """The one line printed for an unexpected exception (control characters made visible)."""
    from plumbline.core.escape import visible_controls

    text = " ".join(str(error).split()) or "(no message)"
    if len(text) > 500:
        text = text[:500] + "..."
    return visible_controls(
        f"plumbline: internal error: {type(error).__name__}: {text} (rerun with --debug or "
        f"{DEBUG_ENV}=1 for the traceback)"
    )


@click.group(
    cls=LazyGroup,
    lazy_commands=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, "--version", "-V", prog_name="plumbline")
@click.option(
    "--debug",
    is_flag=True,
    help=f"Show the Python traceback of an internal error (or set {DEBUG_ENV}=1).",
)
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="Only warnings and errors on stderr: no progress bars or progress lines.",
)
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Also show debug messages on stderr (what each step does).",
)
@click.option(
    "--max-line-bytes",
    type=click.IntRange(min=1),
    metavar="N",
    envvar="PLUMBLINE_MAX_LINE_BYTES",
    show_envvar=True,
    help="The longest line any input file may hold, in bytes (default 134,217,728 = 128 MiB); "
    "a longer line is a file:line error.",
)
def main(debug: bool, quiet: bool, verbose: bool, max_line_bytes: int | None) -> None:
    """plumbline: honest, reproducible numbers about LLMs and coding agents.

    Every command that has a result takes --json [PATH]: the result as JSON on stdout (and
    nothing else there), or written to PATH. Exit status: 0 ok, 1 a gate failed (a negative
    result or invalid records), 2 usage or input error, 3 infrastructure error.
    """
    if quiet and verbose:
        raise click.UsageError("give -q/--quiet or -v/--verbose, not both")
    if max_line_bytes is not None:
        from plumbline.records.lines import set_max_line_bytes

        set_max_line_bytes(max_line_bytes)
    if click.get_current_context().meta.get(HELP_ONLY):
        return  # `plumbline CMD --help` only prints help: no need to import `logging`
    configure_logging(-1 if quiet else 1 if verbose else 0)
