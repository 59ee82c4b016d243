"""Running a plan: one hermetic trial per (task, arm, repeat), one validated record each.

Per trial: a fresh trial directory and repository (`workspace`), the task's setup, the arm's
changes and setup, the initial commit, the agent under a time limit on its whole process group
(its output through pipes into capped logs), the diff of everything it changed, ignored files
included (saved as `diffs/<run_id>.patch`; `plumbline.agent.evidence`), protected files
flagged, then the acceptance command under its own time limit on a fresh copy holding exactly
that diff (the agent's directory is set aside as `agent-workspace`), protected files restored
unless the suite says otherwise, no bytecode of the agent's used. Anything the workspace's
content makes fail after the agent ran is the agent's failure, with the reason. `success` is
the acceptance command's exit status, and false for a run that timed out. Infrastructure
failures are classified where they happen (`infra_failure_kind`), never guessed from an exit
code.

Records are appended to `records.jsonl` only when a trial is complete (flushed and fsynced), so
a killed harness leaves no half-written record; a rerun skips the (task, arm, repeat) units
already recorded. Values of variables passed through with `--pass-env` reach the agent (of
every arm, or of one with `ARM:NAME`) and nothing else: they are redacted from every log and
diff the harness saves.

The agents' model calls go through the run's metering proxy (`agent.meter`, local executor):
each trial's allowed upstream URLs point at its own route, its keys are per-trial credentials,
and its record's tokens, model and cost are what the proxy counted, the agent's own report
beside them (`agent.metering`). The duration is the harness's clock unless `--duration-from
agent`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import ValidationError

from plumbline.agent.evidence import (
    Evidence,
    collect_evidence,
    evidence_base,
    judged_copy,
    nested_repositories,
    remove_special_files,
    runner_files,
)
from plumbline.agent.leases import (
    BASELINES_PREFIX,
    TRIAL_PREFIX,
    OutputBusy,
    Reclaimed,
    hold,
    reclaim,
    release,
    take,
)
from plumbline.agent.limits import limit_failure, limits_record
from plumbline.agent.limits_kernel import mechanism
from plumbline.agent.meter import (
    DEFAULT_ALLOW,
    KEY_NAME,
    Meter,
    MeteredCall,
    MeterError,
    TrialMeter,
)
from plumbline.agent.metering import usage_fields
from plumbline.agent.plan import Plan, TaskPlan, final_prompt, prompt_path
from plumbline.agent.process import ProcessRegistry, run_process, run_shell
from plumbline.agent.profiles import REPORTED_FIELDS, AgentCommand, count_runs_of
from plumbline.agent.safe_files import escaped_name, escaped_value, read_head, remove_tree
from plumbline.agent.sandbox import (
    ConfinedResult,
    Confinement,
    SandboxError,
    SandboxOptions,
    TrialSandbox,
    harness_path,
    home_file_secrets,
    install_paths,
    require,
    runtimes,
    without_entries_under,
)
from plumbline.agent.schedule import Unit
from plumbline.agent.suite import Arm, FileToAdd, Task
from plumbline.agent.workspace import (
    Entry,
    SourceSnapshot,
    Trial,
    WorkspaceError,
    agent_environment,
    check_trial_base,
    commit_all,
    create_trial,
    escaped_names,
    file_names,
    init_repository,
    protected_changes,
    restore_snapshot,
    save_baseline,
    shadowing_files,
    snapshot_protected,
    snapshot_source,
)
from plumbline.core.redaction import Redactor
from plumbline.core.registry import Registry
from plumbline.records.io import JsonlAppender, read_records, write_atomic, write_json_atomic
from plumbline.records.run_record import MAX_SECONDS, RunRecord

if TYPE_CHECKING:
    from plumbline.agent.sequential import SequentialMonitor

RECORDS = "records.jsonl"
PLAN = "plan.json"
DurationSource = Literal["agent", "harness"]
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
#: The most bytes of one trial log saved with the results (the rest is noted, not kept).
MAX_SAVED_LOG_BYTES = 16 * 1024 * 1024


class RunError(RuntimeError):
    """The run cannot start (a bad output or trial directory, a changed suite)."""


@dataclass
class TrialOutput:
    """What one trial gives its writer: the record (None: interrupted, nothing to record),
    the diff and the logs to save beside it (secrets already redacted), and a reason to stop
    the whole run (the trial base became unsafe) instead of a record."""

    record: dict[str, Any] | None
    diff: bytes | None = None
    logs: dict[str, bytes] = field(default_factory=dict)
    stop: str | None = None


class Materials:
    """Where a trial's inputs come from: the task's source, the arms' files, the prompts.

    Every task's source is read once, when the materials are made (plan time), into a
    content-addressed snapshot (`SourceSnapshot`: a tar archive and its sha256); each trial's
    workspace is extracted from it after its digest is checked, so a file planted in the
    suite's directory while trials run never reaches a later trial. Arm files and prompts are
    read from the suite's directory (the local executor); the Ray executor ships them to its
    workers as bytes (`plumbline.cluster.trials.ShippedMaterials`)."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        loaded = plan.loaded
        self.sources: dict[str, SourceSnapshot] = {}
        for task_id, task_plan in plan.tasks.items():
            source = task_plan.task.source
            try:
                if source.git:
                    assert task_plan.commit is not None
                    snapshot = snapshot_source(loaded.resolve(source.git), task_plan.commit)
                else:
                    snapshot = snapshot_source(loaded.resolve(source.dir or ""), None)
            except (OSError, WorkspaceError) as error:
                raise RunError(f"task {task_id}: reading its source: {error}") from None
            self.sources[task_id] = snapshot

    def copy_source(self, task_plan: TaskPlan, workspace: Path) -> None:
        self.sources[task_plan.task.id].extract(workspace)

    def file_content(self, item: FileToAdd) -> bytes:
        return self.plan.loaded.file_content(item)

    def prompt(self, task: Task, arm: Arm) -> str:
        return final_prompt(self.plan.loaded, task, arm)


