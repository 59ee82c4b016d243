"""`plumbline agent`: run coding agents on a suite's tasks in two or more arms, fairly.

`agent plan SUITE` shows what a run would do (the seeded schedule and every difference between
arms) without running anything; `agent run SUITE --agent CMD -o DIR` runs it and writes one
validated run record per run to DIR/records.jsonl (rerun the same command to resume).
"""

from __future__ import annotations

import functools
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from plumbline.app.agent_analysis import COMPARE_JSON, COMPARE_MD
from plumbline.cli.agent_options import HarnessChoices, harness_options
from plumbline.cli.output import (
    EXIT_INTERRUPTED,
    FiniteFloatRange,
    Group,
    InputError,
    choice_option,
    console,
    dumps,
    emit,
    error_console,
    json_option,
    quiet,
    seed_option,
    wants_json,
    warn,
)
from plumbline.cli.report import html_option, print_site_written, publish_result, report_name
from plumbline.cli.sequential_options import sequential_options
from plumbline.cli.storing import StoreOptions, store_options, store_step
from plumbline.core.escape import terminal, terminal_line
from plumbline.core.limits import MAX_REPEATS
from plumbline.views.agent import (
    differences_table,
    render_differences,
    render_plan,
    render_result,
)

if TYPE_CHECKING:
    from rich.console import Console

    from plumbline.agent.harness import Harness, RunOptions, RunResult
    from plumbline.agent.plan import Plan
    from plumbline.agent.sequential import SequentialMonitor
    from plumbline.compare.result import CompareReport
    from plumbline.records.run_record import RunRecord

#: The agent profiles `--profile` takes: `plumbline.agent.profiles.PROFILES` (a test checks
#: they agree), named here so that `agent --help` does not import the harness.
PROFILE_NAMES = ("claude-code", "codex", "generic", "opencode")

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class PlanChoices:
    """The options that make an `agent` plan: the suite, the agent, repeats, seed, order."""

    suite: str
    agent: str | None
    profile: str | None
    repeats: int | None
    seed: int
    order: str

    def plan(self, repeats: int | None = None) -> Plan:
        """The plan (with `repeats` instead of --repeats when given); a bad suite or agent
        command is an input error."""
        return _plan(
            self.suite, self.agent, self.profile, repeats or self.repeats, self.seed, self.order
        )


def _plan(
    suite_path: str,
    agent: str | None,
    profile: str | None,
    repeats: int | None,
    seed: int,
    order: str,
) -> Plan:
    from plumbline.agent.plan import make_plan
    from plumbline.agent.profiles import AgentCommand, AgentCommandError, resolve_agent
    from plumbline.agent.suite import SuiteError, load_suite

    try:
        loaded = load_suite(suite_path)
        command: AgentCommand | None = resolve_agent(agent, profile) if agent else None
        return make_plan(
            loaded,
            command,
            repeats=repeats,
            seed=seed,
            order="abba" if order == "abba" else "random",
        )
    except (SuiteError, AgentCommandError) as error:
        raise InputError(str(error)) from None


def _plan_options(function: F) -> F:
    """SUITE, `--agent`, `--profile`, `--repeats`, `--seed` and `--order`, given to the
    command as one `choices: PlanChoices` argument."""

    @functools.wraps(function)
    def wrapper(
        *args: Any,
        suite: str,
        agent: str | None,
        profile: str | None,
        repeats: int | None,
        seed: int,
        order: str,
        **kwargs: Any,
    ) -> Any:
        choices = PlanChoices(suite, agent, profile, repeats, seed, order)
        return function(*args, choices=choices, **kwargs)

    options = [
        click.argument("suite", type=click.Path(dir_okay=False)),
        click.option(
            "--agent",
            metavar="COMMAND|PROFILE",
            help="Agent command template ({prompt}, {prompt_file}, {workspace}) or a profile "
            f"name ({', '.join(p for p in PROFILE_NAMES if p != 'generic')}). "
            "Default: the suite's.",
        ),
        click.option(
            "--profile",
            type=click.Choice(PROFILE_NAMES),
            help="How to read the agent's output (default: from the executable's name).",
        ),
        click.option(
            "--repeats",
            type=click.IntRange(min=1, max=MAX_REPEATS),
            help=f"Repeats per task and arm (default: suite's; at most {MAX_REPEATS:,}).",
        ),
        seed_option("Random seed of the schedule (the order of runs and of arms)."),
        choice_option(
            "--order",
            choices=["random", "abba"],
            default="random",
            help="random: seeded shuffle of (task, repeat) blocks and of the arms in each; "
            "abba: arm order alternates block by block.",
        ),
    ]
    decorated: Any = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return cast(F, decorated)


@click.group(cls=Group)
def agent() -> None:
    """Run coding agents on a suite's tasks in A/B arms and collect run records."""


