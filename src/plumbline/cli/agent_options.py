"""The harness options of `plumbline agent run`, declared once and given to the command as
one `harness: HarnessChoices` argument (in the style of `cli.storing.store_options`).

`HarnessChoices.run_options(plan)` turns them into the harness's `RunOptions`: the
`--pass-env` values need the plan's arms, so they are checked then.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from plumbline.cli.output import (
    FiniteFloatRange,
    OutputDirectory,
    choice_option,
    concurrency_option,
)
from plumbline.core.limits import MAX_CONCURRENCY

if TYPE_CHECKING:
    from plumbline.agent.harness import RunOptions
    from plumbline.agent.plan import Plan
    from plumbline.agent.sandbox import SandboxOptions

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class HarnessChoices:
    """The values of `agent run`'s harness options, as click parsed them."""

    output: str
    concurrency: int
    pass_env: tuple[str, ...]
    allow_hosts: tuple[str, ...]
    no_meter: bool
    workdir: str | None
    keep_workspaces: bool
    sandbox_kind: str
    network: str | None
    bridges: tuple[str, ...]
    limits: tuple[str, ...]
    mount_ro: tuple[str, ...]
    home_files: tuple[str, ...]
    kill_grace: float
    retry_infra: bool
    duration_from: str
    force: bool
    executor: str
    ray_address: str | None
    cpus_per_trial: float
    memory_per_trial: str | None
    infra_retries: int

    def run_options(self, plan: Plan) -> RunOptions:
        """The harness's options for `plan` (a usage error names the option at fault)."""
        return _run_options(
            output=self.output,
            concurrency=self.concurrency,
            workdir=self.workdir,
            pass_env=_pass_env(self.pass_env, plan),
            metering=(self.allow_hosts, not self.no_meter),
            keep_workspaces=self.keep_workspaces,
            kill_grace=self.kill_grace,
            retry_infra=self.retry_infra,
            duration_from=self.duration_from,
            force=self.force,
            executor=self.executor,
            ray_address=self.ray_address,
            cpus_per_trial=self.cpus_per_trial,
            memory_per_trial=self.memory_per_trial,
            infra_retries=self.infra_retries,
            sandbox=_sandbox_options(
                self.sandbox_kind, self.network, self.mount_ro, self.bridges, self.limits
            ),
            home_files=_home_files(self.home_files),
        )


_FIELDS = tuple(field.name for field in dataclasses.fields(HarnessChoices))


