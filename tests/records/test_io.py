"""The shared record reader and writers: located records, atomic writes, repairable journals."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from plumbline.records.io import (
    InvalidRecordError,
    Located,
    RecordError,
    iter_json_values,
    read_records,
)
from plumbline.records.writing import JsonlAppender, _current_umask, write_atomic, write_json_atomic


class Point(BaseModel):
    name: str
    x: int = Field(ge=0)


def _values(path: Path) -> list[tuple[int, object]]:
    out: list[tuple[int, object]] = []
    for item in iter_json_values(path):
        assert isinstance(item, Located), item
        out.append((item.line, item.value))
    return out


def test_jsonl_records_are_located_by_line(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"name": "a", "x": 1}\n\n{"name": "b", "x": 2}\n')
    assert _values(path) == [(1, {"name": "a", "x": 1}), (3, {"name": "b", "x": 2})]


def test_json_array_records_are_located_by_line(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text(json.dumps([{"name": "a", "x": 1}, {"name": "b", "x": 2}], indent=2))
    assert [line for line, _ in _values(path)] == [2, 6]


def test_concatenated_pretty_printed_objects(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    objects = [{"name": n, "x": i} for i, n in enumerate("abc")]
    path.write_text("".join(json.dumps(o, indent=2) + "\n" for o in objects))
    assert _values(path) == [(1, objects[0]), (5, objects[1]), (9, objects[2])]


def test_a_broken_line_is_reported_and_reading_resumes(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"name": "a", "x": 1}\n{"name": "b", \n{"name": "c", "x": 3}\n')
    items = list(iter_json_values(path))
    assert isinstance(items[0], Located)
    assert isinstance(items[1], RecordError)
    assert items[1].line == 3
    assert str(items[1]).startswith(f"{path}:")
    assert isinstance(items[-1], Located) and items[-1].value == {"name": "c", "x": 3}


def test_unclosed_array_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text('[{"name": "a", "x": 1},\n')
    items = list(iter_json_values(path))
    assert isinstance(items[-1], RecordError)
    assert "never closed" in items[-1].problem


def test_read_records_reports_file_line_field_problem(tmp_path: Path) -> None:
    path = tmp_path / "points.jsonl"
    path.write_text('{"name": "a", "x": 1}\n{"name": "b", "x": -4}\n[1, 2]\n{"x": 3}\n')
    result = read_records([path], Point)
    assert [p.name for p in result.records] == ["a"]
    assert [str(e) for e in result.errors] == [
        f"{path}:2: x: Input should be greater than or equal to 0",
        f"{path}:3: <record>: not a JSON object",
        f"{path}:4: name: Field required",
    ]


def test_read_records_strict_raises_on_first_problem(tmp_path: Path) -> None:
    path = tmp_path / "points.jsonl"
    path.write_text('{"name": "a", "x": 1}\n{"name": "b", "x": "many"}\n{"x": 3}\n')
    with pytest.raises(InvalidRecordError, match=r"points\.jsonl:2: x: "):
        read_records([path], Point, strict=True)


def test_write_atomic_replaces_whole_file_and_leaves_no_temporaries(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "out.json"
    write_json_atomic(target, {"a": 1})
    write_json_atomic(target, {"b": 2})
    assert json.loads(target.read_text()) == {"b": 2}
    assert os.listdir(target.parent) == ["out.json"]


def test_write_json_atomic_refuses_nan_and_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    write_atomic(target, "old")
    with pytest.raises(ValueError):
        write_json_atomic(target, {"a": float("nan")})
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.json"]


def test_appender_repairs_a_partial_last_line(tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    journal.write_text('{"name": "a", "x": 1}\n{"name": "b", "x"')
    with JsonlAppender(journal) as appender:
        appender.append(Point(name="c", x=3))
    assert [v for _, v in _values(journal)] == [{"name": "a", "x": 1}, {"name": "c", "x": 3}]


def test_appender_survives_sigkill_between_records(tmp_path: Path) -> None:
    """A writer killed at any moment leaves only whole records (after the next open repairs it)."""
    journal = tmp_path / "j.jsonl"
    script = textwrap.dedent(
        f"""
        import os, signal
        from plumbline.records.io import JsonlAppender
        with JsonlAppender({str(journal)!r}) as a:
            for i in range(50):
                a.append({{"name": "n", "x": i}})
            a._handle.write('{{"name": "half')
            a._handle.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    completed = subprocess.run([sys.executable, "-c", script], check=False)
    assert completed.returncode == -9
    JsonlAppender(journal).close()
    assert [v["x"] for _, v in _values(journal)] == list(range(50))  # type: ignore[index]


def test_a_broken_pretty_printed_object_costs_only_itself(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    good = json.dumps({"name": "a", "x": 1}, indent=2)
    path.write_text(good + '\n{\n  "name": "b",\n  "x": \n}\n' + good + "\n")
    items = list(iter_json_values(path))
    assert [type(i).__name__ for i in items] == ["Located", "RecordError", "Located"]
    assert isinstance(items[1], RecordError) and items[1].line == 8


def test_write_atomic_gives_the_umask_mode_not_owner_only(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    _current_umask.cache_clear()  # read once per process; this test sets its own
    try:
        write_atomic(tmp_path / "out.txt", "x")
    finally:
        os.umask(previous)
        _current_umask.cache_clear()
    assert (tmp_path / "out.txt").stat().st_mode & 0o777 == 0o644


def test_write_atomic_never_sets_the_umask_to_read_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Setting the umask to read it races with other threads creating files (they would get
    # mode 0666 for a moment's worth of files): it is read without being changed.
    def no_umask(mask: int) -> int:
        raise AssertionError(f"os.umask({mask:o}) called while writing")

    expected = 0o666 & ~_current_umask()
    _current_umask.cache_clear()
    monkeypatch.setattr(os, "umask", no_umask)
    for name in ("a.txt", "b.txt"):
        write_atomic(tmp_path / name, "x")
        assert (tmp_path / name).stat().st_mode & 0o777 == expected
