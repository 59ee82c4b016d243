"""One rule for reruns, whoever reads the logs: the leaderboard, its drill-down samples and the
Parquet export keep the same sample of every question and epoch (`leaderboard.logs`).

The logs are real Inspect runs of the original SA Bench project's tasks (tests/support/
original_sa_bench.py), then two reruns, each newer by more than Inspect's one-second stamp:

- `weak` reruns its architecture questions through `architecture_design_llm_judge`, an alias of
  `architecture_design` in the sa-bench suite (one question set) scored by the judge, whose
  numbers are half the heuristic's: the judge's log wins every design question. (The drill-down
  used to keep both tasks' samples, since it told questions apart by task.)
- `good` reruns `aws_solutions_architect` as it is: the newer log wins every question.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import polars as pl
import pytest
from tests.support.original_sa_bench import DESIGNS, QUESTIONS, SCRIPT, run_original

from plumbline.app.frames import leaderboard_frame
from plumbline.leaderboard.board import build_leaderboard
from plumbline.leaderboard.samples import read_leaderboard_samples
from plumbline.leaderboard.suite import load_suite
from plumbline.records.adapters.inspect_log import task_name

# one xdist group: both tests read the same reruns (`reruns`), made once
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("one_log_rule")]


@pytest.fixture(scope="module")
def reruns(original_logs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("reruns")
    shutil.copytree(original_logs, root / "first")
    time.sleep(1.1)  # Inspect stamps `created` to the second
    run_original(root / "judge", "weak", ["architecture_design_llm_judge"])
    run_original(root / "again", "good", ["aws_solutions_architect"])
    return root


def _kept_rows(frame: pl.DataFrame) -> set[tuple[str, str, str, str, int, float | None]]:
    rows = frame.filter(~pl.col("superseded"))
    return {
        (r["model"], r["category"], r["task_name"], r["id"], r["epoch"], r["value"])
        for r in rows.iter_rows(named=True)
    }


def test_the_leaderboard_samples_and_parquet_keep_the_same_samples(reruns: Path) -> None:
    board = build_leaderboard(reruns, "sa-bench", workers=1)
    document = board.document()
    samples = read_leaderboard_samples(document, [reruns])
    frame = leaderboard_frame([reruns], load_suite("sa-bench"), workers=1)

    assert samples.problems == []  # the samples add up to the board's numbers
    drill_down = {
        (s.model, s.category, task_name(s.task), s.sample_id, s.epoch, s.value)
        for s in samples.samples
    }
    assert drill_down == _kept_rows(frame)
    # each kept row once per (model, category, question, epoch)
    assert len(drill_down) == len(samples.samples) == frame.filter(~pl.col("superseded")).height

    weak = [s for s in samples.samples if s.model == "mockllm/weak"]
    weak_designs = [s for s in weak if s.category == "architecture_design"]
    judged = {name: score / 2 for name, score in SCRIPT["weak"]["design"].items()}
    assert {task_name(s.task) for s in weak_designs} == {"architecture_design_llm_judge"}
    assert {s.sample_id: s.value for s in weak_designs} == pytest.approx(judged)
    score = board.model("mockllm/weak").categories["architecture_design"]
    assert score.value == pytest.approx(sum(judged.values()) / len(DESIGNS))

    good_exam = [s for s in samples.samples if s.model == "mockllm/good"]
    good_exam = [s for s in good_exam if s.category == "practice_exam"]
    assert len(good_exam) == len(QUESTIONS)
    assert {s.log for s in good_exam} == {
        str(path) for path in (reruns / "again").iterdir() if path.suffix == ".eval"
    }


def test_the_parquet_marks_what_the_leaderboard_reports_as_replaced(reruns: Path) -> None:
    board = build_leaderboard(reruns, "sa-bench", workers=1)
    replaced = sum(p.count or 0 for p in board.problems if p.kind == "duplicate_samples")
    frame = leaderboard_frame([reruns], load_suite("sa-bench"), workers=1)
    superseded = frame.filter(pl.col("superseded"))
    assert superseded.height == replaced == len(DESIGNS) + len(QUESTIONS)
    assert not any("judge" in log or "again" in log for log in superseded["log"])
    assert set(superseded["task_name"]) == {"architecture_design", "aws_solutions_architect"}
