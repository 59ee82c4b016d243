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

The agents' model calls go through the run's metering proxy (`agent.meter`; on Ray, one per trial
on its node):
each trial's allowed upstream URLs point at its own route, its keys are per-trial credentials,
and its record's tokens, model and cost are what the proxy counted, the agent's own report
beside them (`agent.metering`). The duration is the harness's clock unless `--duration-from
agent`.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from plumbline.agent.executors import TRIAL_EXECUTORS
from plumbline.agent.leases import OutputBusy, hold, reclaim
from plumbline.agent.plan import Plan, prompt_path
from plumbline.agent.recording import read_plan_records, tally
from plumbline.agent.run_types import (
    PLAN,
    RECORDS,
    ArmTally,
    InfraRetry,
    Materials,
    RayOptions,
    RunError,
    RunOptions,
    RunResult,
    TrialOutput,
)
from plumbline.agent.sandbox import SandboxError
from plumbline.agent.schedule import Unit
from plumbline.agent.unit_run import UnitRunner, find_executable
from plumbline.agent.workspace import WorkspaceError, check_trial_base
from plumbline.records.io import JsonlAppender, write_atomic, write_json_atomic
from plumbline.records.run_record import RunRecord


class Harness(UnitRunner):
    """Runs a plan's pending units (in schedule order, `concurrency` at a time)."""

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
            "enabled": self.options.meter,
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
                if find_executable(name, {"PATH": path}, Path.cwd()) is None:
                    where = "is not an executable file" if "/" in name else "is not on PATH"
                    problems.append(f"arm {arm.name}: agent executable {name!r} {where}")
                    break
        if problems:
            raise RunError("; ".join(problems) + "; no trial was started")

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
