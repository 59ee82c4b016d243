"""The scripted models through the real SA Bench tasks and scorers in Inspect `eval()`."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval
from inspect_ai.log import EvalLog
from inspect_ai.scorer import value_to_float

from plumbline.suites.sa_bench.tasks import architecture_design, cdk_synth, practice_exam

to_float = value_to_float()


def run(task: object, model: str, log_dir: Path, **options: object) -> EvalLog:
    [log] = eval(task, model=model, log_dir=str(log_dir), display="none", **options)  # type: ignore[arg-type]
    assert log.status == "success", log.error
    assert log.samples is not None
    return log


def metric(log: EvalLog, name: str) -> float:
    assert log.results is not None
    return float(log.results.scores[0].metrics[name].value)


def answers(log: EvalLog) -> dict[str, str]:
    assert log.samples is not None
    return {str(sample.id): sample.output.completion for sample in log.samples}


def test_oracle_scores_one_on_the_practice_exam_under_any_shuffle(tmp_path: Path) -> None:
    first = run(practice_exam(seed=1, limit=20), "scripted/oracle", tmp_path)
    second = run(practice_exam(seed=2, limit=20), "scripted/oracle", tmp_path)
    for log in (first, second):
        assert metric(log, "accuracy") == 1.0
        assert log.samples is not None
        assert any(sample.metadata["multi_answer"] for sample in log.samples)
        assert all(sample.output.metadata["scripted"] for sample in log.samples)
    # the letters come from the prompt: a different shuffle gives different letters
    shared = answers(first).keys() & answers(second).keys()
    assert shared
    assert any(answers(first)[i] != answers(second)[i] for i in shared)


def test_oracle_scores_at_least_point_eight_on_architecture(tmp_path: Path) -> None:
    log = run(architecture_design(limit=6), "scripted/oracle", tmp_path)
    assert metric(log, "mean") >= 0.8


def test_weak_is_between_zero_and_one_and_reproducible(tmp_path: Path) -> None:
    task_a = practice_exam(limit=30)
    first = run(task_a, "scripted/weak", tmp_path / "a", seed=7)
    second = run(practice_exam(limit=30), "scripted/weak", tmp_path / "b", seed=7)
    assert 0.0 < metric(first, "accuracy") < 1.0
    assert answers(first) == answers(second)
    assert [s.score.value for s in first.samples or [] if s.score] == [
        s.score.value for s in second.samples or [] if s.score
    ]
    # order-independent: each answer depends on the seed and the prompt, not on what ran before
    whole = run(practice_exam(), "scripted/weak", tmp_path / "c", seed=7)
    assert all(answers(whole)[i] == answer for i, answer in answers(first).items())
    other_seed = run(practice_exam(limit=30), "scripted/weak", tmp_path / "d", seed=8)
    assert answers(other_seed) != answers(first)


def test_weak_architecture_is_partial(tmp_path: Path) -> None:
    oracle = run(architecture_design(limit=6), "scripted/oracle", tmp_path / "o")
    weak = run(architecture_design(limit=6), "scripted/weak", tmp_path / "w")
    assert 0.0 < metric(weak, "mean") < metric(oracle, "mean")
    for sample in weak.samples or []:
        assert len(sample.output.completion) < len(str(sample.target))


@pytest.mark.slow
def test_cdk_oracle_synthesizes_and_weak_shows_a_failure_mode(tmp_path: Path) -> None:
    # one prompt per model: synthesis is CPU-heavy
    oracle = run(cdk_synth(limit=1, seed=3), "scripted/oracle", tmp_path / "o")
    weak = run(cdk_synth(limit=1, seed=3), "scripted/weak", tmp_path / "w")
    [solved] = oracle.samples or []
    assert solved.scores is not None
    assert to_float(solved.scores["cdk_verify"].value) == 1.0
    assert str(solved.target).rstrip() in solved.output.completion
    [attempt] = weak.samples or []
    assert attempt.scores is not None
    # seeded: this prompt draws the "no app.synth()" failure, which synthesizes nothing
    assert attempt.output.metadata["behaviour"] == "missing_synth"
    assert to_float(attempt.scores["cdk_verify"].value) == 0.0
    assert "app.synth()" not in attempt.output.completion
