"""`plumbline agent`: run coding agents on a suite's tasks in two or more arms, fairly.

`agent plan SUITE` shows what a run would do (the seeded schedule and every difference between
arms) without running anything; `agent run SUITE --agent CMD -o DIR` runs it and writes one
validated run record per run to DIR/records.jsonl (rerun the same command to resume).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import click

from plumbline.cli.output import (
    EXIT_INTERRUPTED,
    FiniteFloatRange,
    Group,
    InputError,
    OutputDirectory,
    concurrency_option,
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
from plumbline.cli.report import html_option, publish_result, report_name, site_url
from plumbline.cli.storing import StoreOptions, store_options, store_result
from plumbline.core import present
from plumbline.core.escape import markdown, terminal, terminal_line
from plumbline.core.limits import MAX_CONCURRENCY, MAX_REPEATS

if TYPE_CHECKING:
    from rich.console import Console

    from plumbline.agent.harness import Harness, RunOptions, RunResult
    from plumbline.agent.plan import Plan
    from plumbline.agent.sandbox import SandboxOptions
    from plumbline.agent.sequential import SequentialMonitor
    from plumbline.records.run_record import RunRecord

#: The agent profiles `--profile` takes: `plumbline.agent.profiles.PROFILES` (a test checks
#: they agree), named here so that `agent --help` does not import the harness.
PROFILE_NAMES = ("claude-code", "codex", "generic", "opencode")

COMPARE_JSON = "compare.json"
COMPARE_MD = "compare.md"
#: Schedule rows printed in the terminal (a table of 100,000 rows takes a minute to draw).
MAX_SHOWN_SCHEDULE = 200


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


def _plan_options(function: Any) -> Any:
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
        click.option(
            "--order",
            type=click.Choice(["random", "abba"]),
            default="random",
            show_default=True,
            help="random: seeded shuffle of (task, repeat) blocks and of the arms in each; "
            "abba: arm order alternates block by block.",
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def render_differences(plan: Plan, out: Console) -> None:
    from rich.table import Table

    arms = [arm.name for arm in plan.loaded.suite.arms]
    commands = {
        f"{a.template} (profile {a.profile.name})" if a else "none: give --agent"
        for a in plan.agents.values()
    }
    if len(commands) == 1:
        out.print(f"agent: {terminal(commands.pop())}", soft_wrap=True)
    if not plan.differences:
        out.print("[yellow]The arms do not differ in anything the suite sets.[/]")
        return
    differences = differences_table(plan)
    table = Table(title="Every difference between arms", title_justify="left")
    table.add_column("field")
    for arm in arms:
        table.add_column(terminal(arm))
    for row in differences["rows"]:
        table.add_row(*map(terminal, [row["field"], *[row["values"][a] for a in arms]]))
    out.print(table)
    out.print(IDENTICAL_IN_EVERY_ARM)


def _short(value: Any) -> str:
    if value in (None, "", [], {}):
        return "—"
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return "\n".join(f"{v['path']} (sha256 {v['sha256'][:12]}, {v['bytes']} B)" for v in value)
    if isinstance(value, list):
        return "\n".join(str(v) for v in value)
    return str(value)


@click.group(cls=Group)
def agent() -> None:
    """Run coding agents on a suite's tasks in A/B arms and collect run records."""