@agent.command("plan")
@_plan_options
@json_option
def plan_command(choices: PlanChoices, json_path: str | None) -> None:
    """Show what `agent run` would do: tasks, every difference between arms, the schedule."""
    plan = choices.plan()

    emit(plan.to_dict(), json_path, lambda out: render_plan(plan, out))


def _progress(harness: Harness) -> Callable[[RunRecord], None]:
    done = 0

    def report(record: RunRecord) -> None:
        nonlocal done
        done += 1
        if quiet():
            return
        if record.infra_failure:
            outcome = f"[red]infra failure ({terminal_line(record.infra_failure_kind)})[/]"
        elif record.timed_out:
            outcome = "[red]timed out[/]"
        else:
            outcome = "[green]success[/]" if record.success else "[yellow]failure[/]"
        flagged = (
            f", [red]protected paths modified: "
            f"{terminal_line(', '.join(record.protected_paths_modified))}[/]"
            if record.protected_paths_modified
            else ""
        )
        error_console.print(
            f"[{done}/{harness.pending_count}] {terminal_line(record.task_id)} "
            f"{terminal_line(record.arm)} "
            f"r{record.repeat}: {outcome} {record.duration_seconds:.1f} s{flagged}",
            soft_wrap=True,
        )

    return report


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@agent.command("run")
@_plan_options
@harness_options
@click.option(
    "--collect-analyze",
    is_flag=True,
    help=f"End with `plumbline compare` on the records ({COMPARE_JSON}, {COMPARE_MD}).",
)
@sequential_options(
    "--until-decided",
    "Two arms: evaluate an anytime-valid sequential A/B on success after every completed "
    "pair and stop launching trials once it decides (running trials finish and are recorded).",
    effect_type=FiniteFloatRange(0, 0.5, min_open=True, max_open=True),
    effect_note="baseline 0.5",
    planning=[
        click.option(
            "--max-pairs",
            type=click.IntRange(min=1),
            help="--until-decided: the cap on pairs (default: the smallest reaching 80% power).",
        )
    ],
)
@html_option
@json_option
@store_options
def run_command(
    choices: PlanChoices,
    harness: HarnessChoices,
    collect_analyze: bool,
    until_decided: bool,
    effect: float | None,
    max_pairs: int | None,
    correlation: float | None,
    html_dir: Path | None,
    json_path: str | None,
    store: StoreOptions,
) -> None:
    """Run every (task, arm, repeat) of SUITE in hermetic workspaces, interleaving arms, and
    append one validated run record per run to OUTPUT/records.jsonl.

    Rerunning the same command resumes: recorded units are skipped. Each run's diff is saved
    under OUTPUT/diffs/, its logs under OUTPUT/logs/, the plan (schedule and every difference
    between arms) in OUTPUT/plan.json. --html DIR implies --collect-analyze and adds the A/B
    page to the site in DIR. --until-decided stops once a sequential A/B on success decides.
    """
    plan, monitor = _until_decided(
        choices.plan(),
        until_decided,
        effect,
        max_pairs,
        choices.repeats,
        choices.plan,
        correlation=correlation,
    )
    options = harness.run_options(plan)
    if not wants_json(json_path):
        render_differences(plan, console)
    result = _run_harness(plan, options, monitor)
    analyze = collect_analyze or html_dir is not None
    _emit_run(plan, result, monitor, analyze, html_dir, json_path, store)


def _emit_run(
    plan: Plan,
    result: RunResult,
    monitor: SequentialMonitor | None,
    analyze: bool,
    html_dir: Path | None,
    json_path: str | None,
    store: StoreOptions,
) -> None:
    """The run's document (with the A/B analysis when asked) to JSON or the terminal, its
    page to the site in `html_dir`, and the result to the store."""
    from plumbline.app.agent_analysis import run_document
    from plumbline.app.publish import Outputs

    report = _analyze(plan, result, monitor) if analyze else None
    index = None
    if html_dir is not None and report is not None:
        index = _write_compare_page(plan, result, report, html_dir)
    document = run_document(plan, result, monitor, report)
    render = _run_renderer(result, document.sequential, report, index, html_dir)
    outputs = Outputs(
        dumps=dumps,
        show=lambda data, _site: emit(data, json_path, render),
        store=store_step(store, inputs=[result.records_path]),
    )
    publish_result(document, [result.records_path], outputs)


def _run_harness(plan: Plan, options: RunOptions, monitor: SequentialMonitor | None) -> RunResult:
    """Run the plan with progress lines, turning SIGTERM and Ctrl-C into a resumable stop."""
    from plumbline.agent.harness import Harness, RunError

    harness = Harness(plan, options)
    harness.on_record = _progress(harness)
    harness.monitor = monitor
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        return harness.run()
    except RunError as error:
        raise InputError(str(error)) from None
    except KeyboardInterrupt:
        warn(
            "interrupted: running trials were stopped and not recorded; "
            "rerun the same command to resume"
        )
        raise SystemExit(EXIT_INTERRUPTED) from None
    finally:
        signal.signal(signal.SIGTERM, previous)


