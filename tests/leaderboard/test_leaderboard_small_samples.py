"""The issue-15 cases on real Inspect logs: a one-category suite of 10 questions at weight 1.

- 7 of 10 right: the overall shows exactly the category's Wilson interval [39.7%, 89.2%];
- the adjacent difference stays in [−1, 1], is Newcombe's paired interval, and its p-value
  agrees with the interval;
- two models that share no questions: a problem says so, the comparison and page say
  "unpaired".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.support.leaderboards import typed_leaderboard

from plumbline.leaderboard import build_leaderboard, parse_suite
from plumbline.leaderboard.scores import WILSON
from plumbline.leaderboard.ties import DIFFERENCE_METHOD
from plumbline.stats import wilson_interval
from plumbline.stats.mover import paired_proportion_difference
from plumbline.views.leaderboard_page import leaderboard_view

# one xdist group: the module's four tests read one set of Inspect runs (`logs`), built once
pytestmark = pytest.mark.xdist_group("leaderboard_small_samples")

QUESTIONS = [f"q{i}" for i in range(10)]
SHUFFLED = [f"r{i}" for i in range(10)]  # another sample of the task: no question in common
TARGET = "A"
# model -> the questions it answers correctly (of the ones it was asked)
RIGHT = {
    "seven": set(QUESTIONS[:7]),
    "three": {"q0", "q1", "q7"},
    "shuffled": set(SHUFFLED[:2]),
}

SUITE = parse_suite(
    {
        "suite": {"name": "tiny"},
        "category": [
            {
                "key": "exam",
                "name": "Exam",
                "description": "Ten questions.",
                "weight": 1.0,
                "scoring": "binary",
                "tasks": ["tiny_exam"],
                "scorer": "choice",
            }
        ],
    }
)


def _run(model: str, ids: list[str], log_dir: Path) -> None:
    from inspect_ai import Task, task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import choice
    from inspect_ai.solver import multiple_choice

    def generate(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
        key = messages[-1].text.split("[", 1)[1].split("]", 1)[0]
        letter = TARGET if key in RIGHT[model] else "B"
        output = ModelOutput.from_content(model=model, content=f"ANSWER: {letter}")
        output.usage = ModelUsage(input_tokens=5, output_tokens=2, total_tokens=7)
        return output

    @task
    def tiny_exam() -> Task:
        samples = [
            Sample(id=q, input=f"[{q}] Which?", choices=["a", "b", "c", "d"], target=TARGET)
            for q in ids
        ]
        return Task(dataset=samples, solver=multiple_choice(), scorer=choice())

    inspect_eval(
        [tiny_exam()],
        model=get_model(f"mockllm/{model}", custom_outputs=generate),
        log_dir=str(log_dir),
        display="none",
    )


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tiny")
    _run("seven", QUESTIONS, root / "paired")
    _run("three", QUESTIONS, root / "paired")
    _run("seven", QUESTIONS, root / "unpaired")
    _run("shuffled", SHUFFLED, root / "unpaired")
    return root


def test_one_category_at_weight_one_shows_its_own_interval(logs: Path) -> None:
    board = build_leaderboard(logs / "paired", SUITE)
    seven = board.model("mockllm/seven")
    category = seven.categories["exam"].interval
    wilson = wilson_interval(7, 10).interval
    assert category is not None and category.method == WILSON
    assert (category.low, category.high) == pytest.approx((wilson.low, wilson.high))
    assert round(category.low, 3) == 0.397 and round(category.high, 3) == 0.892
    overall = seven.overall_interval
    assert seven.overall == pytest.approx(0.7)
    assert (overall.low, overall.high) == pytest.approx((category.low, category.high), abs=1e-12)
    assert "MOVER" in overall.method
    document = board.to_dict()
    row = next(m for m in document["models"] if m["model"] == "mockllm/seven")
    assert row["intervals"]["overall"]["low"] == pytest.approx(wilson.low)
    assert row["intervals"]["overall"]["method"] == overall.method


def test_adjacent_difference_is_newcombes_paired_interval_inside_its_range(logs: Path) -> None:
    board = build_leaderboard(logs / "paired", SUITE)
    (comparison,) = board.comparisons
    assert (comparison.higher, comparison.lower) == ("mockllm/seven", "mockllm/three")
    # seven − three on the same 10 questions: both right on q0, q1; only seven on q2–q6;
    # only three on q7; neither on q8, q9.
    expected = paired_proportion_difference(2, 5, 1, 2)
    assert comparison.difference == pytest.approx(0.4)
    assert comparison.interval.low == pytest.approx(float(expected.low))
    assert comparison.interval.high == pytest.approx(float(expected.high))
    assert comparison.interval.low is not None and comparison.interval.high is not None
    assert -1.0 <= comparison.interval.low < comparison.difference < comparison.interval.high <= 1.0
    assert comparison.interval.method == DIFFERENCE_METHOD
    assert comparison.unpaired == []
    # the p-value is the interval inverted: below 0.05 exactly when 0 is outside it
    assert comparison.pvalue is not None
    assert (comparison.pvalue < 0.05) == (comparison.interval.low > 0)


def test_models_sharing_no_questions_are_reported_unpaired(logs: Path, tmp_path: Path) -> None:
    board = build_leaderboard(logs / "unpaired", SUITE)
    (comparison,) = board.comparisons
    assert comparison.unpaired == ["exam"]
    assert comparison.shared_questions == {"exam": 0}
    assert comparison.interval.low is not None and comparison.interval.high is not None
    assert -1.0 <= comparison.interval.low <= comparison.interval.high <= 1.0
    problems = [p for p in board.problems if p.kind == "unpaired"]
    assert len(problems) == 1 and problems[0].category == "exam"
    assert "unpaired" in problems[0].message and "share 0 questions" in problems[0].message
    document = board.to_dict()
    assert document["comparisons"][0]["unpaired"] == ["exam"]
    view = leaderboard_view(*typed_leaderboard(document))
    assert view.comparisons[0].unpaired == ["exam"]


def test_every_bound_of_a_random_leaderboard_stays_in_range(logs: Path) -> None:
    board = build_leaderboard([logs / "paired", logs / "unpaired"], SUITE)
    for entry in board.models:
        interval = entry.overall_interval
        assert interval.low is not None and interval.high is not None
        assert 0.0 <= interval.low <= entry.overall <= interval.high <= 1.0
    for comparison in board.comparisons:
        assert comparison.interval.low is not None and comparison.interval.high is not None
        assert np.all(np.array([comparison.interval.low, comparison.interval.high]) >= -1.0)
        assert np.all(np.array([comparison.interval.low, comparison.interval.high]) <= 1.0)
