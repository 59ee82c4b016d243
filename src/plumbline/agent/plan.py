"""The plan of a run: what each arm changes, the exact prompts, and the schedule.

`arm_differences` lists every way the arms differ (setup commands, files added or removed and
their content digests, environment variables, prompt additions, agent command). Anything not
listed is identical across arms: the prompt scaffolding, the repository, the task setup, the
acceptance command and the time limits.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plumbline.agent.profiles import AgentCommand, resolve_agent
from plumbline.agent.schedule import Order, Unit, build_schedule
from plumbline.agent.suite import Arm, LoadedSuite, SuiteError, Task, tree_digest
from plumbline.agent.workspace import WorkspaceError, resolve_revision
from plumbline.core.limits import MAX_AGENT_RUNS
from plumbline.sandbox.env import SECRET_NAME

PLAN_VERSION = "plumbline.agent-plan/1"


def final_prompt(loaded: LoadedSuite, task: Task, arm: Arm) -> str:
    """The prompt the agent gets: the arm's prefix, the suite's scaffolding around the task
    prompt, the arm's suffix (concatenated exactly as written)."""
    body = loaded.suite.prompt_template.replace("{prompt}", loaded.prompt(task))
    return f"{arm.prompt_prefix}{body}{arm.prompt_suffix}"


def _env_value(name: str, value: str) -> str:
    if SECRET_NAME.search(name):
        return f"<hidden, sha256 {hashlib.sha256(value.encode()).hexdigest()[:12]}>"
    return value


def describe_arm(loaded: LoadedSuite, arm: Arm, agent: AgentCommand | None) -> dict[str, Any]:
    """Everything an arm sets, in a form that compares equal when two arms do the same."""
    files = [
        {
            "path": item.path,
            "sha256": hashlib.sha256(loaded.file_content(item)).hexdigest(),
            "bytes": len(loaded.file_content(item)),
        }
        for item in arm.add_files
    ]
    return {
        "setup": list(arm.setup),
        "add_files": files,
        "remove_files": list(arm.remove_files),
        "env": {name: _env_value(name, value) for name, value in sorted(arm.env.items())},
        "prompt_prefix": arm.prompt_prefix,
        "prompt_suffix": arm.prompt_suffix,
        "agent": None if agent is None else f"{agent.template} (profile {agent.profile.name})",
    }


@dataclass(frozen=True)
class Difference:
    """One thing that differs between arms, with each arm's value."""

    field: str
    values: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "values": self.values}


def arm_differences(
    loaded: LoadedSuite, agents: dict[str, AgentCommand | None]
) -> list[Difference]:
    """Every field on which at least two arms differ (environment variables one by one)."""
    described = {
        arm.name: describe_arm(loaded, arm, agents.get(arm.name)) for arm in loaded.suite.arms
    }
    differences: list[Difference] = []
    names = list(described)
    for key in ("setup", "add_files", "remove_files", "prompt_prefix", "prompt_suffix", "agent"):
        values = {name: described[name][key] for name in names}
        if any(values[name] != values[names[0]] for name in names):
            differences.append(Difference(key, values))
    variables = sorted({v for d in described.values() for v in d["env"]})
    for variable in variables:
        values = {name: described[name]["env"].get(variable) for name in names}
        if any(values[name] != values[names[0]] for name in names):
            differences.append(Difference(f"env.{variable}", values))
    return differences


@dataclass(frozen=True)
class TaskPlan:
    task: Task
    commit: str | None
    timeout_seconds: float
    acceptance_timeout_seconds: float
    protected: list[str]

    def to_dict(self, loaded: LoadedSuite) -> dict[str, Any]:
        source = self.task.source
        return {
            "id": self.task.id,
            "source": {"git": str(loaded.resolve(source.git)), "rev": source.rev}
            if source.git
            else {"dir": str(loaded.resolve(source.dir or ""))},
            "commit": self.commit,
            "timeout_seconds": self.timeout_seconds,
            "acceptance": self.task.acceptance,
            "acceptance_timeout_seconds": self.acceptance_timeout_seconds,
            "protected_paths": self.protected,
            "tags": list(self.task.tags),
        }


