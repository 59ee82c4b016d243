"""Readers without bounds (issue 27): a records file that is one endless line (`/dev/zero`, a
FIFO fed without newlines) grew memory until MemoryError. Every line is now bounded: past the
bound the read stops with a `file:line` problem, having read at most the bound of the line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from plumbline.core.limits import MAX_LINE_BYTES
from plumbline.records.io import (
    Located,
    RecordError,
    UnreadableFileError,
    iter_json_values,
    read_json_file,
    read_text_file,
)
from plumbline.records.lines import (
    DEFAULT_MAX_LINE_BYTES,
    LineTooLongError,
    bounded_lines,
    max_line_bytes,
    set_max_line_bytes,
)

LIMIT = 4096


@pytest.fixture
def small_limit() -> Iterator[int]:
    set_max_line_bytes(LIMIT)
    yield LIMIT
    set_max_line_bytes(None)


def _endless_fifo(path: Path, chunk: bytes = b"x" * 65536) -> threading.Thread:
    """A FIFO whose writer sends `chunk` forever (until the reader closes it)."""
    os.mkfifo(path)

    def write() -> None:
        try:
            with open(path, "wb") as out:
                while True:
                    out.write(chunk)
        except (BrokenPipeError, OSError):
            return

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def test_the_default_bound_is_documented_and_in_force() -> None:
    assert DEFAULT_MAX_LINE_BYTES == MAX_LINE_BYTES == 128 * 1024 * 1024
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert "--max-line-bytes" in readme and "128 MiB" in readme
    assert max_line_bytes() == MAX_LINE_BYTES


def test_dev_zero_is_a_located_error_not_memory_growth(small_limit: int) -> None:
    items = list(iter_json_values("/dev/zero"))
    assert len(items) == 1 and isinstance(items[0], RecordError)
    assert items[0].path == "/dev/zero" and items[0].line == 1
    assert f"longer than {small_limit:,} bytes" in items[0].problem
    assert "--max-line-bytes" in items[0].problem
    with pytest.raises(UnreadableFileError, match=r"^/dev/zero:1: the line is longer"):
        read_text_file("/dev/zero")


def test_an_endless_fifo_stops_at_the_bound(tmp_path: Path, small_limit: int) -> None:
    fifo = tmp_path / "endless.jsonl"
    writer = _endless_fifo(fifo)
    items = list(iter_json_values(fifo))
    writer.join(timeout=10)
    assert not writer.is_alive()  # the reader closed the pipe: the writer saw EPIPE
    assert [str(item) for item in items] == [
        f"{fifo}:1: <line>: the line is longer than {small_limit:,} bytes (the limit on one "
        "line; raise it with `plumbline --max-line-bytes N` or PLUMBLINE_MAX_LINE_BYTES=N)"
    ]


def test_records_before_a_long_line_are_kept_and_its_line_named(
    tmp_path: Path, small_limit: int
) -> None:
    path = tmp_path / "r.jsonl"
    good = json.dumps({"a": 1})
    at_limit = json.dumps({"b": "y" * (small_limit - 9)})
    assert len(at_limit) == small_limit
    path.write_text(f"{good}\n{at_limit}\r\n{json.dumps({'c': 'z' * small_limit})}\n{good}\n")
    items = list(iter_json_values(path))
    assert [type(item) for item in items] == [Located, Located, RecordError]
    assert isinstance(items[2], RecordError) and items[2].line == 3
    with pytest.raises(LineTooLongError) as raised:
        list(bounded_lines(path, limit=small_limit))
    assert (raised.value.path, raised.value.line) == (str(path), 3)


def test_a_json_document_with_a_long_line_is_a_located_error(
    tmp_path: Path, small_limit: int
) -> None:
    path = tmp_path / "board.json"
    path.write_text('{\n  "x": "' + "q" * small_limit + '"\n}\n')
    with pytest.raises(UnreadableFileError) as raised:
        read_json_file(path)
    assert raised.value.line == 2


def test_pretty_printed_and_unindented_records_still_read(tmp_path: Path) -> None:
    """Streaming reads a record at a time; a record whose inner lines open a value in column 0
    (not indented) is still read whole."""
    path = tmp_path / "p.json"
    path.write_text('{\n  "a": 1\n}\n{\n"b": [\n{"c": 2}\n]\n}\n{"d": 3}\n')
    values = [item.value for item in iter_json_values(path) if isinstance(item, Located)]
    assert values == [{"a": 1}, {"b": [{"c": 2}]}, {"d": 3}]
    assert [item.line for item in iter_json_values(path) if isinstance(item, Located)] == [1, 4, 9]


def _cli(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plumbline", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_cli_names_file_and_line_for_an_endless_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "trials.jsonl"
    writer = _endless_fifo(fifo)
    done = _cli(["--max-line-bytes", "100000", "records", "validate", str(fifo)])
    writer.join(timeout=10)
    assert done.returncode == 1, done.stderr
    assert f"{fifo}:1: <line>: the line is longer than 100,000 bytes" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_cli_bound_from_the_environment_and_a_bad_bound_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps({"x": "w" * 5000}) + "\n")
    done = _cli(["records", "validate", str(path)], {"PLUMBLINE_MAX_LINE_BYTES": "1000"})
    assert done.returncode == 1
    assert f"{path}:1: <line>: the line is longer than 1,000 bytes" in done.stdout + done.stderr
    bad = _cli(["--max-line-bytes", "0", "records", "validate", str(path)])
    assert bad.returncode == 2 and "--max-line-bytes" in bad.stderr
