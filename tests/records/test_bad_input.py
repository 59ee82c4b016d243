"""Bad bytes become `file:line: field: problem`, never a crash and never a silent default.

Each case is a real example record (made by scripts/make_example_*.py) corrupted the way the
adversarial pass of issue 19 corrupted it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plumbline.records.io import UnreadableFileError, iter_json_values, read_json_file
from plumbline.records.log_scores import UnreadableScore, score_value_to_float
from plumbline.records.run_record import read_run_records
from plumbline.records.trial_record import read_trial_records

EXAMPLES = Path(__file__).parents[2] / "src/plumbline/examples"


def example(name: str, count: int = 3) -> list[dict[str, Any]]:
    lines = (EXAMPLES / name).read_text(encoding="utf-8").splitlines()[:count]
    return [json.loads(line) for line in lines]


def jsonl(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


def problems(errors: list[Any]) -> list[str]:
    return [str(error) for error in errors]


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + jsonl(example("agent_runs.jsonl")).encode())
    table = read_run_records([path])
    assert table.errors == [] and table.frame.height == 3
    trials = tmp_path / "trials.jsonl"
    trials.write_bytes(b"\xef\xbb\xbf" + jsonl(example("trials.jsonl")).encode())
    assert len(read_trial_records([trials]).records) == 3


def test_a_line_that_is_not_utf8_is_reported_and_the_rest_is_read(tmp_path: Path) -> None:
    first, second, third = (json.dumps(r).encode() for r in example("agent_runs.jsonl"))
    second = second.replace(b'"arm": "', b'"arm": "\xff\xfe', 1)
    path = tmp_path / "runs.jsonl"
    path.write_bytes(b"\n".join([first, second, third]) + b"\n")
    table = read_run_records([path])
    assert table.frame.height == 2
    (problem,) = problems(table.errors)
    assert problem.startswith(f"{path}:2: <encoding>: not UTF-8: byte 0xff at column ")


def test_deep_nesting_is_a_problem_not_a_recursion_error(tmp_path: Path) -> None:
    records = example("trials.jsonl")
    path = tmp_path / "trials.jsonl"
    path.write_text(
        json.dumps(records[0]) + "\n" + "[" * 100_000 + "\n" + json.dumps(records[1]) + "\n"
    )
    result = read_trial_records([path])
    assert len(result.records) == 2
    assert any(f"{path}:2: <json>: nested more than" in p for p in problems(result.errors))
    shallow_but_deep = tmp_path / "deep.jsonl"
    nested: Any = 0
    for _ in range(200):
        nested = [nested]
    shallow_but_deep.write_text(json.dumps({**records[0], "extra": nested}) + "\n")
    result = read_trial_records([shallow_but_deep])
    assert result.records == []
    assert "nested more than 64 levels deep" in problems(result.errors)[0]


def test_an_array_on_the_first_line_does_not_hide_the_records_after_it(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text("[1, 2]\n" + jsonl(example("agent_runs.jsonl")))
    table = read_run_records([path])
    assert table.frame.height == 3
    text = "\n".join(problems(table.errors))
    assert f"{path}:1: <record>: not a JSON object" in text
    assert f"{path}:2: <json>: more data after the JSON array that opens on line 1" in text


@pytest.mark.parametrize(
    ("field", "raw", "expected"),
    [
        ("latency_seconds", "Infinity", "<json>: invalid JSON: Infinity is not valid JSON"),
        ("latency_seconds", "1e999", "<json>: invalid JSON: the number 1e999 is out of range"),
        ("latency_seconds", "NaN", "<json>: invalid JSON: NaN is not valid JSON"),
        ("latency_seconds", "1e308", "latency_seconds: Input should be less than or equal to"),
        ("input_tokens", "1e30", "input_tokens: "),
        ("input_tokens", "10000000000", "input_tokens: Input should be less than or equal to"),
        ("timestamp", '"not a date"', "timestamp: Input should be a valid datetime"),
        ("trial", "-1", "trial: Input should be greater than or equal to 0"),
    ],
)
def test_trial_numbers_and_dates_are_bounded(
    tmp_path: Path, field: str, raw: str, expected: str
) -> None:
    good, bad = example("trials.jsonl", 2)
    bad[field] = "__RAW__"
    path = tmp_path / "trials.jsonl"
    path.write_text(jsonl([good, bad]).replace('"__RAW__"', raw))
    result = read_trial_records([path])
    assert len(result.records) == 1
    (problem,) = problems(result.errors)
    assert problem.startswith(f"{path}:2: {expected}"), problem


def test_time_to_first_token_cannot_exceed_the_latency(tmp_path: Path) -> None:
    (record,) = [r for r in example("trials.jsonl", 40) if r["ttft_seconds"]][:1]
    record["ttft_seconds"] = record["latency_seconds"] + 1
    path = tmp_path / "trials.jsonl"
    path.write_text(jsonl([record]))
    result = read_trial_records([path])
    assert result.records == []
    assert "is longer than latency_seconds" in problems(result.errors)[0]


def _write(path: Path, records: list[dict[str, Any]], pretty: bool) -> None:
    # JSONL takes the columnar fast path; pretty-printed records the record-by-record reader:
    # both must find the same problems.
    if pretty:
        path.write_text("".join(json.dumps(r, indent=2) + "\n" for r in records))
    else:
        path.write_text(jsonl(records))


@pytest.mark.parametrize("pretty", [False, True], ids=["fast path", "record by record"])
def test_run_record_dates_their_order_and_bounds(tmp_path: Path, pretty: bool) -> None:
    records = example("agent_runs.jsonl", 5)
    records[0]["started_at_utc"] = "not a date"
    records[1]["started_at_utc"] = "2026-01-02T00:00:00Z"
    records[1]["ended_at_utc"] = "2026-01-01T23:59:59+00:00"
    records[2]["duration_seconds"] = 1e308
    records[3]["input_tokens"] = 10**15
    path = tmp_path / "runs.jsonl"
    _write(path, records, pretty)
    table = read_run_records([path])
    assert table.frame.height == 1
    assert table.invalid_records == 4
    lines = {error.line: (error.field, error.problem) for error in table.errors}
    assert len(lines) == 4 and min(lines) == 1
    found = sorted(lines.values())
    assert any(f == "started_at_utc" and p.endswith("date-time: 'not a date'") for f, p in found)
    assert any(f == "ended_at_utc" and "ends before it starts" in p for f, p in found)
    assert any(f == "duration_seconds" and "less than or equal to" in p for f, p in found)
    assert any(f == "input_tokens" and "less than or equal to" in p for f, p in found)


@pytest.mark.parametrize("pretty", [False, True], ids=["fast path", "record by record"])
def test_a_duplicate_run_id_is_reported_and_counted_once(tmp_path: Path, pretty: bool) -> None:
    records = example("agent_runs.jsonl", 3)
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _write(first, records, pretty)
    copy = dict(records[1], repeat=99)  # the same run under another repeat
    _write(second, [copy], pretty)
    table = read_run_records([first, second])
    assert table.frame.height == 3
    (problem,) = table.errors
    assert problem.path == str(second) and problem.line == 1 and problem.field == "run_id"
    assert f"duplicate run_id {records[1]['run_id']!r} (first at {first}:" in problem.problem


def test_unparseable_scores_raise_instead_of_reading_zero() -> None:
    assert score_value_to_float("C") == 1.0
    assert score_value_to_float("0.25") == 0.25
    assert score_value_to_float([1, "I"]) == 0.5
    with pytest.raises(UnreadableScore, match="'banana' is not a number"):
        score_value_to_float("banana")
    with pytest.raises(UnreadableScore):
        score_value_to_float({"a": 1, "b": "banana"})


def test_json_documents_are_strict_and_located(tmp_path: Path) -> None:
    path = tmp_path / "board.json"
    path.write_text('{\n  "models": [\n    {"overall": NaN}\n  ]\n}\n')
    with pytest.raises(UnreadableFileError, match="NaN is not valid JSON"):
        read_json_file(path)
    path.write_bytes(b'{\n  "a": "\xff"\n}\n')
    with pytest.raises(UnreadableFileError) as raised:
        read_json_file(path)
    assert str(raised.value).startswith(f"{path}:2: not UTF-8: byte 0xff")
    path.write_bytes(b"\xef\xbb\xbf{}")
    assert read_json_file(path) == {}


def test_suite_files_with_bad_bytes_are_located(tmp_path: Path) -> None:
    from plumbline.agent.suite import SuiteError as AgentSuiteError
    from plumbline.agent.suite import load_suite as load_agent_suite
    from plumbline.leaderboard.suite import SuiteError, load_suite

    path = tmp_path / "suite.toml"
    path.write_bytes(b"[suite]\nname = 'x'\ntitle = '\xff\xfe'\n")
    with pytest.raises(SuiteError, match=r"suite.toml: line 3: not UTF-8: byte 0xff"):
        load_suite(path)
    with pytest.raises(AgentSuiteError, match=r"suite.toml:3: not UTF-8: byte 0xff"):
        load_agent_suite(path)
    path.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(SuiteError, match="invalid TOML"):
        load_suite(path)


def test_iter_json_values_never_raises_on_binary(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(bytes(range(256)) * 4)
    items = list(iter_json_values(path))
    assert items and all(not hasattr(item, "value") for item in items)


def test_a_lone_surrogate_escape_is_a_problem_not_a_crash_later(tmp_path: Path) -> None:
    records = example("agent_runs.jsonl", 2)
    path = tmp_path / "runs.json"  # pretty-printed: the record-by-record reader
    text = "".join(json.dumps(r, indent=2) + "\n" for r in records)
    path.write_text(text.replace('"with_skelly"', '"with\\ud800"', 1), encoding="utf-8")
    table = read_run_records([path])
    assert table.frame.height == 1
    assert "half of a surrogate pair" in str(table.errors[0])
    paired = tmp_path / "ok.json"
    paired.write_text('{"x": "\\ud83d\\ude00"}')
    assert read_json_file(paired) == {"x": "\U0001f600"}
