"""Agent trials as Ray tasks; the driver stays the single writer of the output directory.

Each pending unit becomes one Ray task, submitted in schedule order, reserving
`cpus_per_trial` CPUs (and `memory_per_trial` bytes) of a node. The task builds the trial's
hermetic workspace on its node (under `--workdir`, or that node's temp directory), runs the
agent and the acceptance check exactly as the local executor does, and returns the record,
the diff and the logs, with secrets already redacted. The driver saves them and appends the
record, so resuming, the interleaved schedule, `schedule_position` and redaction are the
local executor's. Each trial's model calls go through a metering proxy the worker runs for that
trial (`agent.meter`, the local executor's proxy): its record's tokens, model and cost are what
the proxy counted, and the real keys stay on the worker (the agent gets per-trial credentials).

What travels, and how: the plan and every task's source (a tar archive of the commit, or of
the directory) and arm files are put in Ray's object store once and fetched once per node.
The values of `--pass-env` variables are task arguments taken from the driver's environment:
they are not in the plan, the runtime environment or any object that could be spilled to disk,
and nothing a task returns holds them.

Faults: a task whose node or worker process dies (`ray.exceptions.RayError` other than an
error raised by the trial code) is submitted again, up to `infra_retries` times, and counted
(`RunResult.infra_retries`, the record's `infra_retries`); the lost attempt has no record, so
the unit is recorded exactly once. The processes a lost trial leaves on a surviving node are
ended by the next trial there: every node keeps leases of its running trials under
`<workdir>/plumbline-ray-leases/<output>/`, and a trial first reclaims those whose worker is
gone. An
interrupted driver (Ctrl-C, SIGTERM) sets the run's stop signal (`plumbline.cluster.stop`) and
waits a little: every trial ends its own processes. A
driver killed with SIGKILL takes its tasks with it (Ray ends an owner's workers); rerunning the
same command reclaims every node's leftovers first and runs the units without a record.
"""

from __future__ import annotations

import hashlib
import socket
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import plumbline
from plumbline.agent.harness import (
    Harness,
    InfraRetry,
    Materials,
    RayOptions,
    RunError,
    RunOptions,
    TrialOutput,
)
from plumbline.agent.leases import Reclaimed, reclaim
from plumbline.agent.plan import Plan, final_prompt
from plumbline.agent.sandbox import SandboxError, SandboxOptions, require
from plumbline.agent.schedule import Unit
from plumbline.agent.suite import Arm, FileToAdd, Task
from plumbline.cluster.connect import ClusterError, connect, disconnect, require_ray
from plumbline.cluster.stop import new_stop_signal, send_stop, stop_requested, watch

if TYPE_CHECKING:
    from ray import ObjectRef

#: Under the trial base of every node: the leases of the trials its Ray workers run.
NODE_LEASES = "plumbline-ray-leases"
#: What a trial lost with its node is recorded as once its retries are spent.
LOST_KIND = "node_lost"


class ShippedMaterials(Materials):
    """A plan's inputs as bytes, for workers that cannot read the suite's directory: each
    task's source snapshot (as every executor has it), the arms' files, the final prompts."""

    def __init__(self, plan: Plan) -> None:
        super().__init__(plan)
        loaded = plan.loaded
        self.files: dict[str, bytes] = {}
        for arm in loaded.suite.arms:
            for item in arm.add_files:
                if item.source is not None:
                    self.files[item.source] = loaded.file_content(item)
        self.prompts = {
            (task.id, arm.name): final_prompt(loaded, task, arm)
            for task in loaded.suite.tasks
            for arm in loaded.suite.arms
        }

    def file_content(self, item: FileToAdd) -> bytes:
        if item.content is not None:
            return item.content.encode("utf-8")
        assert item.source is not None
        return self.files[item.source]

    def prompt(self, task: Task, arm: Arm) -> str:
        return self.prompts[(task.id, arm.name)]


@dataclass(frozen=True)
class WorkerSettings:
    """The run options a trial needs on its node (never the secrets: those are separate)."""

    workdir: str | None
    #: The driver's output directory's own subdirectory of each node's leases.
    scope: str
    keep_workspaces: bool
    kill_grace: float
    duration_from: str
    #: The sandbox every trial runs in, the same on every node (checked when the run starts).
    sandbox: SandboxOptions = field(default_factory=SandboxOptions)
    #: Route each trial's model calls through a metering proxy on its node (`agent.meter`),
    #: as the local executor does; the upstream hosts it forwards to besides the suite's.
    meter: bool = True
    allow_hosts: tuple[str, ...] = ()


