"""Reading and writing record files.

One reader for every JSON record file (JSONL, a JSON array, or concatenated pretty-printed
objects), which locates each record by line so that problems read `file:line: field: problem`;
one atomic writer (temp file + rename); one appender for journals (append + flush + fsync).
"""

from __future__ import annotations

import functools
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)

_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\r\n"


@dataclass(frozen=True)
class RecordError:
    """One problem with one record, located as `file:line: field: problem`."""

    path: str
    line: int
    field: str
    problem: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.field}: {self.problem}"


class InvalidRecordError(ValueError):
    """Raised in strict mode for the first invalid record."""

    def __init__(self, error: RecordError) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass(frozen=True)
class Located:
    """A decoded JSON value with the file and line where it starts."""

    path: str
    line: int
    value: Any


def _skip_whitespace(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WHITESPACE:
        pos += 1
    return pos


def _next_record_start(text: str, pos: int) -> int:
    """The next line after `pos` that opens a top-level value (`{` or `[` in column 0).

    Records in JSONL and in pretty-printed concatenations both start in column 0, while the
    inner lines of a pretty-printed record are indented, so this skips exactly one broken record.
    """
    while True:
        newline = text.find("\n", pos)
        if newline < 0:
            return len(text)
        pos = newline + 1
        if pos < len(text) and text[pos] in "{[":
            return pos


def iter_json_values(path: str | Path) -> Iterator[Located | RecordError]:
    """Yield every top-level record of a JSON record file, located by line.

    Accepts JSONL, one JSON array of records, or objects concatenated with any whitespace
    (pretty-printed). A value that does not parse is yielded as a `RecordError`, and reading
    resumes at the next record, so one bad record never hides the rest of the file.
    """
    name = str(path)
    text = Path(path).read_text(encoding="utf-8")
    pos = _skip_whitespace(text, 0)
    in_array = pos < len(text) and text[pos] == "["
    if in_array:
        pos = _skip_whitespace(text, pos + 1)
    line, counted_to = 1, 0

    def line_at(position: int) -> int:
        nonlocal line, counted_to
        line += text.count("\n", counted_to, position)
        counted_to = position
        return line

    while pos < len(text):
        if in_array and text[pos] == "]":
            pos = _skip_whitespace(text, pos + 1)
            if pos < len(text):
                yield RecordError(name, line_at(pos), "<json>", "unexpected data after the array")
            return
        start_line = line_at(pos)
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError as error:
            yield RecordError(name, line_at(error.pos), "<json>", f"invalid JSON: {error.msg}")
            pos = _next_record_start(text, pos)
            continue
        yield Located(name, start_line, value)
        pos = _skip_whitespace(text, end)
        if in_array and pos < len(text) and text[pos] == ",":
            pos = _skip_whitespace(text, pos + 1)
    if in_array:
        yield RecordError(name, line_at(len(text)), "<json>", "the array is never closed")


def _validation_errors(located: Located, error: ValidationError) -> list[RecordError]:
    problems = []
    for detail in error.errors():
        field = ".".join(str(part) for part in detail["loc"]) or "<record>"
        problems.append(RecordError(located.path, located.line, field, detail["msg"]))
    return problems


@dataclass
class ReadResult(Generic[M]):
    """Valid records with their locations, and every problem found."""

    records: list[M]
    locations: list[Located]
    errors: list[RecordError]


def read_records(
    paths: Iterable[str | Path], model: type[M], *, strict: bool = False
) -> ReadResult[M]:
    """Read and validate records from files.

    Invalid records are excluded and reported (`errors`); with `strict`, the first one raises
    `InvalidRecordError`.
    """
    result: ReadResult[M] = ReadResult([], [], [])
    for path in paths:
        for item in iter_json_values(path):
            problems: list[RecordError]
            if isinstance(item, RecordError):
                problems = [item]
            elif not isinstance(item.value, dict):
                problems = [RecordError(item.path, item.line, "<record>", "not a JSON object")]
            else:
                try:
                    result.records.append(model.model_validate(item.value))
                    result.locations.append(item)
                    continue
                except ValidationError as error:
                    problems = _validation_errors(item, error)
            if strict:
                raise InvalidRecordError(problems[0])
            result.errors.extend(problems)
    return result


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Write a whole file atomically: a temporary file in the same directory, then rename."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp creates the file 0600; give it the mode a plain open() would have.
        os.chmod(temporary, 0o666 & ~_current_umask())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


@functools.cache
def _current_umask() -> int:
    """The process umask, read once: setting it to read it (the only portable way) would race
    with other threads creating files, so it is read from /proc where there is one, and
    otherwise set-and-restored on first use only."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_json_atomic(path: str | Path, value: Any) -> None:
    """Write a JSON document atomically (strict JSON: NaN and Infinity are refused)."""
    write_atomic(path, json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n")


class JsonlAppender:
    """Append records to a JSONL journal, one complete line per record, flushed and synced.

    A file that ends in a partial line (a writer killed mid-write) is repaired on open by
    truncating the partial line, so a resumed run never builds on half a record.
    """

    def __init__(self, path: str | Path, *, sync: bool = True) -> None:
        self.path = Path(path)
        self.sync = sync
        self.path.parent.mkdir(parents=True, exist_ok=True)
        truncate_partial_line(self.path)
        self._handle = self.path.open("a", encoding="utf-8")

    def append(self, record: dict[str, Any] | BaseModel) -> None:
        value = record.model_dump(mode="json") if isinstance(record, BaseModel) else record
        line = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        self._handle.write(line + "\n")
        self._handle.flush()
        if self.sync:
            os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def truncate_partial_line(path: Path) -> None:
    """Drop a trailing line without its newline (the remains of an interrupted append)."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return
        chunk = 1 << 16
        position = size
        while position > 0:
            start = max(0, position - chunk)
            handle.seek(start)
            block = handle.read(position - start)
            newline = block.rfind(b"\n")
            if newline >= 0:
                handle.truncate(start + newline + 1)
                return
            position = start
        handle.truncate(0)
