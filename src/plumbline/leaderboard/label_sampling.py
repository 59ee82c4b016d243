"""The samples humans label: a seeded, uniformly random draw of judged questions per model.

PPI's correction holds only when each model's labelled questions are a uniform random sample
of the questions it was scored on. One seeded random order is drawn over every question of the
category (any model's), and each model takes the first `per_model` of *its own* questions in
that order: a uniform draw for every model, with nothing padded in from elsewhere, and the same
questions for every model scored on the same ones (so the labels pair up for the differences
between models). Where the models' question sets differ, the picks still overlap as much as
that order allows, and `paired_questions` says how many are shared by every model.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from plumbline.core.escape import spreadsheet_cell
from plumbline.leaderboard.result import LeaderboardDocument
from plumbline.leaderboard.samples import read_leaderboard_samples
from plumbline.records.io import write_atomic

Q = TypeVar("Q", bound=tuple[str, str])

COLUMNS = (
    "model",
    "task",
    "sample_id",
    "epoch",
    "category",
    "value",
    "judge_score",
    "question",
    "response",
    "explanation",
)


def uniform_picks(
    questions: dict[str, list[Q]], per_model: int, rng: np.random.Generator
) -> dict[str, list[Q]]:
    """`per_model` of each model's questions, a uniform random draw from its own: one random
    rank per question (over every model's), and each model takes its first `per_model` by
    rank. Restricted to a model's questions the ranks are a uniformly random order of them, so
    its picks are a simple random sample of them; models with the same questions get the same
    picks."""
    every = sorted(set().union(*(set(found) for found in questions.values())))
    rank = {every[i]: position for position, i in enumerate(rng.permutation(len(every)))}
    return {
        model: sorted(found, key=rank.__getitem__)[:per_model]
        for model, found in sorted(questions.items())
    }


def draw_label_rows(
    document: LeaderboardDocument,
    sources: Sequence[Path],
    categories: Sequence[str],
    per_model: int,
    seed: int,
) -> list[dict[str, Any]]:
    """`per_model` questions per model and category, drawn uniformly at random from that
    model's own judged questions (seeded; one order over all questions shared by every model),
    one row per question (its first scored epoch), with an empty `value` to fill in."""
    found = read_leaderboard_samples(document, sources)
    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []
    for key in categories:
        scored = [s for s in found.samples if s.category == key and s.value is not None]
        by_model: dict[str, dict[tuple[str, str], Any]] = {}
        for item in sorted(scored, key=lambda s: (s.model, s.task, s.sample_id, s.epoch)):
            by_model.setdefault(item.model, {}).setdefault((item.task, item.sample_id), item)
        if not by_model:
            continue
        picks = uniform_picks({m: list(q) for m, q in by_model.items()}, per_model, rng)
        for model, questions in sorted(by_model.items()):
            for question in sorted(picks[model]):
                item = questions[question]
                rows.append(
                    {
                        "model": model,
                        "task": item.task,
                        "sample_id": item.sample_id,
                        "epoch": item.epoch,
                        "category": key,
                        "value": None,
                        "judge_score": item.value,
                        "question": item.question,
                        "response": item.response,
                        "explanation": item.explanation,
                    }
                )
    return rows


def paired_questions(rows: Sequence[dict[str, Any]]) -> int:
    """Questions (category, task, sample) drawn for every model that has rows."""
    models = {row["model"] for row in rows}
    by_question: dict[tuple[str, str, str], set[str]] = {}
    for row in rows:
        key = (row["category"], row["task"], str(row["sample_id"]))
        by_question.setdefault(key, set()).add(row["model"])
    return sum(1 for found in by_question.values() if found == models)


def write_label_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    """JSONL, or CSV (header first) when the name ends in `.csv`; atomically."""
    if path.suffix.lower() == ".csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            # model-written text is data: never a formula (OWASP, CSV injection)
            writer.writerow(
                {k: "" if row[k] is None else spreadsheet_cell(row[k]) for k in COLUMNS}
            )
        write_atomic(path, buffer.getvalue())
    else:
        write_atomic(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