@agent.command("plan")
@_plan_options
@json_option
def plan_command(
    suite: str,
    agent: str | None,
    profile: str | None,
    repeats: int | None,
    seed: int,
    order: str,
    json_path: str | None,
) -> None:
    """Show what `agent run` would do: tasks, every difference between arms, the schedule."""
    from rich.table import Table

    plan = _plan(suite, agent, profile, repeats, seed, order)

    def render(out: Console) -> None:
        loaded = plan.loaded
        out.print(
            f"[bold]{terminal(loaded.suite.name)}[/]: {len(plan.tasks)} tasks × "
            f"{len(loaded.suite.arms)} arms × {plan.repeats} repeats = "
            f"{len(plan.schedule)} runs, order {plan.order}, seed {plan.seed}"
        )
        tasks = Table(title="Tasks", title_justify="left")
        for column in ("task", "source", "timeout (s)", "acceptance", "protected"):
            tasks.add_column(column)
        for task_plan in plan.tasks.values():
            task = task_plan.task
            source = (
                f"{task.source.git}@{(task_plan.commit or '')[:12]}"
                if task.source.git
                else f"{task.source.dir} (directory)"
            )
            tasks.add_row(
                *map(
                    terminal,
                    (
                        task.id,
                        source,
                        f"{task_plan.timeout_seconds:g}",
                        task.acceptance,
                        ", ".join(task_plan.protected) or "—",
                    ),
                )
            )
        out.print(tasks)
        render_differences(plan, out)
        schedule = Table(title="Schedule", title_justify="left")
        for column in ("#", "task", "arm", "repeat"):
            schedule.add_column(column)
        for unit in plan.schedule[:MAX_SHOWN_SCHEDULE]:
            schedule.add_row(
                str(unit.position), terminal(unit.task_id), terminal(unit.arm), str(unit.repeat)
            )
        out.print(schedule)
        hidden = len(plan.schedule) - MAX_SHOWN_SCHEDULE
        if hidden > 0:
            out.print(
                f"... and {hidden:,} more runs (the first {MAX_SHOWN_SCHEDULE} are shown; "
                "--json prints the whole schedule)"
            )

    emit(plan.to_dict(), json_path, render)


def _pass_env(
    specs: tuple[str, ...], plan: Plan
) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """`--pass-env NAME` (every arm) and `--pass-env ARM:NAME` (that arm only), with the
    suite's arm `pass_env`: the values for every arm, and per arm."""
    arms = plan.loaded.suite.arms
    names = [arm.name for arm in arms]
    wanted: list[tuple[str | None, str]] = []
    for spec in specs:
        arm, colon, name = spec.rpartition(":")
        if colon and arm not in names:
            raise click.UsageError(
                f"--pass-env {spec}: the suite has no arm {arm!r} (its arms: {', '.join(names)})"
            )
        if not name:
            raise click.UsageError(f"--pass-env {spec}: give a variable name (ARM:NAME or NAME)")
        wanted.append((arm or None, name))
    wanted += [(arm.name, variable) for arm in arms for variable in arm.pass_env]
    missing = sorted({name for _, name in wanted if name not in os.environ})
    if missing:
        raise click.UsageError(f"--pass-env: not set in this environment: {', '.join(missing)}")
    common = {variable: os.environ[variable] for target, variable in wanted if target is None}
    per_arm: dict[str, dict[str, str]] = {}
    for target, variable in wanted:
        if target is not None:
            per_arm.setdefault(target, {})[variable] = os.environ[variable]
    return common, per_arm


def _progress(harness: Harness) -> Any:
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


def render_result(
    result: RunResult, out: Console, sequential: dict[str, Any] | None = None
) -> None:
    """The runs per arm, what was reclaimed and retried, and (`--until-decided`) the
    sequential verdict with what the fixed design would have needed."""
    from rich.table import Table

    table = Table(title=f"Runs in {terminal(result.records_path)}", title_justify="left")
    for column in ("arm", "runs", "successes", "timed out", "infra failures", "protected edits"):
        table.add_column(column)
    for arm, tally in result.arms.items():
        infra = ", ".join(f"{k}: {v}" for k, v in tally.infra_failures.items()) or "0"
        table.add_row(
            terminal(arm),
            str(tally.runs),
            str(tally.successes),
            str(tally.timed_out),
            terminal(infra),
            str(tally.protected_paths_modified),
        )
    out.print(table)
    if result.reclaimed:
        killed = sum(r.killed for r in result.reclaimed)
        out.print(
            f"reclaimed {len(result.reclaimed)} trial(s) an interrupted harness left running "
            f"({killed} process(es) ended); they ran again",
            soft_wrap=True,
        )
    if result.infra_retries:
        out.print(
            f"[yellow]{len(result.infra_retries)} trial(s) lost with their node were run "
            "again (each recorded once):[/]",
            soft_wrap=True,
        )
        for retry in result.infra_retries:
            out.print(
                f"  {retry.task_id} {retry.arm} r{retry.repeat} (attempt {retry.attempt}): "
                f"{retry.error}",
                markup=False,
                soft_wrap=True,
            )
    out.print(f"ran {result.ran}, already recorded {result.skipped}, scheduled {result.scheduled}")
    for problem in result.record_errors[:20]:
        out.print(f"[red]{terminal(problem)}[/]", soft_wrap=True)
    if sequential is not None:
        from plumbline.agent.sequential import summary_lines

        for line in summary_lines(sequential):
            out.print(terminal(line), soft_wrap=True, highlight=False)


