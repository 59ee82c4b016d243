"""Judging a trial on exactly the evidence: the saved diff, a fresh copy holding only the agent's
changes with the protected files restored, the shadowing files, the acceptance check in its
own sandbox (`TrialJudging`).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from plumbline.agent.evidence import (
    Evidence,
    collect_evidence,
    judged_copy,
    nested_repositories,
    remove_special_files,
    runner_files,
)
from plumbline.agent.recording import TrialRecording
from plumbline.agent.run_types import InitialState, TrialOutput, TrialScope, utc_now
from plumbline.agent.sandbox import Confinement
from plumbline.agent.trial_paths import harness_path, runtimes, without_entries_under
from plumbline.agent.workspace import (
    Entry,
    WorkspaceError,
    agent_environment,
    escaped_names,
    protected_changes,
    restore_snapshot,
    shadowing_files,
)


class TrialJudging(TrialRecording):
    """The steps after the agent ran: the evidence, the judged copy, the acceptance check."""

    def _judge_on_evidence(
        self,
        scope: TrialScope,
        record: dict[str, Any],
        baseline: Path,
        initial: InitialState,
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
        if not workspace_usable(workspace):
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
        self, scope: TrialScope, record: dict[str, Any], snapshot: dict[str, Entry]
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
        scope: TrialScope,
        record: dict[str, Any],
        initial: InitialState,
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

    def _acceptance_confinement(self, scope: TrialScope) -> Confinement:
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
        self, scope: TrialScope, record: dict[str, Any], *, agent_timed_out: bool
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
        if acceptance.start_error is not None and not workspace_usable(workspace):
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
        record["ended_at_utc"] = utc_now()
        return record


def workspace_usable(workspace: Path) -> bool:
    """Whether the workspace is still a real directory the acceptance check can run in."""
    return workspace.is_dir() and not workspace.is_symlink()