def _write_compare_page(
    plan: Plan, result: RunResult, report: CompareReport, html_dir: Path
) -> Path:
    """Add the A/B page, with every difference between arms, to the HTML site in `html_dir`."""
    from plumbline.app.publish import Outputs
    from plumbline.compare.result import ArmDifferences
    from plumbline.results.kinds import kind_of

    differences = ArmDifferences.model_validate(differences_table(plan))
    page = report.model_copy(update={"arm_differences": differences})
    name = report_name(kind_of(page).name, [result.output])
    outputs = Outputs(dumps=dumps, html_dir=html_dir, page_name=name)
    site = publish_result(page, [result.records_path], outputs).site
    return site.index if site is not None else html_dir / "index.html"


def _run_renderer(
    result: RunResult,
    sequential: dict[str, Any] | None,
    report: CompareReport | None,
    index: Path | None,
    html_dir: Path | None,
) -> Callable[[Console], None]:
    """The terminal view of `agent run`: the result, then the analysis and the site written."""

    def render(out: Console) -> None:
        render_result(result, out, sequential)
        if report is not None:
            from plumbline.views.compare import render_terminal

            render_terminal(report, out)
            out.print(
                f"analysis: {terminal(result.output / COMPARE_JSON)}, "
                f"{terminal(result.output / COMPARE_MD)}"
            )
        if index is not None:
            print_site_written(out, html_dir, index)

    return render


def _until_decided(
    plan: Plan,
    until_decided: bool,
    effect: float | None,
    max_pairs: int | None,
    repeats: int | None,
    replan: Callable[[int], Plan],
    *,
    correlation: float | None = None,
) -> tuple[Plan, SequentialMonitor | None]:
    """With --until-decided: the sequential design, enough repeats (unless --repeats) for its
    cap, and the monitor the harness consults after every record, which takes pairs in
    schedule order; rerunning resumes to the same verdict. Only the random schedule is
    accepted: its order is a draw over all the suite's (task, repeat) blocks, while `abba`
    runs the tasks in the same order in every repeat, so the first tasks would decide for
    the suite (`stats.sequential`, "Order")."""
    import math

    if not until_decided:
        if effect is not None or max_pairs is not None or correlation is not None:
            raise click.UsageError(
                "--effect, --max-pairs and --correlation only apply with --until-decided"
            )
        return plan, None
    if plan.order != "random":
        raise click.UsageError(
            f"--until-decided needs --order random, not {plan.order}: {plan.order} runs the "
            "tasks in the same order in every repeat, so the first tasks' pairs would decide "
            "for the whole suite; the random order makes every pair a draw from all of it"
        )

    from plumbline.agent.sequential import SequentialMonitor
    from plumbline.compare.sequential import DEFAULT_BASELINE, DEFAULT_EFFECT
    from plumbline.stats.sequential import DEFAULT_CORRELATION, plan_sequential

    arms = [arm.name for arm in plan.loaded.suite.arms]
    if len(arms) != 2:
        raise click.UsageError(
            f"--until-decided compares two arms; the suite has {len(arms)}: {', '.join(arms)}"
        )
    control = plan.loaded.suite.control or arms[0]
    treatment = next(arm for arm in arms if arm != control)
    try:
        design = plan_sequential(
            DEFAULT_BASELINE,
            DEFAULT_EFFECT if effect is None else effect,
            correlation=DEFAULT_CORRELATION if correlation is None else correlation,
            max_pairs=max_pairs,
        )
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    needed = math.ceil(design.max_pairs / len(plan.tasks))
    if repeats is None and plan.repeats < needed:
        if needed > MAX_REPEATS:
            raise click.UsageError(
                f"the cap of {design.max_pairs} pairs needs {needed} repeats of "
                f"{len(plan.tasks)} tasks (at most {MAX_REPEATS:,}): give --max-pairs"
            )
        plan = replan(needed)
    return plan, SequentialMonitor(
        plan.schedule, treatment, control, design, max_pairs_given=max_pairs
    )


def _analyze(
    plan: Plan, result: RunResult, monitor: SequentialMonitor | None = None
) -> CompareReport | None:
    """The A/B analysis of the run, written beside its records (None, with the reason on
    stderr, when the records cannot be compared)."""
    from plumbline.app.agent_analysis import write_analysis
    from plumbline.compare.analysis import CompareError

    try:
        return write_analysis(plan, result, monitor, dumps)
    except CompareError as error:
        error_console.print(f"[red]compare[/]: {terminal(error)}", soft_wrap=True)
        return None
