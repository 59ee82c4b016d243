"""The fast reader of `.eval` logs against Inspect's own readers, on logs of real Inspect runs.

Whatever the fast reader returns must be what the Inspect path returns for the same log; what
it cannot vouch for (NaN scores, a damaged archive) it declines, and the log is read through
Inspect, errors worded as before.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from plumbline.records.eval_zip import Declined, read_members
from plumbline.records.fast_eval_logs import (
    fast_log_header,
    fast_samples_and_names,
    fast_score_columns,
)
from plumbline.records.inspect_logs import (
    _inspect_log_header,
    _inspect_samples_and_names,
    read_log_header,
    read_sample_scores,
    read_samples_and_names,
    read_score_columns,
)
from plumbline.records.log_files import _listed, _listed_local, local_path
from plumbline.records.log_scores import LogReadError, ScoreColumns

# sample id -> the Score the scorer returns (None: the model call raises, so the sample errors)
SCORES: dict[str, dict[str, Any]] = {
    "c": {"value": "C", "answer": "A"},
    "word": {"value": " yes "},
    "number": {"value": 0.25, "explanation": "quarter"},
    "text": {"value": "0.75"},
    "list": {"value": [1, 0, "C", "I"]},
    "dict": {"value": {"a": 1.0, "b": None, "c": "P"}},
    "unreadable": {"value": "maybe"},
    "out_of_range": {"value": 7},
    "no_answer": {"value": "I", "reason": "invalid_response_format"},
    "no_code": {"value": 0, "metadata": {"outcome": "extraction_failed"}},
    "legacy_reason": {"value": "I", "metadata": {"unscored_reason": "no_response"}},
    "boom": {},
}


def _run(log_dir: Path, scores: dict[str, dict[str, Any]], name: str) -> Path:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import Score, Target, mean, scorer
    from inspect_ai.solver import TaskState, generate

    @scorer(metrics=[mean()], name="kinds")
    def kinds() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            return Score(**scores[str(state.sample_id)])

        return score

    @scorer(metrics=[mean()], name="other")
    def other() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=1)

        return score

    def respond(messages: list[Any], tools: Any, choice: Any, config: Any) -> Any:
        if "boom" in messages[-1].text:
            raise RuntimeError("provider failed")
        output = ModelOutput.from_content(model="reader", content="ok")
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer
        return output

    task = Task(
        dataset=[Sample(id=key, input=f"sample {key}") for key in scores],
        solver=generate(),
        scorer=[kinds(), other()],
        name=name,
    )
    (log,) = inspect_eval(
        task,
        model=get_model("mockllm/reader", custom_outputs=respond),
        epochs=2,
        log_dir=str(log_dir),
        fail_on_error=False,
        display="none",
    )
    return Path(log.location)


@pytest.fixture(scope="module")
def varied(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(tmp_path_factory.mktemp("varied"), SCORES, "varied_task")


@pytest.fixture(scope="module")
def with_nan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    scores = {"c": {"value": "C"}, "unscored": {"value": math.nan}}
    return _run(tmp_path_factory.mktemp("nan"), scores, "nan_task")


def test_fast_header_is_inspects(varied: Path) -> None:
    assert fast_log_header(str(varied)) == _inspect_log_header(str(varied))
    assert fast_log_header(str(varied)).scorers == ("kinds", "other")


@pytest.mark.parametrize("scorers", [None, {"kinds"}, {"kinds", "other", "absent"}])
def test_fast_samples_are_inspects(varied: Path, scorers: set[str] | None) -> None:
    fast = fast_samples_and_names(str(varied), scorers)
    plain = _inspect_samples_and_names(str(varied), scorers)
    assert fast == plain
    samples, names = fast
    assert names == {"kinds", "other"}
    by_id = {(s.id, s.epoch): s for s in samples}
    if scorers is None or "kinds" in scorers:
        assert by_id[("no_answer", 1)].no_answer == {"kinds"}
        assert by_id[("no_code", 2)].no_answer == {"kinds"}
        assert by_id[("legacy_reason", 1)].no_answer == {"kinds"}
        assert "kinds" in by_id[("unreadable", 1)].unreadable
        assert by_id[("boom", 1)].error is not None


def test_fast_columns_are_the_samples_columns(varied: Path) -> None:
    wanted = {"kinds", "absent"}
    columns, names = fast_score_columns(str(varied), wanted)
    samples, plain_names = _inspect_samples_and_names(str(varied), wanted)
    expected = ScoreColumns.from_samples(samples)
    assert names == plain_names
    assert columns.ids == expected.ids and columns.epochs == expected.epochs
    assert columns.errors == expected.errors and len(columns.errors) == 2
    assert columns.unreadable == expected.unreadable
    assert columns.no_answer == expected.no_answer
    assert set(columns.values) == set(expected.values) == {"kinds"}
    for scorer in ("kinds", "absent"):
        assert columns.values_of(scorer).tolist() == pytest.approx(
            expected.values_of(scorer).tolist(), nan_ok=True
        )
    assert math.isnan(columns.values_of("absent")[0])


def test_nan_scores_are_read_through_inspect(with_nan: Path) -> None:
    with pytest.raises(Declined):
        fast_samples_and_names(str(with_nan), None)
    samples, _ = read_samples_and_names(with_nan, None)
    assert samples == _inspect_samples_and_names(str(with_nan), None)[0]
    assert {s.id: s.value("kinds") for s in samples} == {"c": 1.0, "unscored": None}
    columns, _ = read_score_columns(with_nan, {"kinds"})
    rows = zip(columns.ids, columns.epochs, columns.values_of("kinds").tolist(), strict=True)
    values = {(sample_id, epoch): value for sample_id, epoch, value in rows}
    assert values[("c", 2)] == 1.0 and math.isnan(values[("unscored", 2)])


def test_rewritten_header_is_read_as_inspect_reads_it(varied: Path, tmp_path: Path) -> None:
    """`write_eval_log(header_only=True)` rewrites header.json inside the archive."""
    from inspect_ai.log import read_eval_log, write_eval_log

    copy = tmp_path / "copy.eval"
    shutil.copy(varied, copy)
    header = read_eval_log(str(copy), header_only=True)
    header.eval = header.eval.model_copy(update={"model": "other/model"})
    write_eval_log(header, str(copy), "eval", header_only=True)
    assert fast_log_header(str(copy)).model == "other/model"
    assert fast_log_header(str(copy)) == _inspect_log_header(str(copy))


def test_damaged_logs_report_inspects_errors(varied: Path, tmp_path: Path) -> None:
    data = varied.read_bytes()
    for name, content in {"cut.eval": data[: len(data) // 2], "tiny.eval": data[:200]}.items():
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(Declined):
            read_members(path, ["header.json"])
        with pytest.raises(LogReadError) as fast:
            read_log_header(path)
        with pytest.raises(LogReadError) as plain:
            read_log_header(path, fast=False)
        assert str(fast.value) == str(plain.value)
        with pytest.raises(LogReadError) as fast_samples:
            read_sample_scores(path)
        with pytest.raises(LogReadError) as plain_samples:
            read_samples_and_names(path, None, fast=False)
        assert str(fast_samples.value) == str(plain_samples.value)


def test_local_listing_is_inspects(varied: Path, tmp_path: Path) -> None:
    root = tmp_path / "logs"
    (root / "deep" / ".hidden").mkdir(parents=True)
    shutil.copy(varied, root / "deep" / varied.name)
    shutil.copy(varied, root / "deep" / ".hidden" / "renamed.eval")
    (root / "2026-01-01T00-00-00_task_id.json").write_text("{}")
    (root / "notes.json").write_text("{}")
    (root / "deep" / "link.eval").symlink_to(varied)
    for directory in (str(root), str(root) + "/", str(root / "deep")):
        ours = sorted(local_path(name) for name in _listed_local(directory))
        assert ours == sorted(local_path(name) for name in _listed(directory))
        assert root / "notes.json" not in ours and root / "deep" / varied.name in ours


def test_an_integer_past_float_range_is_no_score() -> None:
    from plumbline.records.fast_eval_logs import _score_float
    from plumbline.records.log_scores import UnreadableScore, score_value_to_float

    for convert in (score_value_to_float, _score_float):
        with pytest.raises(UnreadableScore):
            convert(10**400)
        assert convert(2**60) == float(2**60) and convert(True) == 1.0
