"""`plumbline run --adaptive`: the suite's questions asked in rounds, through Inspect, until
every pair of models is decided (`plumbline.leaderboard.adaptive` says when).

Each round is one Inspect `eval_set` over the next questions of the seeded order, for the models
still active, in its own log directory (`<log-dir>/adaptive/round-001`, ...). A killed run,
started again with the same command, replays the rounds it finished from their logs (eval_set
reuses a finished log: no model is called again), resumes the round it was in (eval_set retries
an unfinished log, reusing its finished samples), and goes on: the order, the rounds and every
decision are functions of the seed and the scores only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from plumbline.leaderboard.adaptive import AdaptiveProcedure, AdaptiveSettings, outcome_of
from plumbline.leaderboard.adaptive_board import adaptive_board
from plumbline.leaderboard.adaptive_scores import (
    AskedQuestions,
    ScoreTable,
    draw_order,
    weighted_values,
)
from plumbline.leaderboard.board import Leaderboard, build_leaderboard

if TYPE_CHECKING:
    from inspect_ai import Task

    from plumbline.core.prices import PriceTable
    from plumbline.leaderboard.suite import Suite

#: eval_set over the given tasks, models and log directory: (success, the logs).
RunRound = Callable[[list[Any], Path, list[str]], tuple[bool, list[Any]]]
#: A question: its task's index in the task list and its sample id.
SampleRef = tuple[int, int | str]
#: A fresh list of the suite's tasks (Task objects and user task specs), every question in them.
MakeTasks = Callable[[], list[Any]]


class BudgetError(ValueError):
    """A dollar budget that cannot be kept: a model the price table does not price."""


@dataclass
class AdaptiveResult:
    """The leaderboard of an adaptive run, the logs behind it, and whether every round ran."""

    board: Leaderboard
    logs: list[str]
    finished: bool


def _loaded(tasks: Sequence[Any]) -> list[Task]:
    from plumbline.suites.registry import load_user_task

    loaded: list[Task] = []
    for task in tasks:
        loaded.extend(load_user_task(task) if isinstance(task, str) else [task])
    return loaded


def _sample_ids(task: Task) -> list[int | str]:
    """The task's sample ids; samples without one are numbered by position, as Inspect does."""
    ids: list[int | str] = []
    for position, sample in enumerate(task.dataset, start=1):
        if sample.id is None:
            sample.id = position
        ids.append(sample.id)
    return ids


def asked_questions(
    tasks: Sequence[Task], suite: Suite, seed: int
) -> tuple[AskedQuestions, list[SampleRef]]:
    """Every question of the suite's tasks in the seeded order asked, and each one's (task
    index, sample id). A task no category reads is not asked."""
    keys = [category.key for category in suite.categories]
    found: list[tuple[int, int | str, int, str]] = []
    seen: set[tuple[int, str]] = set()
    for index, task in enumerate(tasks):
        categories = suite.categories_for_task(task.name)
        if not categories:
            continue
        category = categories[0]
        position = keys.index(category.key)
        for sample_id in _sample_ids(task):
            label = f"{category.question_set(task.name)}/{sample_id}"
            if (position, label) not in seen:
                seen.add((position, label))
                found.append((index, sample_id, position, label))
    order = draw_order(len(found), seed)
    ordered = [found[int(i)] for i in order]
    asked = AskedQuestions(
        labels=[entry[3] for entry in ordered],
        category_of=np.array([entry[2] for entry in ordered], dtype=np.int64),
        categories=keys,
        weights=[category.weight for category in suite.categories],
    )
    return asked, [(entry[0], entry[1]) for entry in ordered]


def _round_tasks(make_tasks: MakeTasks, chosen: Sequence[SampleRef]) -> list[Task]:
    """Fresh tasks cut to the chosen samples (tasks with none left out)."""
    tasks = _loaded(make_tasks())
    by_task: dict[int, set[int | str]] = {}
    for index, sample_id in chosen:
        by_task.setdefault(index, set()).add(sample_id)
    cut: list[Task] = []
    for index, ids in sorted(by_task.items()):
        task = tasks[index]
        _sample_ids(task)
        task.dataset = task.dataset.filter(_membership(ids))
        cut.append(task)
    return cut


def _membership(ids: set[int | str]) -> Callable[[Any], bool]:
    def keep(sample: Any) -> bool:
        return bool(sample.id in ids)

    return keep