@dataclass(frozen=True)
class RunOptions:
    """How to run a plan."""

    output: Path
    concurrency: int = 1
    workdir: Path | None = None
    pass_env: dict[str, str] = field(default_factory=dict)
    keep_workspaces: bool = False
    kill_grace: float = 5.0
    retry_infra: bool = False
    duration_from: DurationSource = "harness"
    force: bool = False
    #: Where trials run: the name of a registered `TrialExecutor` ("local": threads on this
    #: machine; "ray": tasks on a Ray cluster, registered by `plumbline.cluster`).
    executor: str = "local"
    ray: RayOptions | None = None
    #: How each trial is contained (`plumbline.agent.sandbox`).
    sandbox: SandboxOptions = field(default_factory=SandboxOptions)
    #: Files put in every trial's HOME (relative path -> content); secrets, redacted like
    #: `pass_env` values.
    home_files: dict[str, bytes] = field(default_factory=dict)
    #: Per arm, variables passed to that arm's agent only (arm -> name -> value): `--pass-env
    #: ARM:NAME` and the suite's arm `pass_env`. Redacted like `pass_env`.
    arm_pass_env: dict[str, dict[str, str]] = field(default_factory=dict)
    #: Upstream hosts the metering proxy forwards to, besides the suite's `network.allow` and
    #: `meter.DEFAULT_ALLOW` (`--allow-host`).
    allow_hosts: tuple[str, ...] = ()
    #: Route agents' model calls through the metering proxy (`agent.meter`); off, every
    #: record's usage is the agent's own report (`usage_source = "agent-reported"`).
    meter: bool = True

    def env_for(self, arm: str) -> dict[str, str]:
        """The passed-through variables of one arm's agent."""
        return {**self.pass_env, **self.arm_pass_env.get(arm, {})}

    def secrets(self) -> dict[str, str]:
        """Every passed-through value, of every arm (name -> value), for redaction."""
        found = dict(self.pass_env)
        for arm, values in sorted(self.arm_pass_env.items()):
            found.update({f"{arm}:{name}": value for name, value in values.items()})
        return found


@dataclass(frozen=True)
class RayOptions:
    """How the Ray executor runs trials: the cluster (None: start a local one, or the
    cluster `RAY_ADDRESS` names), what each trial reserves, and how often a trial lost with
    its node (or worker process) is run again before it is recorded as an infrastructure
    failure."""

    address: str | None = None
    cpus_per_trial: float = 1.0
    memory_per_trial: int | None = None
    infra_retries: int = 3


@dataclass(frozen=True)
class InfraRetry:
    """A trial lost with its node or worker process and run again (recorded once)."""

    task_id: str
    arm: str
    repeat: int
    attempt: int
    error: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "arm": self.arm,
            "repeat": self.repeat,
            "attempt": self.attempt,
            "error": self.error,
        }


@dataclass
class ArmTally:
    runs: int = 0
    successes: int = 0
    timed_out: int = 0
    infra_failures: dict[str, int] = field(default_factory=dict)
    protected_paths_modified: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "successes": self.successes,
            "timed_out": self.timed_out,
            "infra_failures": dict(sorted(self.infra_failures.items())),
            "protected_paths_modified": self.protected_paths_modified,
        }


@dataclass
class RunResult:
    """What a run did: units run now and skipped as already recorded, and a tally per arm."""

    output: Path
    records_path: Path
    scheduled: int
    ran: int
    skipped: int
    arms: dict[str, ArmTally]
    record_errors: list[str]
    reclaimed: list[Reclaimed] = field(default_factory=list)
    executor: str = "local"
    infra_retries: list[InfraRetry] = field(default_factory=list)
    #: The records counted: one per unit of the plan (infrastructure failures retried aside).
    records: list[RunRecord] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The run's summary: the start of `agent run`'s document (`agent.result`)."""
        from plumbline.agent.result import SCHEMA_VERSION

        return {
            "schema_version": SCHEMA_VERSION,
            "executor": self.executor,
            "output": str(self.output),
            "records": str(self.records_path),
            "scheduled": self.scheduled,
            "ran": self.ran,
            "skipped": self.skipped,
            "arms": {arm: tally.to_dict() for arm, tally in self.arms.items()},
            "record_errors": self.record_errors,
            "reclaimed": [
                {"run_id": r.run_id, "trial_root": str(r.trial_root), "killed": r.killed}
                for r in self.reclaimed
            ],
            "infra_retries": [retry.to_dict() for retry in self.infra_retries],
        }


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _safe(text: str) -> str:
    return _UNSAFE.sub("_", text)[:60]


def tally(records: list[RunRecord], arms: list[str]) -> dict[str, ArmTally]:
    """Runs, successes, timeouts, infrastructure failures by kind, and protected edits per arm."""
    result = {arm: ArmTally() for arm in arms}
    for record in records:
        arm = result.setdefault(record.arm, ArmTally())
        arm.runs += 1
        arm.successes += record.success and not record.timed_out
        arm.timed_out += record.timed_out
        if record.infra_failure:
            kind = record.infra_failure_kind or "unclassified"
            arm.infra_failures[kind] = arm.infra_failures.get(kind, 0) + 1
        arm.protected_paths_modified += bool(record.protected_paths_modified)
    return result


def read_plan_records(path: Path, plan: Plan) -> tuple[list[RunRecord], list[str]]:
    """The records of `path` the harness counts, and every other line as a problem.

    A record counts when it is valid, names a unit of the plan, and is that unit's first
    record that is not an infrastructure failure (infrastructure failures before it count,
    as `--retry-infra` writes them). A record of a unit the plan does not have, or a second
    result for a unit, was not written by this harness for this plan: it is reported
    (`file:line: field: problem`) and never counted.
    """
    if not path.exists():
        return [], []
    result = read_records([path], RunRecord)
    problems = [str(e) for e in result.errors]
    units = {unit.key for unit in plan.schedule}
    decided: dict[tuple[str, str, int], int] = {}
    counted: list[RunRecord] = []
    for record, where in zip(result.records, result.locations, strict=True):
        key = (record.task_id, record.arm, record.repeat)
        location = f"{where.path}:{where.line}"
        if key not in units:
            problems.append(
                f"{location}: task_id: {record.task_id} {record.arm} r{record.repeat} is not "
                "a unit of this run's plan; not counted"
            )
        elif key in decided:
            problems.append(
                f"{location}: repeat: a second result for {record.task_id} {record.arm} "
                f"r{record.repeat} (the first is at line {decided[key]}); not counted"
            )
        else:
            if not record.infra_failure:
                decided[key] = where.line
            counted.append(record)
    return counted, problems


@dataclass(frozen=True)
class _TrialScope:
    """One trial's directories, task and arm, and the environment its commands run with."""

    trial: Trial
    task_plan: TaskPlan
    arm: Arm
    env: dict[str, str]


@dataclass(frozen=True)
class _InitialState:
    """The workspace before the agent ran: its commit, the evidence base (every file, ignored
    ones too, committed in the pristine copy), the protected files' contents, its files."""

    commit: str
    base: str
    snapshot: dict[str, Entry]
    files: frozenset[str]


@dataclass(frozen=True)
class _AgentRun:
    """An agent's process that ran: the command, where its output went, and how it ended."""

    agent: AgentCommand
    argv: list[str]
    stdout: Path
    result: ConfinedResult
    #: The model calls the metering proxy counted; None: no route through it (`unmetered`).
    calls: list[MeteredCall] | None = None
    unmetered: str | None = None


