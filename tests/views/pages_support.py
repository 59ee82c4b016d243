"""Real inputs for the A/B and reliability page tests, made by running plumbline's own code.

Compare documents come from `compare_runs` on run records (the bundled examples, or records
written here through the `RunRecord` model); reliability documents from `analyze` on trial
records (the bundled examples, or records made through `TrialRecord`) with a deterministic
bag-of-words embedding, so no model download is needed. Each document goes through the same
JSON serialisation as `--json`, so the pages see exactly what a user's file holds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from plumbline.cli.output import dumps
from plumbline.compare.analysis import compare_runs
from plumbline.compare.result import CompareSettings
from plumbline.records.run_record import RunRecord, read_run_records
from plumbline.records.trial_record import (
    ErrorClass,
    GenerationSettings,
    TrialRecord,
    read_trial_records,
)
from plumbline.reliability.analysis import analyze
from plumbline.reliability.config import BenchmarkConfig

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'

EXAMPLES = resources.files("plumbline") / "examples"


def example_path(name: str) -> Path:
    return Path(str(EXAMPLES / name))


def bag_of_words(texts: Sequence[str]) -> npt.NDArray[np.float64]:
    """A deterministic embedding: hashed word counts, L2-normalised (no model needed)."""
    width = 64
    matrix = np.zeros((len(texts), width))
    for row, text in enumerate(texts):
        for word in text.lower().split():
            matrix[row, sum(word.encode()) % width] += 1.0
        matrix[row, row % 3 + width - 3] += 0.5  # no all-zero rows
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    result: npt.NDArray[np.float64] = matrix / norms
    return result


def compare_document(
    paths: Sequence[Path],
    *,
    treatments: Sequence[str] | None = None,
    control: str | None = None,
    rule: str = "schema",
) -> dict[str, Any]:
    """What `plumbline compare PATHS --json` writes, computed in-process."""
    table = read_run_records(list(paths))
    settings = CompareSettings(rule="ci" if rule == "ci" else "schema", n_resamples=500)
    report = compare_runs(table, treatments=treatments, control=control, settings=settings)
    document: dict[str, Any] = json.loads(dumps(report))
    return document


def write_run_records(path: Path, arms: Sequence[str], tasks: Sequence[str], repeats: int) -> Path:
    """Run records for every (task, arm, repeat), validated by `RunRecord`, as JSONL.

    Outcomes, durations and tokens vary by a fixed pattern so every delta has a spread.
    """
    lines = []
    for t, task in enumerate(tasks):
        for a, arm in enumerate(arms):
            for repeat in range(repeats):
                record = RunRecord(
                    task_id=task,
                    arm=arm,
                    repeat=repeat,
                    success=(t + a + repeat) % 3 != 0,
                    duration_seconds=10.0 + 7 * t + 3 * a + repeat * 1.5,
                    total_cost_usd=0.01 * (1 + a + repeat),
                    input_tokens=1000 + 100 * t + 50 * a + 10 * repeat,
                    output_tokens=200 + 20 * a + repeat,
                    cache_read_tokens=500,
                    cache_write_tokens=50,
                )
                lines.append(record.model_dump_json())
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def reliability_document(records: Sequence[TrialRecord]) -> dict[str, Any]:
    """What `plumbline reliability --json` writes for these records (bag-of-words embedding)."""
    report = analyze(records, bag_of_words, config=BenchmarkConfig(bootstrap_resamples=200))
    return report.json_document()


def example_trials() -> list[TrialRecord]:
    return list(read_trial_records([example_path("trials.jsonl")]).records)


def write_trial_records(path: Path, models: Sequence[str], *, trials: int = 6) -> Path:
    """Trial records validated by `TrialRecord`: two prompts per model, some failures whose
    error message carries markup, as a provider's error body might."""
    settings = GenerationSettings(temperature=0.7, seed=1, max_tokens=64, timeout=5.0)
    lines = []
    for m, model in enumerate(models):
        for p, prompt in enumerate(("Name a prime number.", f"Describe {SCRIPT} in words.")):
            for trial in range(trials):
                failed = (trial + m) % 4 == 3
                error = (ErrorClass.SERVER, ErrorClass.TIMEOUT)[trial % 2] if failed else None
                record = TrialRecord(
                    model=model,
                    provider="local",
                    prompt_id=f"p{p}-{SCRIPT}" if p else "p0",
                    prompt=prompt,
                    trial=trial,
                    response=None if failed else f"Answer {trial % 3} {IMG} from {model}.",
                    latency_seconds=0.2 + 0.05 * trial + 0.1 * m,
                    output_tokens=None if failed else 8 + trial,
                    error_class=error,
                    timed_out=error is ErrorClass.TIMEOUT,
                    http_status=500 if error is ErrorClass.SERVER else None,
                    error_message=f"upstream said {SCRIPT} {IMG}" if failed else None,
                    timestamp=datetime(2026, 1, 1, tzinfo=UTC),
                    config=settings,
                )
                lines.append(record.model_dump_json())
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