_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


def _size(option: str, text: str | None) -> int | None:
    """Bytes of a size like 512M, 4G or 4GiB (binary units); None when not given."""
    if text is None:
        return None
    value = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = value[-1:] if value[-1:] in _UNITS else ""
    number = value[: len(value) - len(unit)]
    try:
        amount = float(number)
    except ValueError:
        amount = -1.0
    if amount <= 0:
        raise click.BadParameter(f"{text!r}: not a size like 512M or 4G", param_hint=option)
    return int(amount * _UNITS[unit])


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@agent.command("run")
@_plan_options
@click.option(
    "--output",
    "-o",
    required=True,
    type=OutputDirectory(),
    help="The results directory: records.jsonl, plan.json, diffs/ and logs/ (rerun to resume).",
)
@concurrency_option("Trials at once.", default=1, maximum=MAX_CONCURRENCY)
@click.option(
    "--pass-env",
    "pass_env",
    multiple=True,
    metavar="[ARM:]NAME",
    help="Pass this variable (e.g. an API key) to every arm's agent, or with ARM: to that "
    "arm's only; it is never written anywhere. A key (a name ending in API_KEY or AUTH_TOKEN) "
    "reaches the agent as a per-trial credential the metering proxy swaps back. Repeatable.",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="HOST[:PORT]",
    help="An upstream the metering proxy may forward model calls to, besides "
    "api.anthropic.com, api.openai.com and the suite's network.allow. Repeatable.",
)
@click.option(
    "--no-meter",
    is_flag=True,
    help="Do not route agents' model calls through the metering proxy: records then carry "
    "the agents' own reported usage (usage_source agent-reported).",
)
@click.option(
    "--workdir",
    type=click.Path(file_okay=False),
    help="Where trial directories are made (default: the system temp directory); must be "
    "outside any git repository.",
)
@click.option("--keep-workspaces", is_flag=True, help="Keep trial directories after each run.")
@click.option(
    "--sandbox",
    "sandbox_kind",
    default="bubblewrap",
    show_default=True,
    metavar="bubblewrap|none|PLUGIN",
    help="Where each trial's agent and acceptance check run: bubblewrap (the workspace, its "
    "own HOME and /tmp writable; no home, suite, results or other trial visible), none (on "
    "the host, unconfined; every record says so), or a sandbox registered in the "
    "plumbline.trial_sandboxes entry-point group.",
)
@click.option(
    "--network",
    type=click.Choice(["isolated", "host", "none"]),
    default=None,
    help="isolated (the default with a sandbox): each trial has its own network namespace and "
    "reaches only the --bridge ports (the harness's proxy); host: the host's network, an "
    "opt-out written in every record (the default with --sandbox none); none: no network.",
)
@click.option(
    "--bridge",
    "bridges",
    multiple=True,
    metavar="PORT=SOCKET",
    help="In an isolated trial, 127.0.0.1:PORT forwards to this host Unix socket (a proxy "
    "listening there); repeatable.",
)
@click.option(
    "--limit",
    "limits",
    multiple=True,
    metavar="NAME=VALUE",
    help="A kernel-enforced limit of each trial: memory=4G, processes=1024, cpu=3600 (CPU "
    "seconds per process), wall=SECONDS (lowers the task's timeout), disk=2G (/tmp, /dev/shm, "
    "any file written); repeatable. The limits and their mechanism are in every record.",
)
@click.option(
    "--mount-ro",
    "mount_ro",
    multiple=True,
    metavar="PATH",
    type=click.Path(exists=True),
    help="A host path every trial sees read-only (a toolchain, a cache); repeatable.",
)
@click.option(
    "--home-file",
    "home_files",
    multiple=True,
    metavar="SRC[:DEST]",
    help="Copy a file into every trial's HOME (DEST relative to HOME; default: SRC's path "
    "below your home); its content is redacted like --pass-env values. Repeatable.",
)
@click.option(
    "--kill-grace",
    type=FiniteFloatRange(min=0),
    default=5.0,
    show_default=True,
    help="Seconds between SIGTERM and SIGKILL when a time limit is hit.",
)
@click.option(
    "--retry-infra", is_flag=True, help="Also rerun units whose records are all infra failures."
)
@click.option(
    "--duration-from",
    type=click.Choice(["agent", "harness"]),
    default="harness",
    show_default=True,
    help="harness: the harness's wall clock; agent: the agent's own reported duration when "
    "it gives one (the other is kept beside it either way).",
)
@click.option("--force", is_flag=True, help="Add to an output directory of a changed suite.")
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="local: trials in threads of this process; ray: one Ray task per trial, on the "
    "cluster --ray-address names (see README, Scale out).",
)
@click.option(
    "--ray-address",
    metavar="HOST:PORT",
    help="With --executor ray: the cluster's address (default: $RAY_ADDRESS, else a new "
    "Ray instance on this machine).",
)
@click.option(
    "--cpus-per-trial",
    type=FiniteFloatRange(min=0, min_open=True),
    default=1.0,
    show_default=True,
    help="With --executor ray: CPUs each trial reserves on its node.",
)
@click.option(
    "--memory-per-trial",
    metavar="SIZE",
    help="With --executor ray: memory each trial reserves on its node (e.g. 4G, 512M).",
)
@click.option(
    "--infra-retries",
    type=click.IntRange(min=0),
    default=3,
    show_default=True,
    help="With --executor ray: how often a trial lost with its node is run again.",
)
@click.option(
    "--collect-analyze",
    is_flag=True,
    help=f"End with `plumbline compare` on the records ({COMPARE_JSON}, {COMPARE_MD}).",
)
@click.option(
    "--until-decided",
    is_flag=True,
    help="Two arms: evaluate an anytime-valid sequential A/B on success after every completed "
    "pair and stop launching trials once it decides (running trials finish and are recorded).",
)
@click.option(
    "--effect",
    type=FiniteFloatRange(0, 0.5, min_open=True, max_open=True),
    help="--until-decided: planned pass-rate difference (baseline 0.5)  [default: 0.10]",
)
@click.option(
    "--max-pairs",
    type=click.IntRange(min=1),
    help="--until-decided: the cap on pairs (default: the smallest reaching 80% power).",
)
@click.option(
    "--correlation",
    type=FiniteFloatRange(-1, 1, max_open=True),
    help="--until-decided: assumed correlation of the two arms' outcomes within a pair, for "
    "planning (0, independent arms, needs the most pairs of any correlation >= 0)  "
    "[default: 0]",
)
@html_option
@json_option
@store_options
def run_command(
    suite: str,
    agent: str | None,
    profile: str | None,
    repeats: int | None,
    seed: int,
    order: str,
    output: str,
    concurrency: int,
    pass_env: tuple[str, ...],
    allow_hosts: tuple[str, ...],
    no_meter: bool,
    workdir: str | None,
    keep_workspaces: bool,
    sandbox_kind: str,
    network: str | None,
    bridges: tuple[str, ...],
    limits: tuple[str, ...],
    mount_ro: tuple[str, ...],
    home_files: tuple[str, ...],
    kill_grace: float,
    retry_infra: bool,
    duration_from: str,
    force: bool,
    executor: str,
    ray_address: str | None,
    cpus_per_trial: float,
    memory_per_trial: str | None,
    infra_retries: int,
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
    plan = _plan(suite, agent, profile, repeats, seed, order)
    plan, monitor = _until_decided(
        plan,
        until_decided,
        effect,
        max_pairs,
        repeats,
        lambda r: _plan(suite, agent, profile, r, seed, order),
        correlation=correlation,
    )
    options = _run_options(
        output=output,
        concurrency=concurrency,
        workdir=workdir,
        pass_env=_pass_env(pass_env, plan),
        metering=(allow_hosts, not no_meter),
        keep_workspaces=keep_workspaces,
        kill_grace=kill_grace,
        retry_infra=retry_infra,
        duration_from=duration_from,
        force=force,
        executor=executor,
        ray_address=ray_address,
        cpus_per_trial=cpus_per_trial,
        memory_per_trial=memory_per_trial,
        infra_retries=infra_retries,
        sandbox=_sandbox_options(sandbox_kind, network, mount_ro, bridges, limits),
        home_files=_home_files(home_files),
    )
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
    document: dict[str, Any] = result.to_dict()
    document["arm_differences"] = [d.to_dict() for d in plan.differences]
    sequential = None
    if monitor is not None:
        sequential = document["sequential"] = _sequential_summary(monitor, plan, result)
    index = None
    report = _analyze(plan, result, monitor) if analyze else None
    if report is not None:
        document["compare"] = report.model_dump(mode="json")
    if html_dir is not None and report is not None:
        index = _write_compare_page(plan, result, report, html_dir)
    emit(document, json_path, _run_renderer(result, sequential, report, index, html_dir))
    store_result(document, store, inputs=[result.records_path])


def _run_options(
    *,
    output: str,
    concurrency: int,
    workdir: str | None,
    pass_env: tuple[dict[str, str], dict[str, dict[str, str]]],
    metering: tuple[tuple[str, ...], bool],
    keep_workspaces: bool,
    kill_grace: float,
    retry_infra: bool,
    duration_from: str,
    force: bool,
    executor: str,
    ray_address: str | None,
    cpus_per_trial: float,
    memory_per_trial: str | None,
    infra_retries: int,
    sandbox: SandboxOptions,
    home_files: dict[str, bytes],
) -> RunOptions:
    """The harness's options from `agent run`'s command-line options (`pass_env`: the values
    for every arm, and per arm; `metering`: the allowed upstreams, and whether to meter)."""
    from plumbline.agent.harness import RayOptions, RunOptions

    ray_options = RayOptions(
        address=ray_address,
        cpus_per_trial=cpus_per_trial,
        memory_per_trial=_size("--memory-per-trial", memory_per_trial),
        infra_retries=infra_retries,
    )
    return RunOptions(
        output=Path(output),
        concurrency=concurrency,
        workdir=Path(workdir) if workdir else None,
        pass_env=pass_env[0],
        arm_pass_env=pass_env[1],
        allow_hosts=metering[0],
        meter=metering[1],
        keep_workspaces=keep_workspaces,
        kill_grace=kill_grace,
        retry_infra=retry_infra,
        duration_from="harness" if duration_from == "harness" else "agent",
        force=force,
        executor="ray" if executor == "ray" else "local",
        ray=ray_options,
        sandbox=sandbox,
        home_files=home_files,
    )


def _sandbox_options(
    kind: str,
    network: str | None,
    mount_ro: tuple[str, ...],
    bridges: tuple[str, ...] = (),
    limits: tuple[str, ...] = (),
) -> SandboxOptions:
    from plumbline.agent.limits import LimitError, parse_limits
    from plumbline.agent.sandbox import SandboxOptions

    if kind == "none" and network == "isolated":
        raise click.BadParameter("an isolated network needs a sandbox", param_hint="--network")
    chosen = network or ("host" if kind == "none" else "isolated")
    try:
        parsed = parse_limits(limits)
    except LimitError as error:
        raise click.BadParameter(str(error), param_hint="--limit") from None
    return SandboxOptions(
        kind=kind,
        network="none" if chosen == "none" else "host" if chosen == "host" else "isolated",
        bridges=_bridges(bridges),
        mount_ro=tuple(Path(p).resolve() for p in mount_ro),
        limits=parsed,
    )


def _bridges(specs: tuple[str, ...]) -> tuple[tuple[int, Path], ...]:
    """`--bridge PORT=SOCKET` values as (port, socket path) pairs."""
    bridges = []
    for spec in specs:
        port, found, path = spec.partition("=")
        if not found or not port.strip().isdigit() or not path:
            raise click.BadParameter(f"{spec!r}: expected PORT=SOCKET", param_hint="--bridge")
        bridges.append((int(port), Path(path).expanduser().absolute()))
    return tuple(bridges)


def _home_files(specs: tuple[str, ...]) -> dict[str, bytes]:
    """`--home-file SRC[:DEST]` values as HOME-relative path -> content."""
    from plumbline.agent.sandbox import HomeFile, SandboxError

    files: dict[str, bytes] = {}
    for spec in specs:
        try:
            home_file = HomeFile.parse(spec)
            files[home_file.destination] = home_file.source.read_bytes()
        except (SandboxError, OSError) as error:
            raise click.BadParameter(str(error), param_hint="--home-file") from None
    return files


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


def _write_compare_page(plan: Plan, result: RunResult, report: Any, html_dir: Path) -> Path:
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
    report: Any,
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
            out.print(
                f"HTML site written to {terminal(html_dir)}: open {terminal(site_url(index))}",
                soft_wrap=True,
            )

    return render


def _sequential_summary(
    monitor: SequentialMonitor, plan: Plan, result: RunResult
) -> dict[str, Any]:
    recorded = sum(tally.runs for tally in result.arms.values())
    return monitor.summary(trials_scheduled=len(plan.schedule), trials_recorded=recorded)


def _until_decided(
    plan: Plan,
    until_decided: bool,
    effect: float | None,
    max_pairs: int | None,
    repeats: int | None,
    replan: Any,
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


def _analyze(plan: Plan, result: RunResult, monitor: SequentialMonitor | None = None) -> Any:
    import polars as pl

    from plumbline.compare.analysis import CompareError, CompareSettings, compare_runs
    from plumbline.compare.result import SequentialSettings
    from plumbline.records.io import write_atomic
    from plumbline.records.run_record import read_run_records
    from plumbline.views.compare import render_markdown

    # The records the harness counted (one per unit of its plan), never other lines of the file.
    table = read_run_records([result.records_path])
    counted = {record.run_id for record in result.records}
    table.frame = table.frame.filter(pl.col("run_id").is_in(list(counted)))
    settings = CompareSettings()
    if monitor is not None:
        design = monitor.plan
        assert design.baseline is not None
        settings = CompareSettings(
            sequential=SequentialSettings(
                effect=design.effect,
                baseline=design.baseline,
                alpha=design.alpha,
                max_pairs=monitor.max_pairs_given,
                correlation=float(design.assumptions["correlation"]),
            )
        )
    try:
        report = compare_runs(table, control=plan.loaded.suite.control, settings=settings)
    except CompareError as error:
        error_console.print(f"[red]compare[/]: {terminal(error)}", soft_wrap=True)
        return None
    write_atomic(result.output / COMPARE_JSON, dumps(report) + "\n")
    write_atomic(result.output / COMPARE_MD, render_markdown(report) + differences_markdown(plan))
    return report


#: What the harness keeps the same in every arm, said beside every list of differences.
IDENTICAL_IN_EVERY_ARM = (
    "Identical in every arm: repository and revision, task setup, prompt scaffolding, "
    "acceptance command, protected paths, time limits, other environment variables."
)


def differences_table(plan: Plan) -> dict[str, Any]:
    """The arms' differences as display text per arm: the terminal, Markdown and HTML views."""
    arms = [arm.name for arm in plan.loaded.suite.arms]
    return {
        "arms": arms,
        "rows": [
            {"field": d.field, "values": {arm: _short(d.values.get(arm)) for arm in arms}}
            for d in plan.differences
        ],
        "identical": IDENTICAL_IN_EVERY_ARM,
    }


def _multiline_cell(text: str) -> str:
    """One escaped line per line of the value, joined by our own line breaks."""
    return "<br>".join(map(markdown, text.split("\n")))


def differences_markdown(plan: Plan) -> str:
    """The arms' differences as a Markdown section (appended to the analysis report)."""
    differences = differences_table(plan)
    arms = differences["arms"]
    lines = ["", "## Every difference between arms", ""]
    if not differences["rows"]:
        lines.append("The arms do not differ in anything the suite sets.")
    else:
        rows = [[row["field"], *(row["values"][a] for a in arms)] for row in differences["rows"]]
        lines.append(present.markdown_table(["field", *arms], rows, cell=_multiline_cell))
    lines += ["", differences["identical"], ""]
    return "\n".join(lines)