class Harness:
    """Runs a plan's pending units (in schedule order, `concurrency` at a time)."""

    def __init__(
        self,
        plan: Plan,
        options: RunOptions,
        *,
        on_record: Callable[[RunRecord], None] | None = None,
        materials: Materials | None = None,
    ) -> None:
        self.plan = plan
        self.options = options
        self.on_record = on_record
        self.materials = materials or Materials(plan)
        self.registry = ProcessRegistry()
        self.redact = Redactor({**options.secrets(), **home_file_secrets(options.home_files)})
        self.base = (options.workdir or Path(tempfile.gettempdir())).resolve()
        loaded = plan.loaded
        #: What trials must never read: the suite and every task source, the results, other
        #: trials, the invoking user's home (masked wherever a read-only mount holds them).
        self.sources = tuple(
            loaded.resolve(task.source.git or task.source.dir or "").resolve()
            for task in loaded.suite.tasks
        )
        #: Of those, what no read-only mount may lie inside: the suite, the sources, the results.
        self.unmountable = (loaded.path.parent.resolve(), *self.sources, options.output.resolve())
        self.hidden = (*self.unmountable, self.base, Path.home().resolve())
        self._sandbox: TrialSandbox | None = None
        self.records_path = options.output / RECORDS
        self._lock = threading.Lock()
        self._appender: JsonlAppender | None = None
        self.pending_count = 0  # units this run executes (set when it starts)
        # Pristine copies of each trial's `.git`, outside every trial directory (set per run).
        self._baselines: Path | None = None
        # Where trial leases go (OUTPUT/running/; a Ray worker keeps its node's own).
        self.lease_root = options.output
        #: The run's metering proxy while trials run here (`metering`); None: not metered.
        self.meter: Meter | None = None
        #: `--until-decided`: the sequential verdict, updated after every record; once it is
        #: reached no new trial starts (trials already running finish and are recorded).
        self.monitor: SequentialMonitor | None = None

    @property
    def decided(self) -> bool:
        """No new trial should start: the sequential verdict (when monitored) is reached."""
        return self.monitor is not None and self.monitor.stopped

    # -- setup ---------------------------------------------------------------------------

    def _prepare(self) -> None:
        output = self.options.output
        if shutil.which("git") is None:
            raise RunError("git is not installed; the harness needs it for every workspace")
        output.mkdir(parents=True, exist_ok=True)
        if not self.base.is_dir():
            raise RunError(f"--workdir {self.base}: no such directory")
        try:
            check_trial_base(self.base)
        except WorkspaceError as error:
            raise RunError(str(error)) from None
        missing = [agent for agent in self.plan.agents.values() if agent is None]
        if missing:
            raise RunError("no agent command: give --agent, or `agent` in the suite")
        self._check_agents()
        try:
            self.sandbox()
        except SandboxError as error:
            raise RunError(str(error)) from None
        self._check_mounts()
        plan_file = output / PLAN
        if plan_file.exists() and not self.options.force:
            previous = json.loads(plan_file.read_text(encoding="utf-8"))
            changed = _changed(previous, self.plan)
            before = (previous.get("sandbox") or {}).get("kind")
            if before is not None and before != self.options.sandbox.kind:
                changed.append(
                    f"its trials ran with --sandbox {before}, these would run with "
                    f"--sandbox {self.options.sandbox.kind}"
                )
            if changed:
                raise RunError(
                    f"{output} holds runs of a different experiment ({'; '.join(changed)}); "
                    "use a new output directory, or --force to add to it anyway"
                )
        document = self.plan.to_dict()
        document["pass_env"] = sorted(self.options.pass_env)
        document["arm_pass_env"] = {
            arm: sorted(values) for arm, values in sorted(self.options.arm_pass_env.items())
        }
        document["meter"] = {
            "enabled": self.options.meter and self.options.executor == "local",
            "allow": list(self.allowed_upstreams()),
        }
        document["duration_from"] = self.options.duration_from
        document["sandbox"] = {
            "kind": self.options.sandbox.kind,
            "network": self.options.sandbox.network,
            "mounts": [str(path) for path in self.mounts()],
            "home_files": sorted(self.options.home_files),
        }
        write_json_atomic(plan_file, document)
        for task in self.plan.loaded.suite.tasks:
            for arm in self.plan.loaded.suite.arms:
                text = self.materials.prompt(task, arm)
                write_atomic(prompt_path(output, task.id, arm.name), text)

    def _check_agents(self) -> None:
        """Every arm's agent executable exists (on the PATH its trials get), before any trial
        starts: a typo is the user's to fix, not a run of infrastructure failures."""
        suite = self.plan.loaded.suite
        problems: list[str] = []
        for arm in suite.arms:
            agent = self.plan.agents[arm.name]
            assert agent is not None
            for task in suite.tasks:
                variables = {**suite.env, **task.env, **arm.env}
                path = variables.get("PATH", os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"))
                name = agent.executable
                if _find_executable(name, {"PATH": path}, Path.cwd()) is None:
                    where = "is not an executable file" if "/" in name else "is not on PATH"
                    problems.append(f"arm {arm.name}: agent executable {name!r} {where}")
                    break
        if problems:
            raise RunError("; ".join(problems) + "; no trial was started")

    def sandbox(self) -> TrialSandbox:
        """The trial sandbox the options name, checked once to work here (`SandboxError`)."""
        if self._sandbox is None:
            self._sandbox = require(self.options.sandbox)
        return self._sandbox

    def mounts(self) -> tuple[Path, ...]:
        """The extra read-only paths of every trial: `--mount-ro`, then the suite's `mounts`."""
        loaded = self.plan.loaded
        suite_mounts = (loaded.resolve(m).resolve() for m in loaded.suite.mounts)
        return tuple(
            dict.fromkeys([*(m.resolve() for m in self.options.sandbox.mount_ro), *suite_mounts])
        )

    def _check_mounts(self) -> None:
        """Refuse a read-only mount that is missing, or inside what trials must not see."""
        for mount in self.mounts():
            if not mount.exists():
                raise RunError(f"mount {mount}: no such file or directory")
            for hidden in self.unmountable:
                if mount.is_relative_to(hidden):
                    raise RunError(
                        f"mount {mount}: it is inside {hidden}, which trials must not see (the "
                        "suite, a task source or the results); mount a directory elsewhere"
                    )

    def pending(self, existing: list[RunRecord]) -> list[Unit]:
        """The scheduled units without a record (with `retry_infra`, also those whose every
        record is an infrastructure failure)."""
        done: dict[tuple[str, str, int], bool] = {}
        for record in existing:
            key = (record.task_id, record.arm, record.repeat)
            done[key] = done.get(key, False) or not record.infra_failure
        return [
            unit
            for unit in self.plan.schedule
            if unit.key not in done or (self.options.retry_infra and not done[unit.key])
        ]

    def run(self) -> RunResult:
        """Run the pending units, holding the output directory's lock throughout."""
        try:
            with hold(self.options.output):
                return self._run()
        except OutputBusy as error:
            raise RunError(str(error)) from None

    def _run(self) -> RunResult:
        executor = TRIAL_EXECUTORS.get(self.options.executor)(self)
        executor.connect()  # before anything is written: an unreachable cluster stops here
        try:
            self._prepare()
        except BaseException:
            executor.close()
            raise
        # Trials a killed harness left behind: end what still runs there before anything new.
        reclaimed = reclaim(self.options.output, keep_workspaces=self.options.keep_workspaces)
        # Opening the appender first repairs a partial last line left by a killed harness.
        self._appender = JsonlAppender(self.records_path)
        try:
            existing, _ = read_plan_records(self.records_path, self.plan)
            if self.monitor is not None:
                self.monitor.load(existing)
            pending = [] if self.decided else self.pending(existing)
            self.pending_count = len(pending)
            reclaimed += executor.reclaim()
            retries = executor.run(pending)
        finally:
            self._appender.close()
            executor.close()
        records, errors = read_plan_records(self.records_path, self.plan)
        arms = [arm.name for arm in self.plan.loaded.suite.arms]
        # Under --until-decided the units left when the verdict came never ran.
        ran = len(pending) if self.monitor is None else len(records) - len(existing)
        return RunResult(
            self.options.output,
            self.records_path,
            len(self.plan.schedule),
            ran,
            len(self.plan.schedule) - len(pending),
            tally(records, arms),
            errors,
            reclaimed,
            self.options.executor,
            retries,
            records,
        )

    def allowed_upstreams(self) -> tuple[str, ...]:
        """The upstream hosts the metering proxy forwards to."""
        network = self.plan.loaded.suite.network
        return (*DEFAULT_ALLOW, *network.allow, *self.options.allow_hosts)

    def meter_bridges(self) -> dict[int, Path]:
        """Where a trial with its own network namespace reaches the metering proxy: its
        loopback port inside the trial -> the proxy's Unix socket on the host (empty when the
        run is not metered). The agent's base URLs name `127.0.0.1:<port>` in either mode."""
        return {} if self.meter is None else {self.meter.port: self.meter.socket_path}

    @contextlib.contextmanager
    def metering(self) -> Iterator[None]:
        """Run the metering proxy while the trials of this block run (unless metering is off)."""
        if not self.options.meter:
            yield
            return
        try:
            meter = Meter(self.allowed_upstreams()).__enter__()
        except MeterError as error:
            raise RunError(str(error)) from None
        self.meter = meter
        try:
            yield
        finally:
            self.meter = None
            meter.close()

    @contextlib.contextmanager
    def baselines(self) -> Iterator[None]:
        """Keep the pristine `.git` copies of the trials run in this block in a fresh
        directory under the trial base (outside every trial directory), removed after."""
        self._baselines = Path(tempfile.mkdtemp(prefix=f"{BASELINES_PREFIX}.", dir=self.base))
        try:
            yield
        finally:
            remove_tree(self._baselines)

    # -- one trial -----------------------------------------------------------------------

    def run_unit(self, unit: Unit) -> None:
        """Run one unit here and record it (nothing when the run is being stopped, or, under
        --until-decided, once the verdict is reached)."""
        if self.registry.stopping.is_set() or self.decided:
            return
        output = self.run_trial(unit)
        if self.registry.stopping.is_set():
            return  # interrupted: no record, the unit runs again on resume
        self.finish(unit, output)

    def run_trial(self, unit: Unit) -> TrialOutput:
        """Run one unit where this harness runs (a thread here, or a Ray worker's process)."""
        try:
            # An agent of an earlier trial may have planted an instruction file (or a
            # repository) above the trial directories, where every later agent would read it.
            check_trial_base(self.base)
        except WorkspaceError as error:
            return TrialOutput(None, stop=str(error))
        return self._trial(unit)

    def finish(self, unit: Unit, output: TrialOutput, **extra: Any) -> None:
        """Save a trial's diff and logs, then append its record (this process alone writes
        the output directory); `extra` fields are added to the record."""
        if output.stop is not None:
            raise RunError(
                f"stopped before {unit.task_id} {unit.arm} r{unit.repeat}: {output.stop}. An "
                "agent of an earlier trial may have put it there; remove it, check the records "
                "of the trials that ran since, and rerun the same command to run the rest"
            )
        record = output.record
        if record is None:
            return  # interrupted: no record, the unit runs again on resume
        # What the agent reported and the paths it touched may hold a passed-through secret.
        record = escaped_value(self.redact.value(record))
        record.update(extra)
        if output.diff is not None and record.get("diff_file"):
            try:
                write_atomic(self.options.output / str(record["diff_file"]), output.diff)
            except OSError:
                # One trial's unwritable diff never costs its record, nor any other's.
                record["diff_file"] = None
        # Logs help a reviewer but must never cost the record.
        with contextlib.suppress(OSError):
            for name, data in output.logs.items():
                target = self.options.output / "logs" / str(record["run_id"]) / name
                write_atomic(target, data)
        try:
            model = RunRecord.model_validate(record)
        except ValidationError as error:
            # A value the agent reported that is not valid (a negative token count, say) is
            # unknown, not a reason to lose the run.
            bad = {str(d["loc"][0]) for d in error.errors() if d["loc"]}
            if bad <= set(REPORTED_FIELDS):
                record.update(dict.fromkeys(bad))
                if "duration_seconds" in bad:
                    record["duration_seconds"] = record.get("harness_duration_seconds") or 0.0
                    record["duration_source"] = "harness"
            try:
                model = RunRecord.model_validate(record)
            except ValidationError as again:
                model = RunRecord.model_validate(
                    self.infra_record(record, "harness_error", f"invalid record: {again}")
                )
        with self._lock:
            assert self._appender is not None
            self._appender.append(model)
            if self.monitor is not None:
                self.monitor.add(model)
            if self.on_record is not None:
                self.on_record(model)

    def base_record(self, unit: Unit, run_id: str) -> dict[str, Any]:
        plan = self.plan
        agent = plan.agents[unit.arm]
        task = plan.tasks[unit.task_id].task
        return {
            "task_id": unit.task_id,
            "arm": unit.arm,
            "repeat": unit.repeat,
            "run_id": run_id,
            "schedule_position": unit.position,
            "agent": agent.profile.name if agent else None,
            "success": False,
            "duration_seconds": 0.0,
            "duration_source": "harness",
            "total_cost_usd": None,
            "input_tokens": None,
            "output_tokens": None,
            "cache_read_tokens": None,
            "cache_write_tokens": None,
            "acceptance_command": task.acceptance,
            "prompt_file": str(prompt_path(Path("."), unit.task_id, unit.arm)),
            "started_at_utc": _now(),
            "sandbox": self.options.sandbox.kind,
            "network": self.options.sandbox.network,
            "limits": limits_record(self.options.sandbox.limits, mechanism()),
        }

    def infra_record(self, record: dict[str, Any], kind: str, reason: str) -> dict[str, Any]:
        record.update(
            {
                "success": False,
                "infra_failure": True,
                "infra_failure_kind": kind,
                "infra_failure_reason": self.redact.text(reason)[:2000],
                "ended_at_utc": _now(),
            }
        )
        return record

    def _agent_failure(self, record: dict[str, Any], reason: str) -> dict[str, Any]:
        """A run the agent failed without its acceptance result deciding (it broke its own
        workspace, say): a failure of the arm, not of the infrastructure."""
        record.update(
            {
                "success": False,
                "failure_reason": self.redact.text(reason)[:2000],
                "ended_at_utc": _now(),
            }
        )
        return record

    def _trial(self, unit: Unit) -> TrialOutput:
        run_id = f"{_safe(unit.task_id)}.{_safe(unit.arm)}.r{unit.repeat}.{uuid.uuid4().hex[:8]}"
        record = self.base_record(unit, run_id)
        started = time.monotonic()
        assert self._baselines is not None
        baseline = self._baselines / run_id
        output = TrialOutput(record)
        try:
            trial = create_trial(self.base, TRIAL_PREFIX)
            lease = take(self.lease_root, run_id, trial.root, baseline)
        except OSError as error:
            self.infra_record(record, "workspace_failed", f"creating the trial directory: {error}")
            return output
        try:
            output.record = self._in_trial(unit, trial, record, baseline, output)
            if output.record is not None and output.record.get("infra_failure"):
                output.record["duration_seconds"] = round(time.monotonic() - started, 3)
            return output
        except Exception as error:  # the harness itself failed: recorded, never dropped
            self.infra_record(record, "harness_error", f"{type(error).__name__}: {error}")
            record["duration_seconds"] = round(time.monotonic() - started, 3)
            output.record = record
            return output
        finally:
            # Logs help a reviewer but must never cost the record.
            with contextlib.suppress(OSError):
                output.logs = self._read_logs(trial)
            if self.options.keep_workspaces:
                record["workspace"] = str(trial.workspace)
            else:
                remove_tree(trial.root)
            remove_tree(baseline)
            release(lease)

    def _commands(
        self, commands: list[str], trial: Trial, env: dict[str, str], name: str
    ) -> tuple[int | None, str]:
        """Run setup commands in order; the first failing one's exit code and a reason."""
        for command in commands:
            result = run_shell(
                command,
                cwd=trial.workspace,
                env=env,
                timeout=self.plan.loaded.suite.setup_timeout_seconds,
                stdout=trial.logs / f"{name}.stdout",
                stderr=trial.logs / f"{name}.stderr",
                grace=self.options.kill_grace,
                registry=self.registry,
            )
            if result.start_error is not None:
                return None, f"{command!r} could not start: {result.start_error}"
            if result.timed_out:
                return result.exit_code, f"{command!r} timed out"
            if result.exit_code != 0:
                return result.exit_code, f"{command!r} exited with {result.exit_code}"
        return (0 if commands else None), ""

    def _apply_arm(self, arm: Arm, workspace: Path) -> None:
        for pattern in arm.remove_files:
            for path in sorted(workspace.glob(pattern), reverse=True):
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
        for item in arm.add_files:
            target = workspace / item.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(self.materials.file_content(item))

    def _in_trial(
        self,
        unit: Unit,
        trial: Trial,
        record: dict[str, Any],
        baseline: Path,
        output: TrialOutput,
    ) -> dict[str, Any] | None:
        scope = self.scope(unit, trial)
        initial = self._prepare_workspace(scope, record, baseline)
        if not isinstance(initial, _InitialState):
            return initial
        if self.registry.stopping.is_set():
            return None
        launched = self._run_agent(unit, scope, record)
        if not isinstance(launched, _AgentRun):
            return launched
        if self.registry.stopping.is_set():
            return None
        result = launched.result
        if result.start_error is not None:
            kind = (
                "agent_not_found"
                if isinstance(result.start_error, FileNotFoundError)
                else "agent_start_failed"
            )
            name = launched.argv[0]
            return self.infra_record(record, kind, f"starting {name!r}: {result.start_error}")
        self._record_agent_run(record, scope.task_plan.task, launched)
        limit_reason = None
        if result.limit_exceeded is not None:
            # A limit stopped the agent: its failure, named, never infrastructure's (after the
            # time limit the acceptance check still runs, as before, for the record).
            limits = self.options.sandbox.limits.for_task(scope.task_plan.timeout_seconds)
            limit_reason = limit_failure(result.limit_exceeded, limits, mechanism())
            record["failure_reason"] = limit_reason
        try:
            failure = self._judge_on_evidence(scope, record, baseline, initial, output)
        except (OSError, WorkspaceError, RecursionError, UnicodeError, ValueError) as error:
            # Whatever the agent left made it fail: its failure, never the infrastructure's
            # (so `--retry-infra` cannot run it again).
            failure = self._agent_failure(
                record,
                "the workspace the agent left could not be judged, so the acceptance check "
                f"did not run: {type(error).__name__}: {error}",
            )
        if failure is None and limit_reason is not None and result.limit_exceeded != "wall":
            failure = self._agent_failure(record, limit_reason)
        if failure is not None:
            return failure
        return self._accept(scope, record, agent_timed_out=result.timed_out)

    def scope(self, unit: Unit, trial: Trial) -> _TrialScope:
        """The unit's task and arm, in this trial, with the environment its commands get."""
        suite = self.plan.loaded.suite
        task_plan = self.plan.tasks[unit.task_id]
        task = task_plan.task
        arm = suite.arm(unit.arm)
        env = agent_environment(trial, {**suite.env, **task.env, **arm.env})
        return _TrialScope(trial, task_plan, arm, env)

    def _prepare_workspace(
        self, scope: _TrialScope, record: dict[str, Any], baseline: Path
    ) -> _InitialState | dict[str, Any]:
        """Source, task setup, arm files and setup, initial commit, saved initial state; or the
        infrastructure failure record of the step that failed."""
        trial, task, arm, env = scope.trial, scope.task_plan.task, scope.arm, scope.env
        workspace = trial.workspace
        try:
            self.materials.copy_source(scope.task_plan, workspace)
            init_repository(workspace, env)
        except (OSError, WorkspaceError) as error:
            return self.infra_record(record, "workspace_failed", f"copying the source: {error}")
        code, reason = self._commands(task.setup, trial, env, "setup")
        record["setup_exit_code"] = code
        if reason:
            return self.infra_record(record, "setup_failed", f"task setup: {reason}")
        try:
            self._apply_arm(arm, workspace)
        except OSError as error:
            return self.infra_record(record, "arm_setup_failed", f"arm files: {error}")
        code, reason = self._commands(arm.setup, trial, env, "arm-setup")
        record["arm_setup_exit_code"] = code
        if reason:
            return self.infra_record(record, "arm_setup_failed", f"arm setup: {reason}")
        try:
            initial = commit_all(workspace, env)
        except WorkspaceError as error:
            return self.infra_record(record, "workspace_failed", f"initial commit: {error}")
        try:
            # Once the agent runs, the workspace and its `.git` are the agent's: the protected
            # files are kept here and the repository where the agent does not work.
            snapshot = snapshot_protected(workspace, scope.task_plan.protected)
            files = file_names(workspace)
            save_baseline(workspace, baseline)
            base = evidence_base(workspace, baseline, env)
        except (OSError, WorkspaceError) as error:
            return self.infra_record(
                record, "workspace_failed", f"saving the initial state: {error}"
            )
        return _InitialState(initial, base, snapshot, files)

    def _run_agent(
        self, unit: Unit, scope: _TrialScope, record: dict[str, Any]
    ) -> _AgentRun | dict[str, Any]:
        """Write the prompt and run the agent under the task's time limit; or the
        infrastructure failure record when its executable is not found."""
        agent = self.plan.agents[unit.arm]
        assert agent is not None
        trial, workspace = scope.trial, scope.trial.workspace
        prompt_file = trial.root / "prompt.txt"
        prompt = self.materials.prompt(scope.task_plan.task, scope.arm)
        prompt_file.write_text(prompt, encoding="utf-8")
        argv, via_stdin = agent.argv(
            prompt_file.read_text(encoding="utf-8"), prompt_file, workspace
        )
        passed = self.options.env_for(unit.arm)
        agent_env = {**scope.env, **passed}
        executable = _find_executable(argv[0], agent_env, workspace)
        if executable is None:
            return self.infra_record(
                record, "agent_not_found", f"agent executable {argv[0]!r} not found on PATH"
            )
        metered = self.meter.open_trial() if self.meter is not None else None
        try:
            if metered is not None:
                keys = {name: value for name, value in passed.items() if KEY_NAME.search(name)}
                agent_env = metered.environment(agent_env, keys, agent.profile.name)
            result = self._launch(scope, argv, via_stdin, prompt_file, agent_env, metered)
        finally:
            calls = self.meter.close_trial(metered) if self.meter and metered else None
        if isinstance(result, dict):
            return self.infra_record(record, "sandbox_failed", result["reason"])
        stdout = trial.logs / "agent.stdout"
        if metered is None or not metered.routed:
            why = (
                "the agent's environment names no allowed upstream URL (suite network.allow, "
                "--allow-host): its model calls did not go through the metering proxy"
                if metered is not None
                else "metering is off (--no-meter, or an executor that does not meter)"
            )
            return _AgentRun(agent, argv, stdout, result, None, why)
        with contextlib.suppress(OSError):  # logs help a reviewer but must never cost the record
            _write_calls(trial.logs / "meter.jsonl", calls or [])
        return _AgentRun(agent, argv, stdout, result, calls or [])

    def _launch(
        self,
        scope: _TrialScope,
        argv: list[str],
        via_stdin: bool,
        prompt_file: Path,
        agent_env: dict[str, str],
        metered: TrialMeter | None,
    ) -> ConfinedResult | dict[str, str]:
        """Put the HOME files in place and run the agent in its sandbox; or why it could not."""
        trial = scope.trial
        executable = _find_executable(argv[0], agent_env, trial.workspace)
        assert executable is not None
        try:
            self._put_home_files(trial, metered)
            sandbox = self.sandbox()
        except (OSError, SandboxError) as error:
            return {"reason": f"preparing the trial: {error}"}
        confinement = self.agent_confinement(
            scope, Path(executable), _argument_files(argv[1:]), prompt_file, agent_env
        )
        return self.run_confined(
            sandbox,
            argv,
            confinement,
            timeout=self.options.sandbox.limits.timeout(scope.task_plan.timeout_seconds),
            stdout=trial.logs / "agent.stdout",
            stderr=trial.logs / "agent.stderr",
            stdin=prompt_file if via_stdin else None,
        )

    def _put_home_files(self, trial: Trial, metered: TrialMeter | None = None) -> None:
        """The `--home-file` files, into this trial's HOME (readable by the agent only); with
        a metered trial, their upstream URLs routed and keys swapped like the environment's."""
        for relative, content in self.options.home_files.items():
            if metered is not None:
                content = metered.rewrite_bytes(content)
            target = trial.home / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
            target.chmod(0o600)

    def agent_confinement(
        self,
        scope: _TrialScope,
        executable: Path,
        argument_files: list[Path],
        prompt_file: Path,
        env: dict[str, str],
    ) -> Confinement:
        """The agent's walls: its workspace and HOME writable; the runtimes, its install
        prefix, the files its command line names (a script given to an interpreter), its
        prompt file and the mounts read-only; the network as asked."""
        trial = scope.trial
        prefixes, links = install_paths(executable, env.get("PATH", ""))
        # An install prefix inside what trials must not see (an agent script kept in the
        # suite's directory) is replaced by the executable file alone.
        read_only = [
            executable.resolve() if any(p.is_relative_to(r) for r in self.unmountable) else p
            for p in prefixes
            if not p.is_relative_to(trial.workspace)
        ]
        read_only += [
            f for f in argument_files if not any(f.is_relative_to(r) for r in self.unmountable)
        ]
        return Confinement(
            writable=(trial.workspace, trial.home),
            read_only=tuple(
                p for p in (*runtimes(), *read_only, prompt_file, *self.mounts()) if p.exists()
            ),
            hidden=self.hidden,
            network=self.options.sandbox.network == "host",
            cwd=trial.workspace,
            environment={**env, "TMPDIR": "/tmp"} if self._confines() else env,
            symlinks=links,
            tmp_bytes=self.options.sandbox.tmp_bytes,
            bridges=self._bridges(),
            limits=self.options.sandbox.limits,
        )

    def _bridges(self) -> tuple[tuple[int, Path], ...]:
        """The ports a trial with its own network namespace reaches on its loopback: the
        user's `--bridge`s and the metering proxy (none on the host's network)."""
        if self.options.sandbox.network != "isolated":
            return ()
        return (*self.options.sandbox.trial_bridges(), *self.meter_bridges().items())

    def _confines(self) -> bool:
        return self.options.sandbox.kind != "none"

    def run_confined(
        self,
        sandbox: TrialSandbox,
        argv: list[str],
        confinement: Confinement,
        *,
        timeout: float,
        stdout: Path,
        stderr: Path,
        stdin: Path | None = None,
    ) -> ConfinedResult:
        """Run `argv` in `sandbox` under a time limit on everything it starts, in its limits."""
        try:
            launch = sandbox.launch(argv, confinement)
        except OSError as error:
            return ConfinedResult(None, False, 0.0, OSError(f"making the trial's cgroup: {error}"))
        try:
            result = run_process(
                launch.argv,
                cwd=launch.cwd or confinement.cwd,
                env=launch.env,
                timeout=timeout,
                stdout=stdout,
                stderr=stderr,
                stdin=stdin,
                grace=self.options.kill_grace,
                registry=self.registry,
                pass_fds=launch.pass_fds,
            )
            if result.start_error is None and not launch.started():
                problem = "its cgroup, limits or network bridges could not be set up"
                return ConfinedResult(None, False, result.duration_seconds, OSError(problem))
            return ConfinedResult.of(result, launch.exceeded(result), launch.mechanism)
        finally:
            launch.close()

    def _record_agent_run(self, record: dict[str, Any], task: Task, run: _AgentRun) -> None:
        """Record how the agent's process ended and what the agent reported about its run."""
        result = run.result
        record["agent_exit_code"] = result.exit_code
        record["timed_out"] = result.timed_out
        record["harness_duration_seconds"] = round(result.duration_seconds, 3)
        report = run.agent.read(run.stdout)
        if report.problem is not None:
            record["agent_report_error"] = self.redact.text(report.problem)[:2000]
        reported = dict(report.fields)
        record["acceptance_cmd_count"] = count_runs_of(task.acceptance, report.commands)
        reported_duration = reported.pop("duration_seconds", None)
        record.update({k: v for k, v in reported.items() if v is not None})
        record.update(usage_fields(run.calls, reported, run.unmetered))
        own = reported_duration if isinstance(reported_duration, int | float) else None
        if own is not None and 0 <= own <= MAX_SECONDS:
            record["agent_duration_seconds"] = float(own)
        if self.options.duration_from == "agent" and "agent_duration_seconds" in record:
            record["duration_seconds"] = record["agent_duration_seconds"]
            record["duration_source"] = "agent"
        else:
            record["duration_seconds"] = round(result.duration_seconds, 3)
            record["duration_source"] = "harness"

    def _judge_on_evidence(
        self,
        scope: _TrialScope,
        record: dict[str, Any],
        baseline: Path,
        initial: _InitialState,
        output: TrialOutput,
    ) -> dict[str, Any] | None:
        """Flag the protected files the agent changed, save its changes as the diff, and put
        exactly those changes on a fresh copy of the initial state where the acceptance check
        runs (protected files restored when the suite says so); the agent's failure record
        when the check cannot run, else None."""
        trial = scope.trial
        workspace, protected_globs = trial.workspace, scope.task_plan.protected
        # The agent may have removed its logs directory along with everything else.
        with contextlib.suppress(OSError):
            trial.logs.mkdir(parents=True, exist_ok=True)
        protected = protected_changes(workspace, initial.snapshot, protected_globs)
        record["protected_paths_modified"] = escaped_names(protected)
        record["protected_paths_restored"] = False
        if not _usable(workspace):
            return self._agent_failure(
                record,
                f"the agent removed or replaced its workspace {workspace}, so the acceptance "
                "check could not run",
            )
        nested = nested_repositories(workspace)
        if nested:
            return self._agent_failure(
                record,
                f"the workspace holds nested git repositories ({', '.join(nested)}), whose "
                "files cannot be part of the saved diff; the acceptance check did not run",
            )
        remove_special_files(workspace)
        try:
            evidence = collect_evidence(workspace, baseline, initial.base, scope.env)
        except (OSError, WorkspaceError) as error:
            return self._agent_failure(
                record,
                "the agent's changes could not be saved as a diff, so the acceptance check "
                f"did not run: {error}",
            )
        output.diff = self.redact.bytes(evidence.patch)
        record["diff_file"] = (Path("diffs") / f"{record['run_id']}.patch").as_posix()
        # The agent's directory is kept aside; the check runs where it worked, on a copy.
        os.rename(workspace, trial.root / "agent-workspace")
        workspace.mkdir()
        judged_copy(baseline, workspace, initial.commit, evidence, scope.env)
        failure = self._restore_protected(scope, record, initial.snapshot)
        return failure or self._shadowing_failure(scope, record, initial, baseline, evidence)

    def _restore_protected(
        self, scope: _TrialScope, record: dict[str, Any], snapshot: dict[str, Entry]
    ) -> dict[str, Any] | None:
        """Put the protected files back in the judged copy (when the suite says so); the
        agent's failure record when they cannot be, else None."""
        if not self.plan.loaded.suite.restore_protected:
            return None
        workspace = scope.trial.workspace
        changed = protected_changes(workspace, snapshot, scope.task_plan.protected)
        try:
            restore_snapshot(workspace, snapshot, changed)
        except OSError as error:
            # Never judge the run on files the agent rewrote: it fails, with the reason.
            return self._agent_failure(
                record,
                "protected files could not be restored, so the acceptance check did not "
                f"run: {error}",
            )
        record["protected_paths_restored"] = bool(record["protected_paths_modified"])
        return None

    def _shadowing_failure(
        self,
        scope: _TrialScope,
        record: dict[str, Any],
        initial: _InitialState,
        baseline: Path,
        evidence: Evidence,
    ) -> dict[str, Any] | None:
        """List the files that would change what the acceptance command imports or runs
        (`shadowing_files`, `runner_files`); the run fails naming them unless the suite
        allows them."""
        allowed = self.plan.loaded.suite.allow_shadowing
        judged = scope.trial.workspace
        found = shadowing_files(judged, initial.files, allowed, protected=list(initial.snapshot))
        acceptance = scope.task_plan.task.acceptance
        found += runner_files(
            judged, baseline, initial.base, evidence, acceptance, scope.env, allowed
        )
        record["shadowing_files"] = sorted(set(found))
        if not found:
            return None
        return self._agent_failure(
            record,
            "the workspace holds new files that would shadow what the acceptance command "
            f"imports or runs: {', '.join(record['shadowing_files'])}; the acceptance check did "
            "not run (a suite that expects them lists them in allow_shadowing)",
        )

    def _acceptance_confinement(self, scope: _TrialScope) -> Confinement:
        """The judge's walls: a fresh sandbox on the workspace, with a fresh HOME and /tmp
        and the harness's PATH (the suite's or task's when they set one), never the agent's
        HOME, processes or environment."""
        trial, task = scope.trial, scope.task_plan.task
        home = trial.root / "acceptance-home"
        home.mkdir(exist_ok=True)
        tmp = trial.root / "acceptance-tmp"
        tmp.mkdir(exist_ok=True)
        variables = {**self.plan.loaded.suite.env, **task.env}
        path = variables.get("PATH", harness_path())
        variables["PATH"] = without_entries_under(path, [trial.workspace, trial.home, trial.tmp])
        env = agent_environment(trial, variables, home=home)
        env["TMPDIR"] = "/tmp" if self._confines() else str(tmp)
        # No bytecode from the workspace is ever used: Python reads (and, never, writes) its
        # cache under an empty prefix, not the workspace's `__pycache__` directories.
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTHONPYCACHEPREFIX"] = f"{env['TMPDIR']}/plumbline-no-bytecode"
        return Confinement(
            writable=(trial.workspace, home),
            read_only=tuple(p for p in (*runtimes(), *self.mounts()) if p.exists()),
            hidden=self.hidden,
            network=self.options.sandbox.network == "host",
            cwd=trial.workspace,
            environment=env,
            tmp_bytes=self.options.sandbox.tmp_bytes,
            limits=self.options.sandbox.limits,
        )

    def _accept(
        self, scope: _TrialScope, record: dict[str, Any], *, agent_timed_out: bool
    ) -> dict[str, Any] | None:
        """Run the acceptance check, in a fresh sandbox, and complete the record (None: the
        run is being stopped)."""
        trial, workspace = scope.trial, scope.trial.workspace
        acceptance = self.run_confined(
            self.sandbox(),
            ["/bin/sh", "-c", scope.task_plan.task.acceptance],
            self._acceptance_confinement(scope),
            timeout=scope.task_plan.acceptance_timeout_seconds,
            stdout=trial.logs / "acceptance.stdout",
            stderr=trial.logs / "acceptance.stderr",
        )
        if self.registry.stopping.is_set():
            return None
        if acceptance.start_error is not None and not _usable(workspace):
            return self._agent_failure(
                record,
                f"the acceptance check could not start in {workspace} (the agent's processes "
                f"removed or replaced it): {acceptance.start_error}",
            )
        if acceptance.start_error is not None:
            return self.infra_record(
                record, "harness_error", f"acceptance could not start: {acceptance.start_error}"
            )
        record["acceptance_exit_code"] = acceptance.exit_code
        record["acceptance_timed_out"] = acceptance.timed_out
        record["acceptance_duration_seconds"] = round(acceptance.duration_seconds, 3)
        record["success"] = (
            acceptance.exit_code == 0 and not acceptance.timed_out and not agent_timed_out
        )
        record["ended_at_utc"] = _now()
        return record

    def _read_logs(self, trial: Trial) -> dict[str, bytes]:
        """The trial's non-empty logs by name, secrets redacted (before they leave here)."""
        if not trial.logs.is_dir() or trial.logs.is_symlink():
            return {}
        found: dict[str, bytes] = {}
        for log in sorted(trial.logs.iterdir()):
            try:
                data, size = read_head(log, MAX_SAVED_LOG_BYTES)
            except OSError:
                continue  # not a regular file: nothing the harness wrote
            if size > len(data):
                data += f"\n[plumbline: {size - len(data)} more bytes not kept]\n".encode()
            if data:
                found[escaped_name(log.name)] = self.redact.bytes(data)
        return found


class TrialExecutor(Protocol):
    """Where a harness's pending units run; `Harness.finish` writes each result. An executor
    registers a factory that takes the harness in `TRIAL_EXECUTORS` (or in the
    `plumbline.trial_executors` entry-point group)."""

    def connect(self) -> None:
        """Reach the machines trials run on, before anything is written."""

    def reclaim(self) -> list[Reclaimed]:
        """End what a killed run left on those machines."""

    def run(self, pending: list[Unit]) -> list[InfraRetry]:
        """Run the units in schedule order; the trials run again after infrastructure loss."""

    def close(self) -> None:
        """Release what `connect` took."""


ExecutorFactory = Callable[["Harness"], TrialExecutor]

TRIAL_EXECUTORS: Registry[ExecutorFactory] = Registry("trial executor", "plumbline.trial_executors")


@TRIAL_EXECUTORS.register("local")
class LocalExecutor:
    """Runs the units in threads of this process, `concurrency` at a time."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness

    def connect(self) -> None:
        return None

    def reclaim(self) -> list[Reclaimed]:
        return []  # the harness reclaims its own output's leases

    def run(self, pending: list[Unit]) -> list[InfraRetry]:
        harness = self.harness
        with (
            harness.metering(),
            harness.baselines(),
            ThreadPoolExecutor(max_workers=harness.options.concurrency) as pool,
        ):
            futures: list[Future[None]] = [pool.submit(harness.run_unit, u) for u in pending]
            try:
                for future in futures:
                    future.result()
            except BaseException:
                harness.registry.kill_all()
                for future in futures:
                    future.cancel()
                raise
        return []

    def close(self) -> None:
        return None


def _changed(previous: dict[str, Any], plan: Plan) -> list[str]:
    """How the plan an output directory was written with differs from `plan`, in words."""
    old = previous.get("resume")
    if not isinstance(old, dict):  # written before agents and sources were part of it
        old = {"suite_sha256": previous.get("suite", {}).get("sha256")}
    new = plan.resume
    found: list[str] = []
    if old.get("suite_sha256") != new["suite_sha256"]:
        found.append("the suite's prompts, files or settings changed")
    for arm, command in new["agents"].items():
        before = (old.get("agents") or {}).get(arm, command) if "agents" in old else command
        if before != command:
            found.append(f"arm {arm}'s agent was {before!r}, now {command!r}")
    for task, source in new["sources"].items():
        before = (old.get("sources") or {}).get(task, source) if "sources" in old else source
        if before != source:
            found.append(f"task {task}'s repository content changed")
    return found


def _argument_files(arguments: list[str]) -> list[Path]:
    """The existing files an agent's command line names by absolute path (`python
    /opt/agent/run.py`): the sandbox shows them read-only."""
    return [Path(a).resolve() for a in arguments if os.path.isabs(a) and os.path.isfile(a)]


def _usable(workspace: Path) -> bool:
    """Whether the workspace is still a real directory the acceptance check can run in."""
    return workspace.is_dir() and not workspace.is_symlink()


def _find_executable(name: str, env: dict[str, str], cwd: Path) -> str | None:
    if "/" in name:
        path = Path(name) if Path(name).is_absolute() else cwd / name
        return str(path) if path.is_file() and _executable(path) else None
    return shutil.which(name, path=env.get("PATH"))


def _executable(path: Path) -> bool:
    return os.access(path, os.X_OK)


__all__ = [
    "PLAN",
    "RECORDS",
    "ArmTally",
    "Harness",
    "InfraRetry",
    "Materials",
    "RayOptions",
    "RunError",
    "RunOptions",
    "RunResult",
    "TrialOutput",
    "read_plan_records",
    "tally",
]


def _write_calls(path: Path, calls: list[MeteredCall]) -> None:
    """The metered calls of a trial, one JSON object a line (saved with its logs)."""
    path.write_text("".join(json.dumps(call.to_dict()) + "\n" for call in calls), "utf-8")
