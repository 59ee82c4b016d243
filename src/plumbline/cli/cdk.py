"""``plumbline cdk``: check CDK apps the way the ``cdk_verify`` scorer does."""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from plumbline.cli.output import (
    EXIT_FAILED,
    EXIT_INFRA,
    EXIT_OK,
    FiniteFloatRange,
    Group,
    choice_option,
    emit,
    error_console,
    json_option,
)
from plumbline.core.escape import terminal, visible_controls

if TYPE_CHECKING:
    from rich.console import Console

    from plumbline.cdk.extract import ExtractedApp
    from plumbline.cdk.outcomes import SynthReport
    from plumbline.cdk.synth import SynthOptions

OUTCOME_STYLE = {
    "passed": "bold green",
    "infra_error": "bold yellow",
}


def cdk_executor_options(function: Any) -> Any:
    """`--cdk-executor local|ray` and `--ray-address` (for `cdk check` and `run`)."""
    function = click.option(
        "--ray-address",
        metavar="HOST:PORT",
        help="With --cdk-executor ray: the Ray cluster (default: $RAY_ADDRESS, else a new "
        "local Ray instance).",
    )(function)
    return choice_option(
        "--cdk-executor",
        choices=["local", "ray"],
        default="local",
        help="Where CDK apps are synthesized: sandboxes on this machine, or Ray actors on a "
        "cluster, each with its own warm sandbox pool (see README, Scale out).",
    )(function)


def use_cdk_executor(kind: str, address: str | None) -> None:
    """Send the synth jobs of the `cdk_verify` scorers this command creates to `kind` (ray:
    the cluster at `address`) until the command ends."""
    if kind != "ray":
        return
    from plumbline.cdk.scorer import CdkExecutor, use_executor

    click.get_current_context().with_resource(use_executor(CdkExecutor("ray", address)))


@click.group(cls=Group)
def cdk() -> None:
    """CDK synthesis scoring (sandboxed `cdk synth` plus cfn-lint)."""


def _read_as(path: Path, text: str, mode: str) -> str:
    """Decide whether FILE is an app ("app") or a model response ("response")."""
    if mode != "auto":
        return mode
    if path.suffix == ".py":
        return "app"
    try:
        ast.parse(text)
    except SyntaxError:
        return "response"
    return "app" if "```" not in text else "response"


@cdk.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@choice_option(
    "--as",
    "mode",
    choices=["auto", "response", "app"],
    default="auto",
    help="Read FILE as a model response (extract the app) or as the app's Python source.",
)
@click.option(
    "--timeout",
    type=FiniteFloatRange(min=0, min_open=True, max=3600),
    default=60.0,
    show_default=True,
    help="Seconds per app.",
)
@click.option(
    "--fail-on",
    multiple=True,
    type=click.Choice(["error", "warning", "informational"]),
    help="cfn-lint severities that fail the app (repeatable; default: error).",
)
@click.option("--no-lint", is_flag=True, help="Skip cfn-lint.")
@click.option(
    "--builtin-validation",
    is_flag=True,
    help="Also run aws-cdk-lib's built-in CloudFormation validator at synth time (about 3 "
    "CPU seconds; its findings are warnings unless the app opts in).",
)
@click.option(
    "--unsafe-no-sandbox",
    is_flag=True,
    help="Run the app directly on this host when bubblewrap is unavailable. Model-written "
    "code can then read your files and environment: only for code you trust.",
)
@cdk_executor_options
@json_option
def check(
    file: Path,
    mode: str,
    timeout: float,
    fail_on: tuple[str, ...],
    no_lint: bool,
    builtin_validation: bool,
    unsafe_no_sandbox: bool,
    cdk_executor: str,
    ray_address: str | None,
    json_path: str | None,
) -> None:
    """Synthesize FILE (a model response or an app.py) and print the outcome, files and log.

    Exit status: 0 passed, 1 the app failed, 3 infrastructure error (nothing was judged).
    """
    # Imported here so that `plumbline --help` does not load the CDK machinery.
    from plumbline.cdk.extract import extract_app, extract_from_source
    from plumbline.cdk.outcomes import SynthReport
    from plumbline.cdk.synth import SynthOptions, build_job
    from plumbline.sandbox import ResourceLimits

    text = file.read_text(encoding="utf-8", errors="replace")
    read_as = _read_as(file, text, mode)
    app = extract_from_source(text, "app.py") if read_as == "app" else extract_app(text)
    options = SynthOptions(
        limits=ResourceLimits(wall_seconds=timeout, cpu_seconds=max(1, int(timeout))),
        fail_on=fail_on or ("error",),
        lint=not no_lint,
        pool_size=1,
        unsafe_no_sandbox=unsafe_no_sandbox,
        expected_samples=1,
        builtin_validation=builtin_validation,
    )
    unrunnable = build_job(app)
    if isinstance(unrunnable, SynthReport):
        report = unrunnable  # nothing to run: no sandbox needed to say why
    else:
        report = _synthesize(app, options, cdk_executor, ray_address)
    result = {"file": str(file), "read_as": read_as, **report.to_dict()}
    emit(result, json_path, lambda console: _render_check(console, report, read_as))
    if report.outcome.value == "infra_error":
        sys.exit(EXIT_INFRA)
    sys.exit(EXIT_OK if report.outcome.passed else EXIT_FAILED)