def run_adaptive(
    make_tasks: MakeTasks,
    suite: Suite,
    models: Sequence[str],
    log_dir: Path,
    settings: AdaptiveSettings,
    seed: int,
    run_round: RunRound,
    not_run: dict[str, str] | None = None,
    prices: PriceTable | None = None,
) -> AdaptiveResult:
    """Ask the questions round by round until the procedure stops; the leaderboard of what was
    asked, with the adaptive block and intervals valid after the stop."""
    if settings.budget_usd is not None:
        _check_priced(models, prices)
    asked, where = asked_questions(_loaded(make_tasks()), suite, seed)
    procedure = AdaptiveProcedure(list(models), asked.count, settings, lambda a, b, t: _never())
    logs: list[str] = []
    table = ScoreTable(list(models), np.zeros((len(models), asked.count)), 1.0)
    round_number = 0
    while True:
        size, active = procedure.next_round()
        if size == 0:
            break
        round_number += 1
        done = max(procedure.answered)
        chosen = where[done : done + size]
        names = [procedure.models[index] for index in active]
        round_dir = log_dir / "adaptive" / f"round-{round_number:03d}"
        success, round_logs = run_round(_round_tasks(make_tasks, chosen), round_dir, names)
        logs.extend(_location(log) for log in round_logs)
        if not success:
            return AdaptiveResult(_board(logs, suite, not_run, prices), logs, finished=False)
        board = _board(logs, suite, not_run, prices)
        table = _table(board, asked, list(models))
        procedure.path = table.pair_path(procedure.pair_alpha, settings.tie_margin)
        procedure.observe(done + size, active)
        _record_spend(procedure, board, settings.budget_usd is not None)
    board = _board(logs, suite, not_run, prices)
    outcome = outcome_of(procedure, table)
    scores = asked.scores(board)
    return AdaptiveResult(adaptive_board(board, asked, scores, outcome, seed), logs, finished=True)


def _check_priced(models: Sequence[str], prices: PriceTable | None) -> None:
    unpriced = [model for model in models if prices is None or prices.entry(model) is None]
    if unpriced:
        version = prices.version if prices is not None else "none"
        raise BudgetError(
            f"--budget in dollars needs a price for every model; price table {version} has "
            f"none for {', '.join(unpriced)} (give one with --prices FILE, or a budget in calls)"
        )


def _record_spend(procedure: AdaptiveProcedure, board: Leaderboard, required: bool) -> None:
    """What the calls so far cost, and each model's mean cost per question asked: the dollar
    budget's projection of the next round (left unknown when a model's cost is)."""
    costs = [board.costs.get(model) for model in procedure.models]
    totals = [cost.total_usd if cost is not None else None for cost in costs]
    if any(total is None for total in totals):
        if required:
            missing = [m for m, t in zip(procedure.models, totals, strict=True) if t is None]
            raise BudgetError(
                f"--budget in dollars: the cost of {', '.join(missing)} could not be priced "
                "(see the leaderboard's cost notes); give a budget in calls"
            )
        procedure.cost_per_question = None
        return
    known = [float(total) for total in totals if total is not None]
    procedure.spent_usd = sum(known)
    procedure.cost_per_question = [
        total / answered if answered else 0.0
        for total, answered in zip(known, procedure.answered, strict=True)
    ]


def _never() -> Any:
    raise RuntimeError("no round has been observed yet")


def _location(log: Any) -> str:
    location = str(log.location)
    return location.removeprefix("file://")


def _board(
    logs: list[str], suite: Suite, not_run: dict[str, str] | None, prices: PriceTable | None
) -> Leaderboard:
    return build_leaderboard(logs, suite, errors="zero", not_run=not_run, prices=prices)


def _table(board: Leaderboard, asked: AskedQuestions, models: list[str]) -> ScoreTable:
    """The weighted values of every model (in the procedure's order) in the order asked."""
    scores = asked.scores(board)
    row_of = {entry.model: row for row, entry in enumerate(board.models)}
    ordered = np.zeros((len(models), asked.count))
    for index, model in enumerate(models):
        if model in row_of:
            ordered[index] = scores[row_of[model]]
    values, span = weighted_values(ordered, asked.category_of, asked.weights)
    return ScoreTable(models, values, span)
