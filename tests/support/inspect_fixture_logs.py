"""Inspect's own committed test logs (tests/records/fixtures/inspect_logs, see its README) and a
suite that reads each of their tasks as a category."""

from __future__ import annotations

from pathlib import Path

LOGS = Path(__file__).parents[1] / "records" / "fixtures" / "inspect_logs"

# Each task of the fixtures as a category, read with the scorer its logs hold.
SUITE = """
[suite]
name = "inspect-fixtures"

[[category]]
key = "popularity"
name = "Popularity"
description = "Inspect's popularity example task."
weight = 0.25
scoring = "binary"
tasks = ["popularity"]
scorer = "match"

[[category]]
key = "mmlu"
name = "MMLU"
description = "MMLU, zero-shot."
weight = 0.25
scoring = "binary"
tasks = ["inspect_evals/mmlu_0_shot"]
scorer = "choice"

[[category]]
key = "guess"
name = "Guess the number"
description = "A number guessing task."
weight = 0.25
scoring = "rubric"
tasks = ["inspect_test_utils/guess_number"]
scorer = "closeness_log"

[[category]]
key = "input"
name = "Input task"
description = "A model-graded task."
weight = 0.25
scoring = "binary"
tasks = ["input_task"]
scorer = "model_graded_fact"
"""