@dataclass
class NodeCheck:
    """What a node said when the run started: its plumbline version and the leftovers of
    trials an earlier, killed run left there."""

    node: str
    version: str
    reclaimed: list[Reclaimed] = field(default_factory=list)
    #: Why this node cannot run the run's trial sandbox (None: it can).
    sandbox_problem: str | None = None


def _node_base(settings: WorkerSettings) -> Path:
    return Path(settings.workdir or tempfile.gettempdir()).resolve()


def _leases(settings: WorkerSettings) -> Path:
    return _node_base(settings) / NODE_LEASES / settings.scope


def lease_scope(output: Path) -> str:
    """The name of an output directory's leases on every node (one driver holds it)."""
    where = f"{socket.gethostname()}:{output.resolve()}"
    return hashlib.sha256(where.encode()).hexdigest()[:16]


def _node_name() -> str:
    ray = require_ray()
    context = ray.get_runtime_context()
    return f"{ray.util.get_node_ip_address()} {context.get_node_id()[:12]}"


def check_node(settings: WorkerSettings) -> NodeCheck:
    """On one node: its plumbline version; end the trials a killed run into the same output
    left there. The driver holds the output's lock, so every lease of its scope is a leftover
    (its Ray worker may not have been ended yet)."""
    found = reclaim(_leases(settings), keep_workspaces=settings.keep_workspaces)
    try:
        require(settings.sandbox)
        problem = None
    except SandboxError as error:
        problem = str(error)
    return NodeCheck(_node_name(), plumbline.__version__, found, problem)


def run_trial(
    plan: Plan,
    materials: Materials,
    settings: WorkerSettings,
    secrets: dict[str, str],
    home_files: dict[str, bytes],
    unit: Unit,
    stop: Any,
) -> TrialOutput:
    """On a worker: run one unit in a fresh trial directory of this node; nothing once the
    run's `stop` signal (a `StopSignal` actor) is set, and its processes end when it is."""
    if stop_requested(stop):
        return TrialOutput(None)
    base = _node_base(settings)
    leases = _leases(settings)
    # Trials of workers that died here (with a node's Ray processes, or a killed driver's).
    reclaim(leases, keep_workspaces=settings.keep_workspaces, orphans_only=True)
    options = RunOptions(
        output=leases,
        workdir=base,
        pass_env=secrets,
        keep_workspaces=settings.keep_workspaces,
        kill_grace=settings.kill_grace,
        duration_from="harness" if settings.duration_from == "harness" else "agent",
        sandbox=settings.sandbox,
        home_files=home_files,
        meter=settings.meter,
        allow_hosts=settings.allow_hosts,
    )
    harness = Harness(plan, options, materials=materials)
    with harness.metering(), harness.baselines(), watch(stop, harness.registry.kill_all):
        try:
            output = harness.run_trial(unit)
        except BaseException:
            # Interrupted on the worker (its process is ending): nothing of the trial keeps
            # running.
            harness.registry.kill_all()
            raise
    if output.record is not None:
        output.record["node"] = _node_name()
    return output


