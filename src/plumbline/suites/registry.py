"""Which Inspect tasks to run for a suite: the built-in `sa-bench`, or a user's suite TOML.

A suite TOML (see `plumbline.leaderboard.suite`) lists, per category, the Inspect tasks that feed
it. For `plumbline run`, each entry of a category's `tasks` must say where the task comes from:

    tasks = ["evals/support.py@triage"]   # one @task in a file (relative to the TOML)
    tasks = ["evals/support.py"]          # every @task in that file
    tasks = ["practice_exam"]             # an SA Bench task, by name
    tasks = ["inspect_evals/gpqa_diamond"] # a task registered by an installed package

The leaderboard matches logs to categories by task name, so file references are rewritten to
the task names they define before the suite is validated; glob patterns, which name no task,
cannot be run. `resolve_suite` returns the validated `Suite` together with the task references.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plumbline.leaderboard.suite import (
    BUILTIN_SUITES,
    Suite,
    SuiteError,
    load_suite,
    parse_suite,
    read_suite_toml,
)

if TYPE_CHECKING:
    from inspect_ai import Task

SA_BENCH_TASKS: dict[str, str] = {
    "practice_exam": "plumbline.suites.sa_bench.tasks:practice_exam",
    "architecture_design": "plumbline.suites.sa_bench.tasks:architecture_design",
    "cdk_synth": "plumbline.suites.sa_bench.tasks:cdk_synth",
}
"""SA Bench's tasks by name: "module:function" of the @task functions."""

#: The original SA Bench project's task names, recognised in logs by the built-in suite but not
#: run by plumbline (plumbline runs its own versions of these tasks).
ORIGINAL_SA_BENCH_TASKS = frozenset(
    {
        "aws_solutions_architect",
        "architecture_interpretation",
        "architecture_design_llm_judge",
        "aws_cdk_synth",
        "aws_cdk_synth_local",
    }
)

JUDGED_TASK = "architecture_design"
JUDGE_SCORER = "llm_judge_scorer"

_GLOB_CHARACTERS = frozenset("*?[")


@dataclass(frozen=True)
class TaskRef:
    """One Inspect task a suite runs.

    `name` is the task name its logs record (what the leaderboard matches); `spec` is what
    Inspect is given: an absolute `file.py@name`, or a registered task name. `builtin` tasks
    are SA Bench's own, built in-process with the run's seed, limit, epochs and judge.
    """

    name: str
    spec: str
    builtin: bool
    categories: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunnableSuite:
    """A validated suite and the tasks that produce its logs."""

    suite: Suite
    tasks: tuple[TaskRef, ...]
    source: str
    builtin: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def judgeable(self) -> bool:
        """Whether the suite runs SA Bench's architecture_design task (the one a judge scores)."""
        return any(ref.builtin and ref.name == JUDGED_TASK for ref in self.tasks)

    def with_judge(self) -> RunnableSuite:
        """The suite whose architecture category reads the LLM judge's score, not the heuristic.

        Each category reads exactly one scorer: with a judge the task records both scores, and
        the leaderboard must use the judge's, never a blend.
        """
        if not self.judgeable:
            raise SuiteError(
                self.source,
                [f"--judge scores the {JUDGED_TASK} task, which this suite does not run"],
            )
        categories = tuple(
            category.model_copy(update={"scorers": (JUDGE_SCORER,)})
            if any(category.matches(ref.name) for ref in self.tasks if ref.name == JUDGED_TASK)
            else category
            for category in self.suite.categories
        )
        suite = self.suite.model_copy(update={"categories": categories})
        return RunnableSuite(suite, self.tasks, self.source, self.builtin, list(self.notes))


