"""Run records: the JSON Schema and the model agree; every file shape reads the same; bad records
are reported as file:line: field: problem and excluded (or fail fast with strict)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from pydantic import ValidationError

from plumbline.records.io import InvalidRecordError
from plumbline.records.run_record import (
    REQUIRED_FIELDS,
    SCHEMA_VERSION,
    RunRecord,
    read_run_records,
    run_record_schema,
)

EXAMPLE = Path(__file__).parents[2] / "src/plumbline/examples/agent_runs.jsonl"


def run(**overrides: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "task_id": "t1",
        "arm": "a",
        "repeat": 1,
        "success": True,
        "duration_seconds": 12.5,
        "total_cost_usd": 0.25,
        "input_tokens": 100,
        "output_tokens": 20,
        "cache_read_tokens": 300,
        "cache_write_tokens": 40,
    }
    record.update(overrides)
    return record


def schema_accepts(record: dict[str, Any]) -> bool:
    validator = jsonschema.Draft202012Validator(
        run_record_schema(), format_checker=jsonschema.FormatChecker()
    )
    return validator.is_valid(record)


def model_accepts(record: dict[str, Any]) -> bool:
    try:
        RunRecord.model_validate(record)
    except ValidationError:
        return False
    return True


def without(key: str) -> dict[str, Any]:
    record = run()
    del record[key]
    return record


CASES: list[tuple[str, dict[str, Any], bool]] = [
    ("complete", run(), True),
    ("nullable cost and tokens", run(total_cost_usd=None, input_tokens=None), True),
    ("integer task id", run(task_id=17), True),
    ("extra harness field", run(prompt_file="p.md", workspace="/w"), True),
    (
        "optional fields",
        run(step_count=3, timed_out=True, started_at_utc="2026-01-01T00:00:00Z"),
        True,
    ),
    *[(f"missing {key}", without(key), False) for key in REQUIRED_FIELDS],
    ("success as string", run(success="yes"), False),
    ("success as 1", run(success=1), False),
    ("negative repeat", run(repeat=-1), False),
    ("fractional repeat", run(repeat=1.5), False),
    ("negative duration", run(duration_seconds=-1), False),
    ("null duration", run(duration_seconds=None), False),
    ("negative tokens", run(output_tokens=-3), False),
    ("fractional tokens", run(output_tokens=3.5), False),
    ("tokens as string", run(input_tokens="100"), False),
    ("negative cost", run(total_cost_usd=-0.1), False),
    ("empty arm", run(arm=""), False),
    ("empty task id", run(task_id=""), False),
    ("timed_out null", run(timed_out=None), False),
    (
        "per-model usage",
        run(
            model_usage=[
                {"model": "haiku", "input_tokens": 5, "output_tokens": 2, "total_cost_usd": 0.1},
                {"model": "opus", "input_tokens": None, "cache_read_tokens": 9, "extra": "kept"},
            ]
        ),
        True,
    ),
    ("empty per-model usage", run(model_usage=[]), True),
    ("per-model usage without a model", run(model_usage=[{"input_tokens": 5}]), False),
    ("per-model usage with an empty model", run(model_usage=[{"model": ""}]), False),
    ("per-model usage negative", run(model_usage=[{"model": "m", "output_tokens": -1}]), False),
    ("per-model usage too large", run(model_usage=[{"model": "m", "input_tokens": 10**13}]), False),
    ("per-model usage fractional", run(model_usage=[{"model": "m", "input_tokens": 1.5}]), False),
    ("per-model usage as object", run(model_usage={"m": {"input_tokens": 1}}), False),
    ("per-model usage null entry", run(model_usage=[None]), False),
]


@pytest.mark.parametrize(("label", "record", "valid"), CASES, ids=[c[0] for c in CASES])
def test_schema_and_model_agree(label: str, record: dict[str, Any], valid: bool) -> None:
    assert schema_accepts(record) is valid
    assert model_accepts(record) is valid


def test_schema_is_versioned_and_requires_the_seed_fields() -> None:
    schema = run_record_schema()
    assert schema["version"] == SCHEMA_VERSION
    assert SCHEMA_VERSION in schema["$id"]
    assert schema["required"] == list(REQUIRED_FIELDS)
    jsonschema.Draft202012Validator.check_schema(schema)


def test_bundled_example_is_valid_against_the_schema() -> None:
    lines = EXAMPLE.read_text().splitlines()
    assert len(lines) >= 60
    assert all(schema_accepts(json.loads(line)) for line in lines)


def test_derived_tokens_follow_the_seed() -> None:
    record = RunRecord.model_validate(run())
    assert record.total_tokens == 100 + 20 + 300 + 40
    assert record.non_cache_tokens == 120
    partial = RunRecord.model_validate(run(cache_read_tokens=None))
    assert partial.total_tokens is None
    assert partial.non_cache_tokens == 120


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def records_sample() -> list[dict[str, Any]]:
    return [
        run(task_id=f"t{i % 3}", arm="ab"[i % 2], repeat=i // 6, total_cost_usd=None)
        if i == 4
        else run(task_id=f"t{i % 3}", arm="ab"[i % 2], repeat=i // 6, duration_seconds=i + 0.5)
        for i in range(12)
    ]


def test_every_file_shape_reads_to_the_same_frame(tmp_path: Path) -> None:
    records = records_sample()
    jsonl = write_jsonl(tmp_path / "runs.jsonl", records)
    array = tmp_path / "runs.json"
    array.write_text(json.dumps(records, indent=2))
    pretty = tmp_path / "pretty.jsonl"
    pretty.write_text("\n".join(json.dumps(r, indent=2) for r in records))
    frames = [read_run_records([p]).frame.drop("file", "line") for p in (jsonl, array, pretty)]
    assert frames[0].height == 12
    assert frames[0]["total_cost_usd"].null_count() == 1  # null stays null, never 0
    assert_frame_equal(frames[0], frames[1])
    assert_frame_equal(frames[0], frames[2])


def test_lines_locate_records_in_every_shape(tmp_path: Path) -> None:
    records = records_sample()[:3]
    jsonl = tmp_path / "gaps.jsonl"
    jsonl.write_text(
        json.dumps(records[0])
        + "\n\n"
        + json.dumps(records[1])
        + "\n  \n"
        + json.dumps(records[2])
        + "\n"
    )
    assert read_run_records([jsonl]).frame["line"].to_list() == [1, 3, 5]
    pretty = tmp_path / "pretty.json"
    pretty.write_text("\n".join(json.dumps(r, indent=2) for r in records))
    height = json.dumps(records[0], indent=2).count("\n") + 1  # lines per record
    assert read_run_records([pretty]).frame["line"].to_list() == [1, 1 + height, 1 + 2 * height]


def test_invalid_records_are_reported_located_and_excluded(tmp_path: Path) -> None:
    records = [
        run(),
        run(repeat=-2, duration_seconds=-1.0),  # range errors: the columnar path reports them
        run(repeat=2),
        run(repeat=3, input_tokens=-5),
    ]
    path = write_jsonl(tmp_path / "runs.jsonl", records)
    table = read_run_records([path])
    assert table.frame["repeat"].to_list() == [1, 2]
    assert table.records_read == 4
    assert table.invalid_records == 2
    assert [str(e) for e in table.errors] == [
        f"{path}:2: repeat: Input should be greater than or equal to 0",
        f"{path}:2: duration_seconds: Input should be greater than or equal to 0",
        f"{path}:4: input_tokens: Input should be greater than or equal to 0",
    ]


def test_type_errors_and_missing_fields_are_reported_by_field(tmp_path: Path) -> None:
    records = [run(), run(repeat=2, success="yes"), without("total_cost_usd"), run(repeat=4)]
    path = write_jsonl(tmp_path / "runs.jsonl", records)
    with path.open("a") as handle:
        handle.write("{not json\n")
    table = read_run_records([path])
    assert table.frame["repeat"].to_list() == [1, 4]
    assert table.invalid_records == 3
    messages = [str(e) for e in table.errors]
    assert messages[0] == f"{path}:2: success: Input should be a valid boolean"
    assert messages[1] == f"{path}:3: total_cost_usd: Field required"
    assert messages[2].startswith(f"{path}:5: <json>: invalid JSON")


def test_strict_fails_on_the_first_invalid_record(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "runs.jsonl", [run(), run(repeat=-1), run(arm="")])
    with pytest.raises(InvalidRecordError, match=r"runs.jsonl:2: repeat"):
        read_run_records([path], strict=True)


def test_several_files_are_concatenated_with_their_names(tmp_path: Path) -> None:
    first = write_jsonl(tmp_path / "a.jsonl", [run(arm="a")])
    second = tmp_path / "b.json"
    second.write_text(json.dumps([run(arm="b"), run(arm="b", repeat=2)]))
    table = read_run_records([first, second])
    assert table.frame["file"].to_list() == [str(first), str(second), str(second)]
    assert table.files == [str(first), str(second)]
    assert table.frame.schema["success"] == pl.Boolean


def test_a_missing_key_is_reported_in_plain_jsonl(tmp_path: Path) -> None:
    no_arm = run(repeat=2)
    del no_arm["arm"]
    no_tokens = run(repeat=3, input_tokens=None)
    del no_tokens["input_tokens"]
    path = write_jsonl(tmp_path / "runs.jsonl", [run(), no_arm, no_tokens, run(repeat=4)])
    table = read_run_records([path])
    assert table.frame["repeat"].to_list() == [1, 4]
    messages = [str(e) for e in table.errors]
    assert any(m.startswith(f"{path}:2: arm: ") for m in messages)
    assert f"{path}:3: input_tokens: Field required" in messages


def test_records_validate_command(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from plumbline.cli.main import main

    good = write_jsonl(tmp_path / "good.jsonl", [run(), run(repeat=2)])
    ok = CliRunner().invoke(main, ["records", "validate", str(good), "--json"])
    assert ok.exit_code == 0
    assert json.loads(ok.output) == {
        "files": [str(good)],
        "records": 2,
        "valid": 2,
        "invalid": 0,
        "duplicate_runs": 0,
        "errors": [],
    }
    bad = write_jsonl(tmp_path / "bad.jsonl", [run(), run(repeat=-1)])
    failed = CliRunner().invoke(main, ["records", "validate", str(bad)])
    assert failed.exit_code == 1
    assert f"{bad}:2: repeat: Input should be greater than or equal to 0" in failed.output
    strict = CliRunner().invoke(main, ["records", "validate", str(bad), "--strict"])
    assert strict.exit_code == 2


def test_records_validate_flags_a_unit_recorded_twice(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from plumbline.cli.main import main

    first = write_jsonl(tmp_path / "a.jsonl", [run(run_id="r1"), run(arm="b", run_id="r2")])
    second = write_jsonl(tmp_path / "b.jsonl", [run(run_id="r3", success=False)])
    result = CliRunner().invoke(main, ["records", "validate", str(first), str(second), "--json"])
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert report["duplicate_runs"] == 1 and report["invalid"] == 0
    assert report["errors"] == [
        f"{second}:1: task_id: duplicate run: task 't1', arm 'a', repeat 1 (first at "
        f"{first}:1); a comparison leaves both out of its pairing"
    ]
    strict = CliRunner().invoke(main, ["records", "validate", str(first), str(second), "--strict"])
    assert strict.exit_code == 2 and "duplicate run" in strict.stderr
    # compare never drops them silently: both stay out of the pairing, and it says so
    runs = write_jsonl(
        tmp_path / "runs.jsonl",
        [run(task_id=f"t{i}", arm=arm, run_id=f"{arm}{i}") for i in range(3) for arm in "ab"]
        + [run(task_id="t0", arm="a", run_id="again", success=False)],
    )
    compared = CliRunner().invoke(
        main, ["compare", str(runs), "-t", "a", "-c", "b", "--resamples", "100", "--json"]
    )
    report = json.loads(compared.output)
    assert report["paired"]["pairs"] == 2
    assert any("duplicate run t0/a/repeat 1" in w for w in report["warnings"])


def test_chunked_scan_counts_needles_straddling_chunks_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plumbline.records import run_record

    text = b'{"total_cost_usd": 1}\n\n{"total_cost_usd": null}\n"total_cost_usd"'
    path = tmp_path / "runs.jsonl"
    path.write_bytes(text)
    needles = [b"\n", b'"total_cost_usd"', b"u"]
    for chunk in (1, 2, 3, 7, 16, 1 << 20):
        monkeypatch.setattr(run_record, "_CHUNK", chunk)
        counts, ends_with_newline = run_record._scan(path, needles)
        assert counts == [text.count(needle) for needle in needles], chunk
        assert ends_with_newline is False
    path.write_bytes(text + b"\n")
    assert run_record._scan(path, needles)[1] is True


@pytest.mark.parametrize(
    ("broken", "expected"),
    [
        ({"task_id": ""}, "task_id: must not be empty"),
        ({"arm": ""}, "arm: must not be empty"),
        ({"success": None}, "success: Field required (missing or null)"),
        ({"step_count": -1}, "step_count: Input should be greater than or equal to 0"),
        ({"total_cost_usd": -0.5}, "total_cost_usd: Input should be greater than or equal to 0"),
        (
            {"cache_write_tokens": -3},
            "cache_write_tokens: Input should be greater than or equal to 0",
        ),
    ],
)
def test_every_columnar_rule_is_checked_on_a_valid_looking_file(
    tmp_path: Path, broken: dict[str, Any], expected: str
) -> None:
    # 200 good records around one bad one, a null cost elsewhere: the reduction pass must
    # notice the bad record, and the row pass must locate it.
    records = [run(repeat=i, total_cost_usd=None if i == 7 else 0.25) for i in range(200)]
    records[120] = run(repeat=120, **broken)
    path = write_jsonl(tmp_path / "runs.jsonl", records)
    table = read_run_records([path])
    assert [str(e) for e in table.errors] == [f"{path}:121: {expected}"]
    assert table.frame.height == 199
    assert 120 not in table.frame["repeat"].to_list()
    assert table.frame["line"].to_list()[:3] == [1, 2, 3]


def test_a_missing_nullable_key_among_nulls_is_reported(tmp_path: Path) -> None:
    records = [run(repeat=i, total_cost_usd=None if i % 3 == 0 else 0.5) for i in range(30)]
    records[10] = without("total_cost_usd") | {"repeat": 10}
    path = write_jsonl(tmp_path / "runs.jsonl", records)
    table = read_run_records([path])
    assert [str(e) for e in table.errors] == [f"{path}:11: total_cost_usd: Field required"]
    assert table.frame["total_cost_usd"].null_count() == 10


USAGE_CASES = [case for case in CASES if "per-model" in case[0]]


@pytest.mark.parametrize(("label", "record", "valid"), USAGE_CASES, ids=[c[0] for c in USAGE_CASES])
def test_the_columnar_reader_agrees_on_per_model_usage(
    tmp_path: Path, label: str, record: dict[str, Any], valid: bool
) -> None:
    """Plain JSONL takes the columnar path: it must accept and reject `model_usage` as the
    model does, and read the entries the record-by-record reader reads."""
    records = [run(repeat=i) for i in range(50)]
    records[20] = record | {"repeat": 20}
    path = write_jsonl(tmp_path / "runs.jsonl", records)
    table = read_run_records([path])
    assert table.frame.height == (50 if valid else 49)
    assert (table.errors == []) is valid
    if not valid:
        assert all(str(e).startswith(f"{path}:21: model_usage") for e in table.errors)
        return
    read = table.frame.filter(pl.col("repeat") == 20)["model_usage"].to_list()[0]
    wanted = record["model_usage"]
    assert [entry["model"] for entry in read] == [entry["model"] for entry in wanted]
    assert [entry["input_tokens"] for entry in read] == [e.get("input_tokens") for e in wanted]
    slow = write_jsonl(tmp_path / "runs.json", records).read_text()
    array = tmp_path / "array.json"
    array.write_text("[" + ",".join(slow.splitlines()) + "]")
    assert_frame_equal(
        read_run_records([array]).frame.drop("file", "line"), table.frame.drop("file", "line")
    )
