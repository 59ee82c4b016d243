"""The Inspect logs a suite reads, and the one rule for reruns: the newest log wins.

Every reader of a leaderboard's logs goes through here: `collect` (the scores),
`samples` (the drill-down the site shows) and `app.frames` (the Parquet export).

Which logs count (`suite_log`): a log counts for a category when its header and its sample
scores can be read, its task feeds the category, and it holds one of the category's scorers
(the first it holds is read: `pick_scorer`; a log with no scores at all reads the category's
first, its samples unscored). A log that did not finish counts with the samples it recorded.

The rule (`newest_wins`): a question is a category's question set (the task, or the task it is
an alias of: `Category.question_set`) and a sample id with its type (`ScoreColumns.id_keys`:
1 and "1" are two samples). When logs of one model hold the same question and epoch, the
sample of the newest log is kept: newest by the log's `created` time, then by its path
(`log_order`); every other copy is superseded. Samples a newer log does not hold stay those of
the older log (a rerun of some questions replaces only those).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from plumbline.leaderboard.result import Problem
from plumbline.leaderboard.suite import Category
from plumbline.records.log_files import LogFiles
from plumbline.records.log_pool import LogRead
from plumbline.records.log_scores import LogHeader, ScoreColumns
from plumbline.stats.arrays import BoolArray, IntArray


class Categories(Protocol):
    """What a reader needs of a suite: its name and the categories a task feeds (a `Suite`,
    or the categories a leaderboard document states: `samples.document_categories`)."""

    @property
    def name(self) -> str: ...

    def categories_for_task(self, task: str) -> list[Category]: ...


def log_order(header: LogHeader) -> tuple[datetime, str]:
    """A log's place among reruns: later `created` is newer; the path breaks a tie."""
    return (header.created, header.path)


def log_problem(kind: str, header: LogHeader, message: str, **extra: Any) -> Problem:
    """A `Problem` about one log (its path, model and task filled in)."""
    return Problem(
        kind=kind, message=message, path=header.path, model=header.model, task=header.task, **extra
    )


def pick_scorer(
    header: LogHeader, names: frozenset[str], category: Category
) -> tuple[str | None, Problem | None]:
    """The scorer a log contributes to a category: the first of the category's scorers the log
    holds. A log with no scores at all reads the first (its samples then count as unscored,
    and a `scorer_missing` problem says so: the category's scorer matched nothing); a log
    scored only by other scorers is reported and skipped."""
    present = set(names) | set(header.scorers)
    if not present:
        wanted = " or ".join(repr(scorer) for scorer in category.scorers)
        return category.scorer, log_problem(
            "scorer_missing",
            header,
            f"task {header.task!r} feeds category {category.key!r}, which reads scorer {wanted}, "
            "but this log holds no scores at all (was it run without scoring?); its samples "
            "count as unscored",
            category=category.key,
        )
    chosen = category.scorer_in(present)
    if chosen is not None:
        return chosen, None
    found = ", ".join(sorted(present))
    wanted = " or ".join(repr(scorer) for scorer in category.scorers)
    return None, log_problem(
        "scorer_missing",
        header,
        f"task {header.task!r} feeds category {category.key!r}, which reads scorer "
        f"{wanted}, but this log has only: {found}; log skipped",
        category=category.key,
    )


def location_problems(files: LogFiles) -> list[Problem]:
    """A problem for each path that does not exist and each location that cannot be listed."""
    problems: list[Problem] = [
        Problem(kind="path_not_found", message="no such file or directory", path=str(path))
        for path in files.missing
    ]
    problems += [
        Problem(kind="unreachable_location", message=f"cannot list logs: {why}", path=location)
        for location, why in files.unreachable
    ]
    return problems


def _incomplete_log_problem(header: LogHeader, samples: ScoreColumns) -> Problem:
    """An `incomplete_log` problem: the log did not finish, yet its recorded samples are used."""
    return log_problem(
        "incomplete_log",
        header,
        f"log status is {header.status!r}"
        + (f" ({header.error})" if header.error else "")
        + f"; its {len(samples)} recorded sample-epochs are used",
        count=len(samples),
    )


def _unreadable(path: str, problem: str | None) -> Problem:
    return Problem(kind="unreadable_log", message=f"{problem}; log skipped", path=path)