def task_functions(path: Path) -> list[str]:
    """The names of the @task functions defined in a Python file (without importing it).

    A `@task(name="...")` decorator's name wins over the function name, as in Inspect.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[str] = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            label = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if label != "task":
                continue
            name = node.name
            if isinstance(decorator, ast.Call):
                for keyword in decorator.keywords:
                    if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                        name = str(keyword.value.value)
            names.append(name)
    return names


def _file_refs(entry: str, base: Path, where: str, problems: list[str]) -> list[TaskRef]:
    file_part, _, wanted = entry.partition("@")
    path = Path(file_part)
    if not path.is_absolute():
        path = base / path
    if not path.is_file():
        problems.append(f"{where}: task file {path} does not exist")
        return []
    try:
        defined = task_functions(path)
    except SyntaxError as error:
        problems.append(f"{where}: {path} is not valid Python ({error.msg}, line {error.lineno})")
        return []
    if wanted:
        if wanted not in defined:
            found = ", ".join(defined) or "none"
            problems.append(f"{where}: {path} defines no @task named {wanted!r} (found: {found})")
            return []
        names = [wanted]
    else:
        if not defined:
            problems.append(f"{where}: {path} defines no @task function")
            return []
        names = defined
    return [TaskRef(name, f"{path.resolve()}@{name}", builtin=False) for name in names]


def _entry_refs(entry: str, base: Path, where: str, problems: list[str]) -> list[TaskRef]:
    file_part = entry.partition("@")[0]
    if file_part.endswith(".py"):
        return _file_refs(entry, base, where, problems)
    if entry in SA_BENCH_TASKS:
        return [TaskRef(entry, SA_BENCH_TASKS[entry], builtin=True)]
    if _GLOB_CHARACTERS & set(entry):
        problems.append(
            f"{where}: {entry!r} is a pattern, which names no task to run; "
            "point at a task file instead (path/to/tasks.py@task_name)"
        )
        return []
    # A task registered by an installed package (e.g. inspect_evals/gpqa_diamond); Inspect
    # resolves it, and reports an unknown name before any sample runs.
    return [TaskRef(entry, entry, builtin=False)]


def _merge(refs: Sequence[tuple[TaskRef, str]]) -> tuple[TaskRef, ...]:
    """One reference per task spec, listing every category it feeds (a task runs once)."""
    merged: dict[str, TaskRef] = {}
    for ref, category in refs:
        known = merged.get(ref.spec, ref)
        categories = (
            known.categories
            if category in known.categories
            else (
                *known.categories,
                category,
            )
        )
        merged[ref.spec] = TaskRef(known.name, known.spec, known.builtin, categories)
    return tuple(merged.values())


def _user_suite(path: Path) -> RunnableSuite:
    source = str(path)
    data = read_suite_toml(path)
    problems: list[str] = []
    refs: list[tuple[TaskRef, str]] = []
    categories = data.get("category")
    if isinstance(categories, list):
        for index, category in enumerate(categories):
            if not isinstance(category, dict) or not isinstance(category.get("tasks"), list):
                continue  # parse_suite reports the shape problem with its own wording
            names: list[str] = []
            for position, entry in enumerate(category["tasks"]):
                if not isinstance(entry, str):
                    continue
                where = f"category[{index}].tasks[{position}]"
                for ref in _entry_refs(entry.strip(), path.parent, where, problems):
                    refs.append((ref, str(category.get("key", index))))
                    names.append(ref.name)
            category["tasks"] = names or category["tasks"]
    if problems:
        raise SuiteError(source, problems)
    suite = parse_suite(data, source)
    return RunnableSuite(suite, _merge(refs), source, builtin=False)


def resolve_suite(name_or_path: str | Path) -> RunnableSuite:
    """Resolve a built-in suite name (`sa-bench`) or a suite TOML path to runnable tasks.

    Raises `SuiteError` listing every problem as `source: field: problem`.
    """
    if isinstance(name_or_path, str) and name_or_path in BUILTIN_SUITES:
        suite = load_suite(name_or_path)
        refs: list[tuple[TaskRef, str]] = []
        problems = []
        for index, category in enumerate(suite.categories):
            for position, name in enumerate(category.tasks):
                if name in SA_BENCH_TASKS:
                    refs.append((TaskRef(name, SA_BENCH_TASKS[name], builtin=True), category.key))
                elif name not in ORIGINAL_SA_BENCH_TASKS:
                    problems.append(
                        f"category[{index}].tasks[{position}]: no built-in task named {name!r}"
                    )
        if problems:
            raise SuiteError(name_or_path, problems)
        return RunnableSuite(suite, _merge(refs), name_or_path, builtin=True)
    path = Path(name_or_path)
    if not path.is_file():
        known = ", ".join(sorted(BUILTIN_SUITES))
        raise SuiteError(
            str(name_or_path), [f"no such suite file, and not a built-in suite (built-in: {known})"]
        )
    return _user_suite(path)


def builtin_task_function(spec: str) -> Callable[..., Task]:
    """Import a built-in @task function from its "module:function" spec."""
    module_name, _, attribute = spec.partition(":")
    function: Callable[..., Task] = getattr(importlib.import_module(module_name), attribute)
    return function


@dataclass(frozen=True)
class PreparedTasks:
    """What to hand `inspect_ai.eval_set`, and the categories that cannot run here.

    `not_run` maps a category key to the reason its task could not be built (a built-in task
    whose scorer needs a sandbox this machine cannot create); the leaderboard marks it so.
    """

    tasks: list[Task | str]
    not_run: dict[str, str] = field(default_factory=dict)


def sandbox_missing_reason(task: str) -> str:
    """Why a task that runs model-written code is not run on this machine."""
    from plumbline.sandbox import probe_sandbox

    return (
        f"task {task} runs model-written code, which plumbline runs only in a "
        f"bubblewrap sandbox, and none can be created here: {probe_sandbox().reason}"
    )


def make_tasks(
    resolved: RunnableSuite,
    *,
    seed: int,
    limit: int | None = None,
    epochs: int = 1,
    judge: Sequence[str] = (),
) -> PreparedTasks:
    """What to hand `inspect_ai.eval_set`: built-in Task objects and user tasks.

    Built-in tasks get the seed, limit and epochs as task arguments (so they are recorded in
    the log and part of the task's identity for resuming). User tasks are given as specs, or,
    with a `limit`, loaded and cut to a seeded subset of their sample ids (`subset_by_id`), so
    every model answers the same questions whatever order the task loads its dataset in; the
    run applies epochs to them through eval_set. A built-in task whose scorer refuses to run
    here (CDK synthesis without a bubblewrap sandbox) is left out, with the reason, for each of
    its categories.
    """
    from plumbline.sandbox import SandboxUnavailable

    prepared = PreparedTasks([])
    for ref in resolved.tasks:
        if not ref.builtin:
            if limit is None:
                prepared.tasks.append(ref.spec)
            else:
                prepared.tasks.extend(
                    subset_by_id(task, limit, seed) for task in load_user_task(ref.spec)
                )
            continue
        arguments: dict[str, Any] = {"seed": seed, "limit": limit, "epochs": epochs}
        if ref.name == JUDGED_TASK and judge:
            arguments["judge"] = list(judge)
        try:
            prepared.tasks.append(builtin_task_function(ref.spec)(**arguments))
        except SandboxUnavailable:
            reason = sandbox_missing_reason(ref.name)
            for key in ref.categories or (ref.name,):
                prepared.not_run[key] = reason
    return prepared


def load_user_task(spec: str) -> list[Task]:
    """Load a user task (`file.py@name` or a registered name) as Inspect's CLI would."""
    # Inspect's own loader (what `inspect eval SPEC` uses; it has no public wrapper), or its
    # public registry where that loader is not found (`compat.inspect`)
    from plumbline.compat.inspect import load_tasks

    try:
        tasks: list[Task] = load_tasks(spec)
    except Exception as error:  # Inspect raises what the task's own code raises
        raise SuiteError(spec, [f"cannot load the task: {type(error).__name__}: {error}"]) from None
    return tasks


def _id_order(sample_id: int | str) -> tuple[int, int, str]:
    if isinstance(sample_id, int):
        return (0, sample_id, "")
    return (1, 0, sample_id)


def choose_sample_ids(ids: Sequence[int | str], limit: int, seed: int) -> list[int | str]:
    """A seeded subset of `limit` sample ids, independent of the order they were loaded in.

    The ids are sorted (numbers before strings) before a `random.Random(seed)` sample is drawn,
    and the chosen ids are returned sorted: the same ids for every model and every run.
    """
    import random

    ordered = sorted(dict.fromkeys(ids), key=_id_order)
    if limit >= len(ordered):
        return ordered
    chosen = set(random.Random(seed).sample(ordered, limit))
    return [sample_id for sample_id in ordered if sample_id in chosen]


def subset_by_id(task: Task, limit: int, seed: int) -> Task:
    """The task with its dataset filtered to `choose_sample_ids(...)` after loading, so a task
    that shuffles its dataset (with no seed) cannot change which questions a model answers.
    Samples without an id are identified by position, as Inspect does."""
    dataset = task.dataset
    ids: list[int | str] = []
    for position, sample in enumerate(dataset, start=1):
        if sample.id is None:
            # Inspect numbers id-less samples by position (1, 2, ...); do it first, so such a
            # task is cut the way Inspect would identify its samples (stable unless it shuffles).
            sample.id = position
        ids.append(sample.id)
    chosen = set(choose_sample_ids(ids, limit, seed))
    task.dataset = dataset.filter(lambda sample: sample.id in chosen)
    return task
