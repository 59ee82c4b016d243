"""What a run of a plan is made of: its options, its inputs (`Materials`), what one trial
gives its writer (`TrialOutput`), and the run's summary (`RunResult`).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from plumbline.agent.leases import Reclaimed
from plumbline.agent.meter import MeteredCall
from plumbline.agent.plan import Plan, TaskPlan, final_prompt
from plumbline.agent.profiles import AgentCommand
from plumbline.agent.sandbox import ConfinedResult, SandboxOptions
from plumbline.agent.suite import Arm, FileToAdd, Task
from plumbline.agent.workspace import Entry, SourceSnapshot, Trial, WorkspaceError, snapshot_source
from plumbline.records.run_record import RunRecord

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
        return asdict(self)


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


@dataclass(frozen=True)
class TrialScope:
    """One trial's directories, task and arm, and the environment its commands run with."""

    trial: Trial
    task_plan: TaskPlan
    arm: Arm
    env: dict[str, str]


@dataclass(frozen=True)
class InitialState:
    """The workspace before the agent ran: its commit, the evidence base (every file, ignored
    ones too, committed in the pristine copy), the protected files' contents, its files."""

    commit: str
    base: str
    snapshot: dict[str, Entry]
    files: frozenset[str]


@dataclass(frozen=True)
class AgentRun:
    """An agent's process that ran: the command, where its output went, and how it ended."""

    agent: AgentCommand
    argv: list[str]
    stdout: Path
    result: ConfinedResult
    #: The model calls the metering proxy counted; None: no route through it (`unmetered`).
    calls: list[MeteredCall] | None = None
    unmetered: str | None = None


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def slug(text: str) -> str:
    return _UNSAFE.sub("_", text)[:60]
