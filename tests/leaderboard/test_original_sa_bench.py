"""The original SA Bench project's logs, read as they are by the built-in `sa-bench` suite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.support.original_sa_bench import SCRIPT, expected, run_original

from plumbline.cli.main import main


def leaderboard(*args: Any) -> Any:
    return CliRunner().invoke(main, ["leaderboard", *map(str, args)], catch_exceptions=False)


@pytest.fixture
def logs(original_logs: Path) -> Path:
    return original_logs


def test_all_three_categories_with_no_suite_file(logs: Path, tmp_path: Path) -> None:
    out = tmp_path / "board.json"
    result = leaderboard(logs, "-o", out)
    assert result.exit_code == 0, result.output
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["problems"] == [] and document["failed_models"] == []
    by_model = {entry["model"]: entry for entry in document["models"]}
    for name in SCRIPT:
        entry, want = by_model[f"mockllm/{name}"], expected(name)
        assert entry["missing"] == []
        for key, value in want.items():
            assert entry[key] == pytest.approx(value, abs=1e-12), (name, key)
    cdk = document["_metadata"]["categories"]["cdk_synth"]
    assert cdk["scorers"] == ["cdk_verify", "cdk_verify_local"]
    assert sorted(cdk["scorers_read"]) == ["cdk_verify", "cdk_verify_local"]
    # aws_cdk_synth_local runs aws_cdk_synth's questions: the two models are paired on them
    assert document["comparisons"][0]["shared_questions"]["cdk_synth"] == 4


def test_a_category_no_log_feeds_is_reported_and_exits_1(tmp_path: Path) -> None:
    logs = tmp_path / "only-design"
    run_original(logs, "good", ["architecture_design"])
    out = tmp_path / "board.json"
    result = leaderboard(logs, "-o", out)
    assert result.exit_code == 1
    assert "incomplete leaderboard" in result.output
    document = json.loads(out.read_text(encoding="utf-8"))
    empty = sorted(p["category"] for p in document["problems"] if p["kind"] == "category_empty")
    assert empty == ["cdk_synth", "practice_exam"]


def test_a_model_with_no_scored_sample_is_failed_not_ranked(logs: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    run_original(broken, "broken", ["aws_solutions_architect", "architecture_design"])
    out = tmp_path / "board.json"
    result = leaderboard(logs, broken, "-o", out)
    assert result.exit_code == 0, result.output
    document = json.loads(out.read_text(encoding="utf-8"))
    assert [entry["model"] for entry in document["models"]] == ["mockllm/good", "mockllm/weak"]
    (failed,) = document["failed_models"]
    assert failed["model"] == "mockllm/broken" and failed["errors"] == 6 + 3
    assert any(p["kind"] == "model_failed" for p in document["problems"])
    assert "failed (not ranked" in result.output


def test_models_scored_on_different_questions_are_reported(tmp_path: Path) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model
    from tests.support.original_sa_bench import model_fn, tasks

    logs = tmp_path / "limited"
    run_original(logs, "good", ["aws_solutions_architect", "architecture_design", "aws_cdk_synth"])
    # weak answered only a different part of the exam (as an unseeded shuffle + limit does)
    inspect_eval(
        tasks()["aws_solutions_architect"](),
        model=get_model("mockllm/weak", custom_outputs=model_fn("weak")),
        log_dir=str(logs),
        sample_id=["q3", "q4", "q5"],
        display="none",
    )
    run_original(logs, "weak", ["architecture_design", "aws_cdk_synth"])
    out = tmp_path / "board.json"
    assert leaderboard(logs, "-o", out).exit_code == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    (unpaired,) = [p for p in document["problems"] if p["kind"] == "unpaired_questions"]
    assert unpaired["category"] == "practice_exam" and unpaired["count"] == 3
    assert "mockllm/good and mockllm/weak share 3" in unpaired["message"]


@pytest.mark.parametrize(
    ("task", "scorer", "factor"),
    [("architecture_interpretation", "architecture_scorer", 1.0),
     ("architecture_design_llm_judge", "llm_judge_scorer", 0.5)],
)  # fmt: skip
def test_the_original_extra_architecture_tasks_count_under_architecture(
    tmp_path: Path, task: str, scorer: str, factor: float
) -> None:
    logs = tmp_path / "logs"
    run_original(logs, "good", [task])
    out = tmp_path / "board.json"
    leaderboard(logs, "-o", out)
    document = json.loads(out.read_text(encoding="utf-8"))
    assert not [p for p in document["problems"] if p["kind"] == "no_category"]
    (entry,) = document["models"]
    design = SCRIPT["good"]["design"]
    assert entry["architecture_design"] == pytest.approx(factor * sum(design.values()) / 3)
    category = document["_metadata"]["categories"]["architecture_design"]
    assert category["scorers_read"] == [scorer]


def test_the_three_architecture_tasks_are_one_question_set(tmp_path: Path) -> None:
    """They run one dataset: each question counts once (the newest log's), never three times."""
    import time

    logs = tmp_path / "logs"
    run_original(logs, "good", ["architecture_design", "architecture_interpretation"])
    time.sleep(1.1)  # Inspect stamps `created` to the second
    run_original(logs, "good", ["architecture_design_llm_judge"])
    out = tmp_path / "board.json"
    leaderboard(logs, "-o", out)
    document = json.loads(out.read_text(encoding="utf-8"))
    (entry,) = document["models"]
    design = SCRIPT["good"]["design"]
    assert entry["architecture_design"] == pytest.approx(0.5 * sum(design.values()) / 3)
    assert entry["counts"]["architecture_design"]["n"] == 3
    duplicates = [p for p in document["problems"] if p["kind"] == "duplicate_samples"]
    assert duplicates and all(p["category"] == "architecture_design" for p in duplicates)
