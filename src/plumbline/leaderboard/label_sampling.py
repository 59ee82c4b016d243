"""The samples humans label: a seeded, uniformly random draw of judged questions per model.

The same questions are drawn for every model (from the questions all of them were scored on,
when there are enough), so that the labels pair up for the differences between models.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from plumbline.core.escape import spreadsheet_cell
from plumbline.leaderboard.result import LeaderboardDocument
from plumbline.leaderboard.samples import read_leaderboard_samples
from plumbline.records.io import write_atomic

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


def draw_label_rows(
    document: LeaderboardDocument,
    sources: Sequence[Path],
    categories: Sequence[str],
    per_model: int,
    seed: int,
) -> list[dict[str, Any]]:
    """`per_model` questions per model and category, drawn uniformly at random (seeded), one
    row per question (its first scored epoch), with an empty `value` to fill in."""
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
        shared = sorted(set.intersection(*(set(q) for q in by_model.values())))
        order = [shared[i] for i in rng.permutation(len(shared))]
        for model, questions in sorted(by_model.items()):
            rest = sorted(set(questions) - set(order))
            extra = [rest[i] for i in rng.permutation(len(rest))]
            picked = [q for q in order if q in questions][:per_model]
            picked += extra[: per_model - len(picked)]
            for question in sorted(picked):
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