class RayExecutor:
    """Runs a harness's pending units as Ray tasks; `harness.finish` writes each result. The
    `ray` trial executor (entry point `plumbline.trial_executors`)."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self.options = harness.options.ray or RayOptions()
        self._connected = False
        options = harness.options
        self.settings = WorkerSettings(
            workdir=str(options.workdir) if options.workdir else None,
            scope=lease_scope(options.output),
            keep_workspaces=options.keep_workspaces,
            kill_grace=options.kill_grace,
            duration_from=options.duration_from,
            sandbox=options.sandbox,
            meter=options.meter,
            allow_hosts=options.allow_hosts,
        )

    def connect(self) -> None:
        try:
            self._connected = connect(self.options.address)
        except ClusterError as error:
            raise RunError(str(error)) from None

    def close(self) -> None:
        disconnect(self._connected)
        self._connected = False

    def reclaim(self) -> list[Reclaimed]:
        """On every alive node: check its plumbline version, end what a killed run left."""
        ray = require_ray()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        task = ray.remote(check_node)
        nodes = [node for node in ray.nodes() if node.get("Alive")]
        refs = [
            task.options(
                num_cpus=0,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False),
            ).remote(self.settings)
            for node in nodes
        ]
        checks: list[NodeCheck] = []
        for ref in refs:
            try:
                checks.append(ray.get(ref))
            except ray.exceptions.RayTaskError as error:
                raise RunError(
                    f"a node of the Ray cluster cannot run plumbline: {error}; install "
                    f"plumbline {plumbline.__version__} with the [ray] extra on every node"
                ) from None
            except ray.exceptions.RayError:
                continue  # a node that died meanwhile runs no trial
        unsandboxed = [c for c in checks if c.sandbox_problem is not None]
        if unsandboxed:
            raise RunError(
                "every node must run the trial sandbox: "
                + "; ".join(f"node {c.node}: {c.sandbox_problem}" for c in unsandboxed)
            )
        wrong = [c for c in checks if c.version != plumbline.__version__]
        if wrong:
            raise RunError(
                "the nodes must run this plumbline version "
                f"({plumbline.__version__}): "
                + ", ".join(f"node {c.node} runs {c.version}" for c in wrong)
            )
        return [found for check in checks for found in check.reclaimed]

    def run(self, pending: list[Unit]) -> list[InfraRetry]:
        """Run the units (schedule order), writing each result as it comes; the retries of
        trials lost with their node."""
        ray = require_ray()
        harness = self.harness
        task = ray.remote(run_trial)
        submit_options: dict[str, Any] = {
            "num_cpus": self.options.cpus_per_trial,
            "max_retries": 0,  # a lost trial is run again here, where it is counted
            "retry_exceptions": False,
        }
        if self.options.memory_per_trial is not None:
            submit_options["memory"] = self.options.memory_per_trial
        task = task.options(**submit_options)
        stop = new_stop_signal()
        plan_ref = ray.put(harness.plan)
        materials_ref = ray.put(ShippedMaterials(harness.plan))
        home_files = dict(harness.options.home_files)

        def submit(unit: Unit) -> ObjectRef[TrialOutput]:
            # Only this unit's arm's variables leave the driver (`--pass-env ARM:NAME`).
            secrets = harness.options.env_for(unit.arm)
            ref: ObjectRef[TrialOutput] = task.remote(
                plan_ref, materials_ref, self.settings, secrets, home_files, unit, stop
            )
            return ref

        # With a sequential verdict to reach (`--until-decided`), at most `concurrency` trials
        # are submitted at once, so that none starts once it is reached; otherwise all at once.
        window = harness.options.concurrency if harness.monitor is not None else len(pending)
        waiting = list(pending)
        running: dict[ObjectRef[TrialOutput], tuple[Unit, int]] = {}

        def top_up() -> None:
            while waiting and len(running) < max(window, 1) and not harness.decided:
                unit = waiting.pop(0)
                running[submit(unit)] = (unit, 0)

        top_up()
        retries: list[InfraRetry] = []
        try:
            while running:
                ready, _ = ray.wait(list(running), num_returns=1)
                unit, lost = running.pop(ready[0])
                try:
                    output: TrialOutput = ray.get(ready[0])
                except ray.exceptions.RayTaskError as error:
                    # The trial code itself failed on the worker: recorded, like locally.
                    output = self._failure(unit, "harness_error", _first_line(error))
                except ray.exceptions.RayError as error:
                    reason = f"{type(error).__name__}: {_first_line(error)}"
                    retry = InfraRetry(unit.task_id, unit.arm, unit.repeat, lost + 1, reason)
                    if lost < self.options.infra_retries:
                        retries.append(retry)
                        running[submit(unit)] = (unit, lost + 1)
                        continue
                    output = self._failure(
                        unit, LOST_KIND, f"lost {lost + 1} time(s) with its node: {reason}"
                    )
                harness.finish(unit, output, **({"infra_retries": lost} if lost else {}))
                top_up()
        except BaseException:
            self._stop(stop, list(running))
            raise
        return retries

    def _failure(self, unit: Unit, kind: str, reason: str) -> TrialOutput:
        harness = self.harness
        name = f"{unit.task_id}.{unit.arm}.r{unit.repeat}".replace("/", "_")
        record = harness.base_record(unit, f"{name}.{uuid.uuid4().hex[:8]}")
        return TrialOutput(harness.infra_record(record, kind, reason))

    def _stop(self, stop: Any, refs: list[ObjectRef[TrialOutput]]) -> None:
        """Stop the submitted trials (each ends its processes) and wait a little for them.
        Trials that have not started yet return at once when they do."""
        ray = require_ray()
        send_stop(stop)
        if refs:
            ray.wait(refs, num_returns=len(refs), timeout=self.harness.options.kill_grace + 5)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    return (lines[-1] if lines else type(error).__name__)[:500]


__all__ = [
    "LOST_KIND",
    "NODE_LEASES",
    "NodeCheck",
    "RayExecutor",
    "ShippedMaterials",
    "WorkerSettings",
    "check_node",
    "lease_scope",
    "run_trial",
]