def _synthesize(
    app: ExtractedApp, options: SynthOptions, cdk_executor: str, ray_address: str | None
) -> SynthReport:
    """Check the app on the chosen executor; exit 3 if no sandbox or cluster can run it."""
    from plumbline.cdk.scorer import CdkExecutor, make_synthesizer
    from plumbline.cluster.connect import ClusterError
    from plumbline.sandbox import SandboxUnavailable

    executor = CdkExecutor("ray" if cdk_executor == "ray" else "local", ray_address, 1)
    try:
        synthesizer = make_synthesizer(options, executor)
        try:
            return synthesizer.check_app(app)
        finally:
            synthesizer.close()
    except (SandboxUnavailable, ClusterError) as error:
        error_console.print(f"[bold red]error:[/] {terminal(error)}")
        sys.exit(EXIT_INFRA)


def _render_check(console: Console, report: SynthReport, read_as: str) -> None:
    """Print the outcome, a summary, the synthesized files, the cfn-lint findings and logs."""
    from rich.panel import Panel
    from rich.syntax import Syntax
    from rich.table import Table

    style = OUTCOME_STYLE.get(report.outcome.value, "bold red")
    console.print(f"[{style}]{report.outcome.value}[/]  {terminal(report.reason)}")
    summary = Table.grid(padding=(0, 2))
    summary.add_row("read as", read_as)
    summary.add_row("entry point", terminal(report.entry or "-"))
    summary.add_row("exception", terminal(report.exception_type or "-"))
    count = "-" if report.resource_count is None else str(report.resource_count)
    summary.add_row("resources", count)
    summary.add_row("templates", terminal(", ".join(report.templates) or "-"))
    counts = report.lint_counts
    summary.add_row(
        "cfn-lint",
        f"{counts['error']} error(s), {counts['warning']} warning(s), "
        f"{counts['informational']} informational",
    )
    summary.add_row("engine", f"{report.engine}, {report.seconds:.2f} s")
    console.print(summary)
    for note in report.notes:
        console.print(f"[dim]note:[/] {terminal(note)}")
    for name, source in report.files.items():
        lexer = "json" if name.endswith(".json") else "python"
        code = Syntax(visible_controls(source), lexer, line_numbers=True)
        console.print(Panel(code, title=terminal(name)))
    if report.lint:
        table = Table("rule", "severity", "template", "line", "message", title="cfn-lint")
        for finding in report.lint:
            table.add_row(
                terminal(finding.rule),
                terminal(finding.severity),
                terminal(finding.template),
                "" if finding.line is None else str(finding.line),
                terminal(finding.message),
            )
        console.print(table)
    if report.stderr_head:
        console.print(Panel(terminal(report.stderr_head), title="first lines of stderr"))
    if report.log.strip():
        console.print(Panel(terminal(report.log.rstrip()), title="log"))
