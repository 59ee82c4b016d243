"""From Inspect logs to one question × epoch score matrix per model and category.

Each log is read (header, then sample summaries, by `records.log_pool.LogReader`: in this
process, or in a pool of forked processes when the logs are large enough to pay for one) and
reduced at once to compact arrays, a bounded number of logs ahead, so memory follows the number
of scored values, not the size or the number of the logs. Every log that
cannot be used is reported as a `Problem`, never dropped silently:

- an unreadable or truncated log (skipped);
- a log whose task matches no category, or that lacks every one of the category's scorers
  (skipped);
- a category that no log feeds (every model counts 0 there);
- a log that did not finish (`status` other than success: its samples are used, and it is noted);
- the same (sample id, epoch) in two logs of one model and question set: the newest log wins
  (the one rule every reader of the logs applies: `leaderboard.logs`);
- a score outside [0, 1] (never clamped: it counts as an error).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from plumbline.core.prices import PriceTable
from plumbline.leaderboard.logs import (
    location_problems,
    log_order,
    log_problem,
    newest_wins,
    suite_log,
)
from plumbline.leaderboard.result import ErrorPolicy, Problem
from plumbline.leaderboard.suite import Category, Suite
from plumbline.leaderboard.usage import SampleUsage, price_rows
from plumbline.records.log_pool import LogRead, LogReader
from plumbline.records.log_scores import LogHeader, ScoreColumns, is_unsupported_input
from plumbline.stats.arrays import FloatArray, IntArray

ERROR_POLICIES: tuple[ErrorPolicy, ...] = ("zero", "exclude")


#: Called after each log is read: (logs done, logs in total, path of the log just read).
ProgressCallback = Callable[[int, int, str], None]


@dataclass(frozen=True)
class CategoryData:
    """Every scored (question, epoch) of one model in one category, after de-duplication.

    `matrix[i, j]` is question `questions[i]`'s score in its j-th epoch (NaN where absent).
    Errored or unscored samples are 0 under the "zero" policy; under "exclude" they are absent.
    """

    model: str
    category: str
    questions: IntArray
    matrix: FloatArray
    errors: int
    excluded: int
    logs: tuple[str, ...]
    tasks: tuple[str, ...]
    scorers: tuple[str, ...] = ()
    """The score names actually read (the first of the category's scorers each log held)."""
    costs: FloatArray | None = None
    """`costs[i, j]`: the USD cost of the cell `matrix[i, j]` (NaN: absent, or not priced)."""
    usage: SampleUsage = field(default_factory=lambda: SampleUsage.empty(0))
    """Tokens and pricing notes of every kept sample-epoch."""

    @property
    def n(self) -> int:
        return int(self.questions.size)

    @property
    def epochs(self) -> int:
        """The largest number of epochs scored for any question."""
        if self.matrix.size == 0:
            return 0
        return int(np.max(np.sum(~np.isnan(self.matrix), axis=1)))

    @property
    def scored(self) -> int:
        """Sample-epochs that carry a real score (neither errored nor unscored)."""
        present = int(np.sum(~np.isnan(self.matrix)))
        return present - (self.errors - self.excluded)

    def question_means(self) -> FloatArray:
        """Each question's mean over its epochs (repeats averaged within question first)."""
        counts = np.sum(~np.isnan(self.matrix), axis=1)
        means: FloatArray = np.nansum(self.matrix, axis=1) / counts
        return means


@dataclass
class _Chunk:
    header: LogHeader
    scorer: str
    questions: IntArray
    epochs: IntArray
    values: FloatArray  # NaN: errored or unscored
    usage: SampleUsage


@dataclass
class _Part:
    """One log's scores in one category, before its questions are numbered (`_Chunk`)."""

    category: str
    question_set: str
    scorer: str
    keys: list[str]
    epochs: IntArray
    values: FloatArray
    usage: SampleUsage


@dataclass
class Collected:
    """The result of reading logs: per (model, category) data, problems, and what was read."""

    data: dict[tuple[str, str], CategoryData]
    models: list[str]
    problems: list[Problem]
    logs_read: int
    logs_used: int
    question_labels: dict[str, list[str]] = field(default_factory=dict)


class _QuestionIndex:
    """Interns (task, sample id) per category as small integers shared by every model."""

    def __init__(self) -> None:
        self._codes: dict[str, dict[tuple[str, str], int]] = defaultdict(dict)

    def codes(self, category: str, task: str, keys: list[str]) -> IntArray:
        """The codes of sample ids given as `ScoreColumns.id_keys`, new ones numbered on."""
        table = self._codes[category]
        codes = [table.setdefault((task, key), len(table)) for key in keys]
        return np.array(codes, dtype=np.int64)

    def labels(self) -> dict[str, list[str]]:
        result: dict[str, list[str]] = {}
        for category, table in self._codes.items():
            labels = [""] * len(table)
            for (task, sample_id), code in table.items():
                labels[code] = f"{task}/{sample_id.split(':', 1)[1]}"
            result[category] = labels
        return result


def _category_part(
    header: LogHeader,
    category: Category,
    scorer: str,
    samples: ScoreColumns,
    prices: PriceTable | None = None,
) -> tuple[_Part, list[Problem]]:
    """One log's scores in one category, unusable values set to NaN, and the problems found."""
    problems: list[Problem] = []
    values = samples.values_of(scorer)
    unreadable = [
        why for row, why in samples.unreadable.get(scorer, {}).items() if row not in samples.errors
    ]
    if unreadable:
        problems.append(
            log_problem(
                "unreadable_score",
                header,
                f"{len(unreadable)} {scorer!r} values are not scores "
                f"(e.g. {unreadable[0]}); counted as errors",
                category=category.key,
                count=len(unreadable),
            )
        )
    outside = (values < 0.0) | (values > 1.0)
    if outside.any():
        # Scores live in [0, 1]; clamping a 0–10 judge scale to 1.0 was the reference
        # implementation's defect. Such a value is no valid score: it counts as an error.
        problems.append(
            log_problem(
                "out_of_range",
                header,
                f"{int(outside.sum())} {scorer!r} values outside [0, 1] "
                f"(e.g. {values[outside][0]:g}); counted as errors",
                category=category.key,
                count=int(outside.sum()),
            )
        )
        values[outside] = np.nan
    problems.extend(_outcome_problems(header, category, scorer, samples))
    part = _Part(
        category=category.key,
        question_set=category.question_set(header.task),
        scorer=scorer,
        keys=samples.id_keys,
        epochs=np.array(samples.epochs, dtype=np.int64),
        values=values,
        usage=price_rows(samples, prices),
    )
    return part, problems


def _merged_data(
    chunks: dict[tuple[str, str], list[_Chunk]], suite: Suite, errors: ErrorPolicy
) -> tuple[dict[tuple[str, str], CategoryData], list[Problem]]:
    """Each (model, category)'s logs pooled, with duplicate and empty-category problems."""
    problems: list[Problem] = []
    data: dict[tuple[str, str], CategoryData] = {}
    for (model, key), parts in chunks.items():
        category_data, duplicate_problems = _merge(model, key, parts, errors)
        data[(model, key)] = category_data
        problems.extend(duplicate_problems)
    if data:
        fed = {key for _, key in data}
        for category in suite.categories:
            if category.key not in fed:
                problems.append(_empty_category(suite, category))
    return data, problems


def _log_parts(
    read: LogRead, suite: Suite, prices: PriceTable | None = None
) -> tuple[list[Problem], list[_Part]]:
    """One log's parts per category and the problems found (`logs.suite_log` says which
    categories it feeds, with which scorer)."""
    used = suite_log(read, suite)
    problems = list(used.problems)
    parts: list[_Part] = []
    for category, scorer in used.parts:
        part, part_problems = _category_part(used.header, category, scorer, used.columns, prices)
        problems.extend(part_problems)
        parts.append(part)
    return problems, parts


def collect(
    paths: Iterable[str | Path],
    suite: Suite,
    *,
    errors: ErrorPolicy = "zero",
    progress: ProgressCallback | None = None,
    workers: int | None = None,
    fast: bool = True,
    reader: LogReader | None = None,
    prices: PriceTable | None = None,
) -> Collected:
    """Read every log under `paths` and build per (model, category) score matrices.

    `workers` processes read the logs (default: `records.log_pool.pool_workers`); `fast`
    False reads every log through Inspect's readers (the result is the same; see
    `read_log_header`). A `reader` already made (and reading) for `paths` is used instead.
    `prices` prices every sample's provider-reported usage (`CategoryData.costs`).
    """
    if errors not in ERROR_POLICIES:
        raise ValueError(f"errors must be 'zero' or 'exclude', got {errors!r}")
    if reader is None:
        reader = LogReader(paths, workers=workers, fast=fast)
    files = reader.files
    problems = location_problems(files)
    index = _QuestionIndex()
    chunks: dict[tuple[str, str], list[_Chunk]] = defaultdict(list)
    models: set[str] = set()
    used = 0
    total = len(files.logs)
    for done, read in enumerate(reader, start=1):
        if progress is not None:
            progress(done, total, read.path)
        log_problems, parts = _log_parts(read, suite, prices)
        problems.extend(log_problems)
        if read.header is None or not parts:
            continue
        header = read.header
        for part in parts:
            questions = index.codes(part.category, part.question_set, part.keys)
            chunk = _Chunk(header, part.scorer, questions, part.epochs, part.values, part.usage)
            chunks[(header.model, part.category)].append(chunk)
        models.add(header.model)
        used += 1

    data, merge_problems = _merged_data(chunks, suite, errors)
    problems.extend(merge_problems)
    return Collected(
        data=data,
        models=sorted(models),
        problems=problems,
        logs_read=total,
        logs_used=used,
        question_labels=index.labels(),
    )


MAX_IDS_SHOWN = 10


def _id_list(ids: list[str]) -> str:
    shown = ", ".join(ids[:MAX_IDS_SHOWN])
    more = len(ids) - MAX_IDS_SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def _outcome_problems(
    header: LogHeader, category: Category, scorer: str, samples: ScoreColumns
) -> list[Problem]:
    """Samples the model could not take (unsupported input) and answers the scorer could not
    find (no answer extracted): both score as errors or 0 as before, and are named here."""
    problems = []
    ids, epochs = samples.ids, samples.epochs
    unsupported = [
        f"{ids[row]}#{epochs[row]}"
        for row, error in samples.errors.items()
        if is_unsupported_input(error)
    ]
    if unsupported:
        problems.append(
            log_problem(
                "unsupported_input",
                header,
                f"{len(unsupported)} sample-epoch(s) the model cannot take (e.g. an image for a "
                f"text-only model), recorded as errors: {_id_list(unsupported)}",
                category=category.key,
                count=len(unsupported),
            )
        )
    no_answer = [
        f"{ids[row]}#{epochs[row]}"
        for row in samples.no_answer.get(scorer, [])
        if row not in samples.errors
    ]
    if no_answer:
        problems.append(
            log_problem(
                "no_answer_extracted",
                header,
                f"{len(no_answer)} of {len(samples)} sample-epoch(s) had no answer the scorer "
                f"could extract (scored 0, not a wrong choice): {_id_list(no_answer)}",
                category=category.key,
                count=len(no_answer),
            )
        )
    return problems


def _empty_category(suite: Suite, category: Category) -> Problem:
    tasks = ", ".join(category.tasks)
    scorers = ", ".join(category.scorers)
    return Problem(
        kind="category_empty",
        message=(
            f"no log feeds category {category.key!r} of suite {suite.name!r} (tasks: {tasks}; "
            f"scorers: {scorers}): every model counts 0 there, so overall covers only "
            "the other categories' weight; add the logs, or use a suite without this category"
        ),
        category=category.key,
    )


def _merge(
    model: str, key: str, parts: list[_Chunk], errors: ErrorPolicy
) -> tuple[CategoryData, list[Problem]]:
    """Pool a model's logs for one category; the newest log wins each (question, epoch)
    (`logs.newest_wins`)."""
    parts = sorted(parts, key=lambda part: log_order(part.header))
    questions = np.concatenate([part.questions for part in parts])
    epochs = np.concatenate([part.epochs for part in parts])
    values = np.concatenate([part.values for part in parts])
    usage = SampleUsage.concatenate([part.usage for part in parts])
    source = np.concatenate(
        [np.full(part.questions.size, rank, dtype=np.int64) for rank, part in enumerate(parts)]
    )
    problems: list[Problem] = []
    newest = newest_wins(questions, epochs, source)
    keep = newest.keep
    for (old, new), count in sorted(newest.replaced.items()):
        older, newer = parts[old].header, parts[new].header
        problems.append(
            Problem(
                kind="duplicate_samples",
                message=(
                    f"{count} (sample id, epoch) pairs of task {older.task!r} appear in "
                    f"both {older.path} and {newer.path}; kept the newer log "
                    f"({newer.created.isoformat()})"
                ),
                path=older.path,
                model=model,
                task=older.task,
                category=key,
                count=count,
            )
        )
    questions, epochs, values, usage = questions[keep], epochs[keep], values[keep], usage[keep]
    failed = np.isnan(values)
    error_count = int(failed.sum())
    excluded = 0
    if errors == "zero":
        values = np.where(failed, 0.0, values)
    else:
        excluded = error_count
        questions, epochs, values = questions[~failed], epochs[~failed], values[~failed]
        usage = usage[~failed]

    unique_questions, rows = np.unique(questions, return_inverse=True)
    unique_epochs, columns = np.unique(epochs, return_inverse=True)
    matrix = np.full((unique_questions.size, unique_epochs.size), np.nan)
    matrix[rows, columns] = values
    costs = np.full(matrix.shape, np.nan)
    costs[rows, columns] = usage.costs
    used_parts = [part for part in parts if part.questions.size]
    return (
        CategoryData(
            model=model,
            category=key,
            questions=unique_questions.astype(np.int64),
            matrix=matrix,
            errors=error_count,
            excluded=excluded,
            logs=tuple(part.header.path for part in used_parts),
            tasks=tuple(sorted({part.header.task for part in parts})),
            scorers=tuple(dict.fromkeys(part.scorer for part in parts)),
            costs=costs,
            usage=usage,
        ),
        problems,
    )
