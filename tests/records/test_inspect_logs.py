"""The streaming Inspect log reader, on logs written by running a real task with mockllm."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from plumbline.records.inspect_logs import (
    iter_log_scores,
    read_log_header,
    read_log_scores,
    read_sample_scores,
)
from plumbline.records.log_files import find_log_files
from plumbline.records.log_scores import LogReadError, score_value_to_float

# sample id -> the value the scorer returns (None: the model call raises, so the sample errors)
VALUES: dict[str, Any] = {
    "c": "C",
    "i": "I",
    "p": "P",
    "n": "N",
    "true": True,
    "number": 0.25,
    "yes": "yes",
    "dict": {"accuracy": 1.0, "completeness": 0.5, "quality": 0.0},
    "boom": None,
}
EXPECTED = {
    "c": 1.0,
    "i": 0.0,
    "p": 0.5,
    "n": 0.0,
    "true": 1.0,
    "number": 0.25,
    "yes": 1.0,
    "dict": 0.5,
}


def _run(log_dir: Path, fmt: str) -> Path:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import Score, Target, mean, scorer
    from inspect_ai.solver import TaskState, generate

    @scorer(metrics=[mean()])
    def kinds() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=VALUES[str(state.sample_id)])

        return score

    def respond(messages: list[Any], tools: Any, choice: Any, config: Any) -> Any:
        if "boom" in messages[-1].text:
            raise RuntimeError("provider failed")
        output = ModelOutput.from_content(model="reader", content="ok")
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    task = Task(
        dataset=[Sample(id=key, input=f"sample {key}") for key in VALUES],
        solver=generate(),
        scorer=kinds(),
        name="reader_task",
    )
    (log,) = inspect_eval(
        task,
        model=get_model("mockllm/reader", custom_outputs=respond),
        epochs=2,
        log_dir=str(log_dir),
        log_format=fmt,
        fail_on_error=False,
        display="none",
    )
    return Path(log.location)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("reader")
    return {fmt: _run(root / fmt, fmt) for fmt in ("eval", "json")}


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_header(logs: dict[str, Path], fmt: str) -> None:
    header = read_log_header(logs[fmt])
    assert header.format == fmt
    assert header.task == "reader_task"
    assert header.model == "mockllm/reader"
    assert header.epochs == 2
    assert header.status == "success"
    assert header.scorers == ("kinds",)
    assert header.dataset_samples == len(VALUES)
    assert header.created.tzinfo is not None


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_values_are_converted_as_inspect_does(logs: dict[str, Path], fmt: str) -> None:
    samples = read_sample_scores(logs[fmt])
    assert len(samples) == len(VALUES) * 2
    assert {(s.id, s.epoch) for s in samples} == {(k, e) for k in VALUES for e in (1, 2)}
    for sample in samples:
        if sample.id == "boom":
            assert sample.error is not None and "provider failed" in sample.error
            assert sample.value("kinds") is None
        else:
            assert sample.error is None
            assert sample.value("kinds") == pytest.approx(EXPECTED[str(sample.id)])
        assert sample.value("other") is None


def test_scorer_filter_and_names(logs: dict[str, Path]) -> None:
    result = read_log_scores(logs["eval"], scorers={"nothing"})
    assert result.score_names == frozenset({"kinds"})
    assert all(not sample.values for sample in result.samples)


def test_score_value_to_float_direct() -> None:
    assert score_value_to_float(None) is None
    assert score_value_to_float([1, 0, "C", "I"]) == 0.5
    assert score_value_to_float("0.75") == 0.75
    assert score_value_to_float(False) == 0.0
    assert score_value_to_float([]) is None


def test_find_log_files_and_unreadable_logs(logs: dict[str, Path], tmp_path: Path) -> None:
    root = tmp_path / "dir"
    (root / "deep").mkdir(parents=True)
    copy = root / "deep" / logs["eval"].name
    copy.write_bytes(logs["eval"].read_bytes())
    json_copy = root / "renamed-log.json"  # not Inspect's file name, but an Inspect log
    json_copy.write_bytes(logs["json"].read_bytes())
    (root / "logs.json").write_text('{"a": 1}')
    truncated = root / "cut.eval"
    truncated.write_bytes(logs["eval"].read_bytes()[:200])
    found = find_log_files([root, tmp_path / "absent"])
    assert sorted(found.logs) == sorted([copy, json_copy, truncated])
    assert found.ignored == [root / "logs.json"]
    assert found.missing == [tmp_path / "absent"]

    results = list(iter_log_scores(sorted(found.logs)))
    errors = [r for r in results if isinstance(r, LogReadError)]
    assert [e.path for e in errors] == [str(truncated)]
    with pytest.raises(LogReadError, match=r"cut\.eval"):
        read_log_header(truncated)
    broken_json = root / "2026-01-01T00-00-00_broken.json"
    broken_json.write_text('{"version": 2, "status": "success", "eval": ')
    with pytest.raises(LogReadError):
        read_log_scores(broken_json)