#: The options, in the order `agent run --help` lists them.
_OPTIONS = [
    click.option(
        "--output",
        "-o",
        required=True,
        type=OutputDirectory(),
        help="The results directory: records.jsonl, plan.json, diffs/ and logs/ (rerun to resume).",
    ),
    concurrency_option("Trials at once.", default=1, maximum=MAX_CONCURRENCY),
    click.option(
        "--pass-env",
        "pass_env",
        multiple=True,
        metavar="[ARM:]NAME",
        help="Pass this variable (e.g. an API key) to every arm's agent, or with ARM: to that "
        "arm's only; it is never written anywhere. A key (a name ending in API_KEY or AUTH_TOKEN) "
        "reaches the agent as a per-trial credential the metering proxy swaps back. Repeatable.",
    ),
    click.option(
        "--allow-host",
        "allow_hosts",
        multiple=True,
        metavar="HOST[:PORT]",
        help="An upstream the metering proxy may forward model calls to, besides "
        "api.anthropic.com, api.openai.com and the suite's network.allow. Repeatable.",
    ),
    click.option(
        "--no-meter",
        is_flag=True,
        help="Do not route agents' model calls through the metering proxy: records then carry "
        "the agents' own reported usage (usage_source agent-reported).",
    ),
    click.option(
        "--workdir",
        type=click.Path(file_okay=False),
        help="Where trial directories are made (default: the system temp directory); must be "
        "outside any git repository.",
    ),
    click.option("--keep-workspaces", is_flag=True, help="Keep trial directories after each run."),
    click.option(
        "--sandbox",
        "sandbox_kind",
        default="bubblewrap",
        show_default=True,
        metavar="bubblewrap|none|PLUGIN",
        help="Where each trial's agent and acceptance check run: bubblewrap (the workspace, its "
        "own HOME and /tmp writable; no home, suite, results or other trial visible), none (on "
        "the host, unconfined; every record says so), or a sandbox registered in the "
        "plumbline.trial_sandboxes entry-point group.",
    ),
    click.option(
        "--network",
        type=click.Choice(["isolated", "host", "none"]),
        default=None,
        help="isolated (the default with a sandbox): each trial has its own network namespace and "
        "reaches only the --bridge ports (the harness's proxy); host: the host's network, an "
        "opt-out written in every record (the default with --sandbox none); none: no network.",
    ),
    click.option(
        "--bridge",
        "bridges",
        multiple=True,
        metavar="PORT=SOCKET",
        help="In an isolated trial, 127.0.0.1:PORT forwards to this host Unix socket (a proxy "
        "listening there); repeatable.",
    ),
    click.option(
        "--limit",
        "limits",
        multiple=True,
        metavar="NAME=VALUE",
        help="A kernel-enforced limit of each trial: memory=4G, processes=1024, cpu=3600 (CPU "
        "seconds per process), wall=SECONDS (lowers the task's timeout), disk=2G (/tmp, /dev/shm, "
        "any file written); repeatable. The limits and their mechanism are in every record.",
    ),
    click.option(
        "--mount-ro",
        "mount_ro",
        multiple=True,
        metavar="PATH",
        type=click.Path(exists=True),
        help="A host path every trial sees read-only (a toolchain, a cache); repeatable.",
    ),
    click.option(
        "--home-file",
        "home_files",
        multiple=True,
        metavar="SRC[:DEST]",
        help="Copy a file into every trial's HOME (DEST relative to HOME; default: SRC's path "
        "below your home); its content is redacted like --pass-env values. Repeatable.",
    ),
    click.option(
        "--kill-grace",
        type=FiniteFloatRange(min=0),
        default=5.0,
        show_default=True,
        help="Seconds between SIGTERM and SIGKILL when a time limit is hit.",
    ),
    click.option(
        "--retry-infra",
        is_flag=True,
        help="Also rerun units whose records are all infra failures.",
    ),
    choice_option(
        "--duration-from",
        choices=["agent", "harness"],
        default="harness",
        help="harness: the harness's wall clock; agent: the agent's own reported duration when "
        "it gives one (the other is kept beside it either way).",
    ),
    click.option("--force", is_flag=True, help="Add to an output directory of a changed suite."),
    choice_option(
        "--executor",
        choices=["local", "ray"],
        default="local",
        help="local: trials in threads of this process; ray: one Ray task per trial, on the "
        "cluster --ray-address names (see README, Scale out).",
    ),
    click.option(
        "--ray-address",
        metavar="HOST:PORT",
        help="With --executor ray: the cluster's address (default: $RAY_ADDRESS, else a new "
        "Ray instance on this machine).",
    ),
    click.option(
        "--cpus-per-trial",
        type=FiniteFloatRange(min=0, min_open=True),
        default=1.0,
        show_default=True,
        help="With --executor ray: CPUs each trial reserves on its node.",
    ),
    click.option(
        "--memory-per-trial",
        metavar="SIZE",
        help="With --executor ray: memory each trial reserves on its node (e.g. 4G, 512M).",
    ),
    click.option(
        "--infra-retries",
        type=click.IntRange(min=0),
        default=3,
        show_default=True,
        help="With --executor ray: how often a trial lost with its node is run again.",
    ),
]


def harness_options(function: F) -> F:
    """`--output`, `--concurrency` and the other options of how the harness runs trials, given
    to the command as one `harness: HarnessChoices` argument."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name) for name in _FIELDS}
        return function(*args, harness=HarnessChoices(**values), **kwargs)

    decorated: Any = wrapper
    for option in reversed(_OPTIONS):
        decorated = option(decorated)
    return cast(F, decorated)


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
