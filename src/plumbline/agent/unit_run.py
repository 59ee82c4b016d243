"""Running one unit: its trial directory, the workspace's preparation, the agent in its sandbox
(through the metering proxy), then the judging and the record (`UnitRunner`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

from plumbline.agent.evidence import evidence_base
from plumbline.agent.judging import TrialJudging
from plumbline.agent.leases import TRIAL_PREFIX, release, take
from plumbline.agent.limits import limit_failure
from plumbline.agent.limits_kernel import mechanism
from plumbline.agent.meter import KEY_NAME, MeteredCall, TrialMeter
from plumbline.agent.process import run_shell
from plumbline.agent.run_types import AgentRun, InitialState, TrialOutput, TrialScope, slug
from plumbline.agent.safe_files import remove_tree
from plumbline.agent.sandbox import (
    ConfinedResult,
    Confinement,
    SandboxError,
)
from plumbline.agent.schedule import Unit
from plumbline.agent.suite import Arm
from plumbline.agent.trial_paths import install_paths, runtimes
from plumbline.agent.workspace import (
    Trial,
    WorkspaceError,
    agent_environment,
    check_trial_base,
    commit_all,
    create_trial,
    file_names,
    init_repository,
    save_baseline,
    snapshot_protected,
)


class UnitRunner(TrialJudging):
    """Runs one unit of the plan in a fresh trial directory and returns what to record."""

    def run_unit(self, unit: Unit) -> None:
        """Run one unit here and record it (nothing when the run is being stopped, or, under
        --until-decided, once the verdict is reached)."""
        if self.registry.stopping.is_set() or self.decided:
            return
        try:
            output = self.run_trial(unit)
        except Exception as error:  # a harness bug in this trial: its record says so, no other's
            output = TrialOutput(self.harness_failure(unit, error))
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

    def _trial(self, unit: Unit) -> TrialOutput:
        run_id = f"{slug(unit.task_id)}.{slug(unit.arm)}.r{unit.repeat}.{uuid.uuid4().hex[:8]}"
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

    def _setup(
        self, commands: list[str], scope: TrialScope, record: dict[str, Any], step: str, what: str
    ) -> dict[str, Any] | None:
        """Run a setup step's commands (`step`: `setup` or `arm-setup`, which names its logs),
        recording the exit code as `<step>_exit_code`; the `<step>_failed` infrastructure
        record when one fails (its reason starting with `what`), else None."""
        code, reason = self._commands(commands, scope, step)
        key = step.replace("-", "_")
        record[f"{key}_exit_code"] = code
        if not reason:
            return None
        return self.infra_record(record, f"{key}_failed", f"{what}: {reason}")

    def _commands(
        self, commands: list[str], scope: TrialScope, name: str
    ) -> tuple[int | None, str]:
        """Run setup commands in order; the first failing one's exit code and a reason."""
        trial = scope.trial
        for command in commands:
            result = run_shell(
                command,
                cwd=trial.workspace,
                env=scope.env,
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
        self, unit: Unit, trial: Trial, record: dict[str, Any], baseline: Path, output: TrialOutput
    ) -> dict[str, Any] | None:
        scope = self.scope(unit, trial)
        initial = self._prepare_workspace(scope, record, baseline)
        if not isinstance(initial, InitialState):
            return initial
        if self.registry.stopping.is_set():
            return None
        launched = self._run_agent(unit, scope, record)
        if not isinstance(launched, AgentRun):
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

    def scope(self, unit: Unit, trial: Trial) -> TrialScope:
        """The unit's task and arm, in this trial, with the environment its commands get."""
        suite = self.plan.loaded.suite
        task_plan = self.plan.tasks[unit.task_id]
        task = task_plan.task
        arm = suite.arm(unit.arm)
        env = agent_environment(trial, {**suite.env, **task.env, **arm.env})
        return TrialScope(trial, task_plan, arm, env)

    def _prepare_workspace(
        self, scope: TrialScope, record: dict[str, Any], baseline: Path
    ) -> InitialState | dict[str, Any]:
        """Source, task setup, arm files and setup, initial commit, saved initial state; or the
        infrastructure failure record of the step that failed."""
        trial, task, arm, env = scope.trial, scope.task_plan.task, scope.arm, scope.env
        workspace = trial.workspace
        try:
            self.materials.copy_source(scope.task_plan, workspace)
            init_repository(workspace, env)
        except (OSError, WorkspaceError) as error:
            return self.infra_record(record, "workspace_failed", f"copying the source: {error}")
        failed = self._setup(task.setup, scope, record, "setup", "task setup")
        if failed is not None:
            return failed
        try:
            self._apply_arm(arm, workspace)
        except OSError as error:
            return self.infra_record(record, "arm_setup_failed", f"arm files: {error}")
        failed = self._setup(arm.setup, scope, record, "arm-setup", "arm setup")
        if failed is not None:
            return failed
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
        return InitialState(initial, base, snapshot, files)

    def _run_agent(
        self, unit: Unit, scope: TrialScope, record: dict[str, Any]
    ) -> AgentRun | dict[str, Any]:
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
        executable = find_executable(argv[0], agent_env, workspace)
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
                else "metering is off (--no-meter)"
            )
            return AgentRun(agent, argv, stdout, result, None, why)
        with contextlib.suppress(OSError):  # logs help a reviewer but must never cost the record
            _write_calls(trial.logs / "meter.jsonl", calls or [])
        return AgentRun(agent, argv, stdout, result, calls or [])

    def _launch(
        self,
        scope: TrialScope,
        argv: list[str],
        via_stdin: bool,
        prompt_file: Path,
        agent_env: dict[str, str],
        metered: TrialMeter | None,
    ) -> ConfinedResult | dict[str, str]:
        """Put the HOME files in place and run the agent in its sandbox; or why it could not."""
        trial = scope.trial
        executable = find_executable(argv[0], agent_env, trial.workspace)
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
        scope: TrialScope,
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


def _argument_files(arguments: list[str]) -> list[Path]:
    """The existing files an agent's command line names by absolute path (`python
    /opt/agent/run.py`): the sandbox shows them read-only."""
    return [Path(a).resolve() for a in arguments if os.path.isabs(a) and os.path.isfile(a)]


def find_executable(name: str, env: dict[str, str], cwd: Path) -> str | None:
    if "/" in name:
        path = Path(name) if Path(name).is_absolute() else cwd / name
        return str(path) if path.is_file() and _executable(path) else None
    return shutil.which(name, path=env.get("PATH"))


def _executable(path: Path) -> bool:
    return os.access(path, os.X_OK)


def _write_calls(path: Path, calls: list[MeteredCall]) -> None:
    """The metered calls of a trial, one JSON object a line (saved with its logs)."""
    path.write_text("".join(json.dumps(call.to_dict()) + "\n" for call in calls), "utf-8")
