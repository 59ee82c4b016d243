"""The `plumbline` command.

Subcommands are imported lazily, so `plumbline --help` stays fast and a job's heavy
dependencies (Inspect AI, torch) load only when that job runs.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from plumbline import __version__

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
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def __init__(self, *args: Any, lazy_commands: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = lazy_commands

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

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
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except OSError as error:  # the file system refused: a path to fix, not a defect
            if _debugging(ctx):
                raise
            click.echo(os_error_line(error), err=True)
            sys.exit(INTERNAL_ERROR)
        except Exception as error:
            if _debugging(ctx):
                raise
            click.echo(internal_error_line(error), err=True)
            sys.exit(INTERNAL_ERROR)


#: Exit status for an internal or infrastructure error (nothing was judged).
INTERNAL_ERROR = 3
DEBUG_ENV = "PLUMBLINE_DEBUG"


def _debugging(ctx: click.Context) -> bool:
    return bool(ctx.params.get("debug")) or os.environ.get(DEBUG_ENV, "") not in ("", "0")


def os_error_line(error: OSError) -> str:
    """The one line printed when the file system refuses (a path that cannot be read or
    written): what failed and on which path."""
    from plumbline.report.escape import visible_controls

    reason = error.strerror or str(error)
    paths = [str(p) for p in (error.filename, error.filename2) if p not in (None, "")]
    where = f": {' -> '.join(paths)}" if paths else ""
    return visible_controls(f"plumbline: error: {reason}{where}")


def internal_error_line(error: BaseException) -> str:
    """The one line printed for an unexpected exception (control characters made visible)."""
    from plumbline.report.escape import visible_controls

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
def main(debug: bool) -> None:
    """plumbline: honest, reproducible numbers about LLMs and coding agents.

    Every command that prints a result accepts --json to print it as JSON instead.
    """
