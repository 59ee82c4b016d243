"""Human labels that correct a judged category by prediction-powered inference (stats.ppi).

A labels file (JSONL, or CSV with a header) has one row per labelled sample: `model`, `task`,
`sample_id`, `epoch` (default 1) and `value` in [0, 1]. `plumbline judge sample` writes the rows
to label, drawn uniformly at random (the randomness is what makes the correction valid).

Labels are matched to the leaderboard's questions: a question's human value is the mean of its
labels, paired with the judge's question mean (epochs averaged, as the leaderboard scores it);
every other scored question of the model in that category is unlabelled. A label that matches
no scored sample, a value outside [0, 1] and a second label for the same sample-epoch are
problems that name the row, never silently dropped or clamped.
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from plumbline.core.escape import from_spreadsheet_cell
from plumbline.core.result import Interval
from plumbline.leaderboard.collect import CategoryData
from plumbline.leaderboard.correction import Correction
from plumbline.leaderboard.result import Problem
from plumbline.leaderboard.scores import LEVEL, CategoryScore
from plumbline.leaderboard.suite import Suite
from plumbline.records.io import (
    RecordError,
    UnreadableFileError,
    iter_json_values,
    read_text_file,
)
from plumbline.stats import label_budget, ppi_mean, selection_check
from plumbline.stats.ppi import METHOD, SelectionCheck


class LabelFileError(ValueError):
    """A labels file that cannot be read: `file:line: field: problem`."""


@dataclass(frozen=True)
class HumanLabel:
    model: str
    task: str
    sample_id: str
    epoch: int
    value: float
    where: str
    """`file:line` of the row."""


def _field(row: dict[str, Any], name: str, where: str) -> Any:
    value = row.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise LabelFileError(f"{where}: {name}: missing")
    return value


def _label(row: Any, where: str) -> HumanLabel:
    if not isinstance(row, dict):
        raise LabelFileError(f"{where}: expected an object with model, task, sample_id, value")
    model = str(_field(row, "model", where))
    task = str(_field(row, "task", where))
    sample_id = str(_field(row, "sample_id", where))
    raw_epoch = row.get("epoch")
    epoch = 1
    if raw_epoch not in (None, ""):
        try:
            epoch = int(str(raw_epoch))
        except ValueError:
            raise LabelFileError(f"{where}: epoch: not an integer: {raw_epoch!r}") from None
        if epoch < 1:
            raise LabelFileError(f"{where}: epoch: must be >= 1, got {epoch}")
    raw_value = _field(row, "value", where)
    if isinstance(raw_value, bool):
        value = float(raw_value)
    else:
        try:
            value = float(raw_value)
        except (TypeError, ValueError):
            raise LabelFileError(f"{where}: value: not a number: {raw_value!r}") from None
    if not math.isfinite(value):
        raise LabelFileError(f"{where}: value: not a finite number: {raw_value!r}")
    return HumanLabel(model, task, sample_id, epoch, value, where)


def read_labels(path: str | Path) -> list[HumanLabel]:
    """Every row of a labels file (`.csv` is CSV with a header; anything else is read as JSON
    records by `records.io.iter_json_values`: JSONL, a JSON array, or concatenated objects)."""
    file = Path(path)
    labels: list[HumanLabel] = []
    try:
        if file.suffix.lower() == ".csv":
            reader = csv.DictReader(read_text_file(file).splitlines())
            missing = {"model", "task", "sample_id", "value"} - set(reader.fieldnames or [])
            if missing:
                raise LabelFileError(
                    f"{file}:1: header: missing column(s) {', '.join(sorted(missing))}"
                )
            for number, row in enumerate(reader, start=2):
                cells = {
                    k: from_spreadsheet_cell(v) if isinstance(v, str) else v for k, v in row.items()
                }
                labels.append(_label(cells, f"{file}:{number}"))
            return labels
        for record in iter_json_values(file):
            if isinstance(record, RecordError):
                raise LabelFileError(str(record))
            labels.append(_label(record.value, f"{file}:{record.line}"))
    except (OSError, UnreadableFileError, csv.Error) as error:
        raise LabelFileError(f"{file}: cannot read: {error}") from None
    return labels


def _problem(kind: str, label: HumanLabel, message: str, **extra: Any) -> Problem:
    return Problem(
        kind=kind,
        message=message,
        path=label.where,
        model=label.model,
        task=label.task,
        **extra,
    )


def match_labels(
    suite: Suite,
    data: dict[tuple[str, str], CategoryData],
    question_labels: dict[str, list[str]],
    labels: list[HumanLabel],
) -> tuple[dict[tuple[str, str], dict[int, float]], list[Problem]]:
    """Human values by (model, category) and question code, and the problems of the rows."""
    codes = {
        key: {name: code for code, name in enumerate(names)}
        for key, names in question_labels.items()
    }
    seen: set[tuple[str, str, str, int]] = set()
    values: dict[tuple[str, str], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    problems: list[Problem] = []
    for label in labels:
        name = f"sample {label.sample_id!r} (epoch {label.epoch})"
        identity = (label.model, label.task, label.sample_id, label.epoch)
        if identity in seen:
            problems.append(
                _problem(
                    "label_duplicate", label, f"a second label for {name}; only the first is used"
                )
            )
            continue
        seen.add(identity)
        if not 0 <= label.value <= 1:
            problems.append(
                _problem(
                    "label_out_of_range",
                    label,
                    f"label {label.value:g} for {name} is outside [0, 1]; not used",
                )
            )
            continue
        matched = False
        for category in suite.categories_for_task(label.task):
            code = codes.get(category.key, {}).get(
                f"{category.question_set(label.task)}/{label.sample_id}"
            )
            entry = data.get((label.model, category.key))
            if code is None or entry is None or not np.any(entry.questions == code):
                continue
            if label.epoch > entry.epochs:  # Inspect numbers epochs 1..K
                continue
            values[(label.model, category.key)][code].append(label.value)
            matched = True
        if not matched:
            problems.append(
                _problem(
                    "label_unmatched",
                    label,
                    f"the label for {name} matches no scored sample of model {label.model!r} "
                    f"in task {label.task!r}; not used",
                )
            )
    human = {
        key: {code: float(np.mean(found)) for code, found in by_code.items()}
        for key, by_code in values.items()
    }
    return human, problems


def correct_category(
    score: CategoryScore, human: dict[int, float], model: str
) -> tuple[CategoryScore, Problem | None]:
    """The category score replaced by its PPI estimate and interval (or unchanged, with a
    problem, when the labels cannot correct it: fewer than 2, or no unlabelled question).
    A corrected score comes with a `labels_not_random` problem when the judge's mean on the
    labelled questions differs from its mean on the others at the 1% level
    (`stats.selection_check`): the labels look chosen, and PPI assumes they were drawn."""
    if score.missing:
        return score, None
    labelled = np.array(sorted(human), dtype=np.int64)
    positions = np.searchsorted(score.questions, labelled)
    unlabelled_mask = np.ones(score.questions.size, dtype=bool)
    unlabelled_mask[positions] = False
    if labelled.size < 2 or not unlabelled_mask.any():
        return score, Problem(
            kind="labels_too_few",
            message=(
                f"{labelled.size} labelled of {score.n} questions: the correction needs at least "
                "2 labelled and 1 unlabelled; the judge's score is kept"
            ),
            model=model,
            category=score.key,
            count=int(labelled.size),
        )
    selection = selection_check(
        score.question_means[positions], score.question_means[unlabelled_mask]
    )
    correction = Correction(
        labelled=labelled,
        human=np.array([human[int(code)] for code in labelled], dtype=np.float64),
        judge_labelled=score.question_means[positions],
        judge_unlabelled=score.question_means[unlabelled_mask],
        unlabelled=score.questions[unlabelled_mask],
        result=ppi_mean(
            np.array([human[int(code)] for code in labelled], dtype=np.float64),
            score.question_means[positions],
            score.question_means[unlabelled_mask],
            level=LEVEL,
        ),
        judge_value=float(score.contribution),
        judge_interval=score.interval,
        selection=selection,
    )
    result = correction.result
    return (
        replace(
            score,
            value=result.statistic,
            interval=Interval(
                low=result.interval.low, high=result.interval.high, level=LEVEL, method=METHOD
            ),
            standard_error=result.standard_error,
            correction=correction,
        ),
        _chosen_labels(selection, model, score.key) if selection.chosen else None,
    )


def _chosen_labels(selection: SelectionCheck, model: str, category: str) -> Problem:
    """The warning when the labelled questions do not look like a uniform random draw."""
    return Problem(
        kind="labels_not_random",
        message=(
            "the labelled questions look chosen, not drawn at random: the judge's mean is "
            f"{selection.labelled_mean:.3f} on them and {selection.unlabelled_mean:.3f} on the "
            f"others (p = {selection.pvalue:.2g} < {selection.alpha:g}, {selection.method}); "
            "the correction assumes a uniform random sample (`plumbline judge sample`) and may "
            "be biased"
        ),
        model=model,
        category=category,
    )


def more_labels_needed(correction: Correction, half_width: float) -> int | None:
    """Labels to add to reach `half_width`, from the measured correlation (`label_budget`);
    None when the judged samples cannot reach it."""
    details = correction.result.details
    rate = min(max(float(correction.result.statistic), 0.01), 0.99)
    plan = label_budget(
        float(details["correlation"] or 0.0),
        int(details["n_judged"]),
        half_width,
        rate=rate,
    )
    if plan.labels_needed is None:
        return None
    return max(0, plan.labels_needed - int(details["n_labelled"]))


__all__ = [
    "Correction",
    "HumanLabel",
    "LabelFileError",
    "correct_category",
    "match_labels",
    "more_labels_needed",
    "read_labels",
]