@dataclass
class Plan:
    """A suite resolved for one run: tasks with their source commits, agents, schedule."""

    loaded: LoadedSuite
    tasks: dict[str, TaskPlan]
    agents: dict[str, AgentCommand | None]
    repeats: int
    seed: int
    order: Order
    schedule: list[Unit]
    differences: list[Difference] = field(default_factory=list)
    #: What records of this plan depend on beyond the suite (see `resume_identity`).
    resume: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        suite = self.loaded.suite
        return {
            "schema_version": PLAN_VERSION,
            "suite": {
                "name": suite.name,
                "path": str(self.loaded.path),
                "sha256": self.loaded.digest,
                "control": suite.control,
            },
            "repeats": self.repeats,
            "seed": self.seed,
            "order": self.order,
            "arms": {
                arm.name: describe_arm(self.loaded, arm, self.agents.get(arm.name))
                for arm in suite.arms
            },
            "differences": [d.to_dict() for d in self.differences],
            "identical_across_arms": [
                "repository source and revision",
                "task setup commands",
                "prompt scaffolding (prompt_template and task prompt)",
                "acceptance command and protected paths",
                "time limits",
                "environment apart from the listed variables",
            ],
            "tasks": [plan.to_dict(self.loaded) for plan in self.tasks.values()],
            "schedule": [unit.to_dict() for unit in self.schedule],
            "resume": self.resume,
        }


def resume_identity(
    loaded: LoadedSuite, tasks: dict[str, TaskPlan], agents: dict[str, AgentCommand | None]
) -> dict[str, Any]:
    """Everything records in an output directory depend on: the suite (its file, prompts and
    added files), each arm's resolved agent command, and each task's repository content (a
    directory's content digest, a git source's commit). A rerun into the same directory must
    match it, or the records would mix two experiments."""
    identity: dict[str, Any] = {
        "suite_sha256": loaded.digest,
        "agents": {
            arm: None if agent is None else f"{agent.template} (profile {agent.profile.name})"
            for arm, agent in agents.items()
        },
        "sources": {
            task_id: {"git_commit": plan.commit}
            if plan.task.source.git
            else {"dir_sha256": tree_digest(loaded.resolve(plan.task.source.dir or ""))}
            for task_id, plan in tasks.items()
        },
    }
    text = json.dumps(identity, sort_keys=True).encode("utf-8")
    return {**identity, "sha256": hashlib.sha256(text).hexdigest()}


def _protected(loaded: LoadedSuite, task: Task) -> list[str]:
    globs = [*loaded.suite.protected_paths, *task.protected_paths, *task.acceptance_files]
    return list(dict.fromkeys(globs))


def make_plan(
    loaded: LoadedSuite,
    agent: AgentCommand | None,
    *,
    repeats: int | None = None,
    seed: int = 0,
    order: Order = "random",
) -> Plan:
    """Resolve sources and agents and build the schedule (problems as `file: field: why`)."""
    suite = loaded.suite
    problems: list[str] = []
    tasks: dict[str, TaskPlan] = {}
    for i, task in enumerate(suite.tasks):
        commit = None
        if task.source.git:
            try:
                commit = resolve_revision(loaded.resolve(task.source.git), task.source.rev)
            except WorkspaceError as error:
                problems.append(f"{loaded.path}: tasks.{i}.source: {error}")
        tasks[task.id] = TaskPlan(
            task,
            commit,
            task.timeout_seconds or suite.timeout_seconds,
            task.acceptance_timeout_seconds or suite.acceptance_timeout_seconds,
            _protected(loaded, task),
        )
    # A relative executable path means what it means where the user typed it (the command
    # line: the current directory; the suite: the suite file's directory), never the trial's.
    default = agent.anchored(Path.cwd()) if agent is not None else None
    here = loaded.path.parent
    if default is None and suite.agent:
        default = resolve_agent(suite.agent).anchored(here)
    agents: dict[str, AgentCommand | None] = {}
    for arm in suite.arms:
        agents[arm.name] = resolve_agent(arm.agent).anchored(here) if arm.agent else default
    if problems:
        raise SuiteError(problems)
    count = repeats or suite.repeats
    runs = len(suite.tasks) * len(suite.arms) * count
    if runs > MAX_AGENT_RUNS:
        raise SuiteError(
            [
                f"{loaded.path}: {len(suite.tasks)} tasks × {len(suite.arms)} arms × {count} "
                f"repeats = {runs:,} runs, more than the {MAX_AGENT_RUNS:,} one plan may hold; "
                "use fewer repeats or split the suite"
            ]
        )
    schedule = build_schedule(
        [t.id for t in suite.tasks], [a.name for a in suite.arms], count, seed=seed, order=order
    )
    return Plan(
        loaded,
        tasks,
        agents,
        count,
        seed,
        order,
        schedule,
        arm_differences(loaded, agents),
        resume_identity(loaded, tasks, agents),
    )


def prompt_path(results: Path, task_id: str, arm: str) -> Path:
    return results / "prompts" / task_id / f"{arm}.txt"


__all__ = [
    "PLAN_VERSION",
    "Difference",
    "Plan",
    "TaskPlan",
    "arm_differences",
    "describe_arm",
    "final_prompt",
    "make_plan",
    "prompt_path",
    "resume_identity",
]