@dataclass(frozen=True)
class SuiteLog:
    """One log as a suite reads it: the (category, scorer) pairs it feeds (none: not used),
    its header and score columns when read, and the problems found."""

    read: LogRead
    parts: list[tuple[Category, str]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def header(self) -> LogHeader:
        """The header of a used log (`parts` is empty when there is none)."""
        assert self.read.header is not None
        return self.read.header

    @property
    def columns(self) -> ScoreColumns:
        """The score columns of a used log."""
        assert self.read.columns is not None
        return self.read.columns


def suite_log(read: LogRead, suite: Categories) -> SuiteLog:
    """Which categories a log feeds and with which scorer, and the problems found (a log whose
    task no category takes is skipped whether or not its samples could be read)."""
    header = read.header
    if header is None:
        return SuiteLog(read, problems=[_unreadable(read.path, read.header_problem)])
    categories = suite.categories_for_task(header.task)
    if not categories:
        message = f"task {header.task!r} matches no category of suite {suite.name!r}"
        return SuiteLog(
            read, problems=[log_problem("no_category", header, message + "; log skipped")]
        )
    samples = read.columns
    if samples is None:
        return SuiteLog(read, problems=[_unreadable(read.path, read.samples_problem)])
    used = SuiteLog(read)
    if header.status != "success":
        used.problems.append(_incomplete_log_problem(header, samples))
    for category in categories:
        scorer, problem = pick_scorer(header, read.names, category)
        if problem is not None:
            used.problems.append(problem)
        if scorer is not None:
            used.parts.append((category, scorer))
    return used


@dataclass(frozen=True)
class NewestWins:
    """Which rows `newest_wins` keeps, and who replaced whom."""

    keep: BoolArray
    #: (older log's rank, newer log's rank) -> rows of the older log the newer one replaced
    replaced: Counter[tuple[int, int]]


def newest_wins(questions: IntArray, epochs: IntArray, ranks: IntArray) -> NewestWins:
    """The rows kept when the newest log wins each (question, epoch).

    Row i is question `questions[i]`'s epoch `epochs[i]` read from the log of rank `ranks[i]`
    (logs ranked by `log_order`, newest highest; one log's rows share a rank).
    """
    keep = np.ones(questions.size, dtype=bool)
    replaced: Counter[tuple[int, int]] = Counter()
    if not questions.size:
        return NewestWins(keep, replaced)
    # lexsort: last key is primary; within one (question, epoch) the newest log sorts last.
    order = np.lexsort((ranks, epochs, questions))
    q_sorted, e_sorted = questions[order], epochs[order]
    last = np.ones(order.size, dtype=bool)
    last[:-1] = (q_sorted[:-1] != q_sorted[1:]) | (e_sorted[:-1] != e_sorted[1:])
    keep[order[~last]] = False
    if not last.all():
        # Who replaced whom: the dropped row's log and the log of its group's last row.
        group_end = np.flatnonzero(last)
        dropped = np.flatnonzero(~last)
        winner = group_end[np.searchsorted(group_end, dropped)]
        replaced.update(
            zip(ranks[order[dropped]].tolist(), ranks[order[winner]].tolist(), strict=True)
        )
    return NewestWins(keep, replaced)


def newest_rows(
    keys: Sequence[Hashable], epochs: Sequence[int], logs: Sequence[LogHeader]
) -> BoolArray:
    """`newest_wins` over rows named by any hashable question key (model and category
    included): row i is question `keys[i]`'s epoch `epochs[i]` from log `logs[i]`."""
    codes: dict[Hashable, int] = {}
    questions = np.array([codes.setdefault(key, len(codes)) for key in keys], dtype=np.int64)
    ordered = sorted({log_order(header) for header in logs})
    rank = {place: index for index, place in enumerate(ordered)}
    ranks = np.array([rank[log_order(header)] for header in logs], dtype=np.int64)
    return newest_wins(questions, np.array(epochs, dtype=np.int64), ranks).keep


def question_key(category: Category, header: LogHeader, id_key: str) -> tuple[str, str, str, str]:
    """The question a sample of a log is in a category, for `newest_rows` (model included)."""
    return (header.model, category.key, category.question_set(header.task), id_key)
