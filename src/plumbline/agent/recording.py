"""Recording trials: the record every trial starts with, infrastructure and agent failures, what
the agent's process and report add, and writing the record, diff and logs (`TrialRecording`);
reading a run's records back (`read_plan_records`, `tally`).
"""

from __future__ import annotations

import contextlib
import uuid
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from plumbline.agent.harness_state import HarnessState
from plumbline.agent.limits import limits_record
from plumbline.agent.limits_kernel import mechanism
from plumbline.agent.metering import usage_fields
from plumbline.agent.plan import Plan, prompt_path
from plumbline.agent.profiles import REPORTED_FIELDS, count_runs_of
from plumbline.agent.run_types import (
    MAX_SAVED_LOG_BYTES,
    AgentRun,
    ArmTally,
    RunError,
    TrialOutput,
    slug,
    utc_now,
)
from plumbline.agent.safe_files import escaped_name, escaped_value, read_head
from plumbline.agent.schedule import Unit
from plumbline.agent.suite import Task
from plumbline.agent.workspace import Trial
from plumbline.records.io import read_records, write_atomic
from plumbline.records.run_record import MAX_SECONDS, RunRecord


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


class TrialRecording(HarnessState):
    """Builds and writes the trials' records (this process alone writes the output)."""

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
        try:
            model = self._completed(output, extra)
        except Exception as error:  # a harness bug here costs this trial's result, no other's
            failed = self.harness_failure(unit, error)
            failed.update(extra)
            model = RunRecord.model_validate(failed)
        with self._lock:
            assert self._appender is not None
            self._appender.append(model)
            if self.monitor is not None:
                self.monitor.add(model)
            if self.on_record is not None:
                self.on_record(model)

    def _completed(self, output: TrialOutput, extra: dict[str, Any]) -> RunRecord:
        """The trial's record made valid, with its diff and logs saved beside it."""
        record = output.record
        assert record is not None
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
        return model

    def harness_failure(self, unit: Unit, error: BaseException) -> dict[str, Any]:
        """The record of a trial the harness itself failed on (a bug of plumbline, an error it
        did not expect): an infrastructure failure of that trial alone, with the error, so
        the other trials go on and `--retry-infra` runs it again."""
        run_id = f"{slug(unit.task_id)}.{slug(unit.arm)}.r{unit.repeat}.{uuid.uuid4().hex[:8]}"
        try:
            record = self.base_record(unit, run_id)
        except Exception:  # the failing part may be the record's own start
            usage = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
            record = {
                "task_id": unit.task_id,
                "arm": unit.arm,
                "repeat": unit.repeat,
                "run_id": run_id,
                "schedule_position": unit.position,
                "success": False,
                "duration_seconds": 0.0,
                "total_cost_usd": None,
                **dict.fromkeys(usage),
            }
        reason = (
            f"the harness failed on this trial ({type(error).__name__}: {error}); the other "
            "trials went on, and --retry-infra runs this one again"
        )
        return dict(escaped_value(self.infra_record(record, "harness_error", reason)))

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
            "started_at_utc": utc_now(),
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
                "ended_at_utc": utc_now(),
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
                "ended_at_utc": utc_now(),
            }
        )
        return record

    def _record_agent_run(self, record: dict[str, Any], task: Task, run: AgentRun) -> None:
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
