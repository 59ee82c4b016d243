"""Reading record files (writing them: `records.writing`, whose names this module re-exports).

One reader for every JSON record file (JSONL, a JSON array, or concatenated pretty-printed
objects), which locates each record by line so that problems read `file:line: field: problem`;
one atomic writer (temp file + rename); one appender for journals (append + flush + fsync).
"""

from __future__ import annotations

import codecs
import contextlib
import json
import math
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from plumbline.records.lines import LineTooLongError, bounded_lines, max_line_bytes
from plumbline.records.writing import JsonlAppender as JsonlAppender
from plumbline.records.writing import open_descriptor as open_descriptor
from plumbline.records.writing import output_kind as output_kind
from plumbline.records.writing import truncate_partial_line as truncate_partial_line
from plumbline.records.writing import write_atomic as write_atomic
from plumbline.records.writing import write_json_atomic as write_json_atomic

M = TypeVar("M", bound=BaseModel)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range (not a finite float)")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (JSON has no NaN or Infinity)")


#: Strict JSON: `NaN`, `Infinity` and numbers that overflow a float are refused (they are not
#: JSON, and no schema or JSON writer downstream can hold them).
_DECODER = json.JSONDecoder(parse_float=_finite_float, parse_constant=_no_constant)
_WHITESPACE = " \t\r\n"
#: Records nest a few levels; anything deeper is refused before it reaches a validator.
MAX_DEPTH = 64


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


def decode_utf8(data: bytes) -> tuple[str, dict[int, str]]:
    """Text of a UTF-8 file (a leading byte order mark is accepted and dropped), and the lines
    holding bytes that are not UTF-8, each with a description of the first bad byte.

    Bad bytes are replaced (U+FFFD) so the rest of the file can still be read; a record on a
    listed line must be reported, never used.
    """
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode("utf-8"), {}
    except UnicodeDecodeError:
        pass
    bad: dict[int, str] = {}
    line, counted, position = 1, 0, 0
    decoder = codecs.getincrementaldecoder("utf-8")()
    while position < len(data):
        try:
            decoder.decode(data[position:], final=True)
            break
        except UnicodeDecodeError as error:
            at = position + error.start
            line += data.count(b"\n", counted, at)
            counted = at
            column = at - (data.rfind(b"\n", 0, at) + 1) + 1
            bad.setdefault(
                line,
                f"not UTF-8: byte 0x{data[at]:02x} at column {column} (save the file as UTF-8)",
            )
            position = position + error.end
            decoder.reset()
    return data.decode("utf-8", errors="replace"), bad


def read_utf8(path: str | Path) -> tuple[str, dict[int, str]]:
    """`decode_utf8` of a file's bytes, read as a stream with every line bounded (a FIFO or
    a pipe reads like a file). Raises `UnreadableFileError` for a line over the bound."""
    try:
        return decode_utf8(b"".join(bounded_lines(path)))
    except LineTooLongError as error:
        raise UnreadableFileError(error.path, error.line, error.problem) from None


class UnreadableFileError(ValueError):
    """A text file that cannot be read (not UTF-8, not JSON, nested too deeply), as
    `file:line: problem`."""

    def __init__(self, path: str | Path, line: int, problem: str) -> None:
        super().__init__(f"{path}:{line}: {problem}")
        self.path = str(path)
        self.line = line
        self.problem = problem


def read_text_file(path: str | Path) -> str:
    """A UTF-8 text file's content (a byte order mark is dropped). Raises `UnreadableFileError`
    naming the first line that is not UTF-8 (and `OSError` when it cannot be opened)."""
    text, bad = read_utf8(path)
    if bad:
        line = min(bad)
        raise UnreadableFileError(path, line, bad[line])
    return text


def load_json_text(text: str, path: str | Path = "<json>") -> Any:
    """Parse one strict JSON document (no NaN or Infinity, at most `MAX_DEPTH` levels deep).
    Raises `UnreadableFileError` located by line."""
    start = _skip_whitespace(text, 0)
    try:
        value, end = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as error:
        raise UnreadableFileError(path, error.lineno, f"invalid JSON: {error.msg}") from None
    except ValueError as error:
        raise UnreadableFileError(path, 1, f"invalid JSON: {error}") from None
    except RecursionError:
        raise UnreadableFileError(path, 1, f"nested more than {MAX_DEPTH} levels deep") from None
    rest = _skip_whitespace(text, end)
    if rest < len(text):
        line = text.count("\n", 0, rest) + 1
        raise UnreadableFileError(path, line, "invalid JSON: extra data after the document")
    if _too_deep(value):
        raise UnreadableFileError(path, 1, f"nested more than {MAX_DEPTH} levels deep")
    if _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(value):
        raise UnreadableFileError(path, 1, _LONE_SURROGATE)
    return value


def read_json_file(path: str | Path) -> Any:
    """`load_json_text` of a UTF-8 file. Raises `UnreadableFileError` (or `OSError`)."""
    return load_json_text(read_text_file(path), path)


def iter_json_values(path: str | Path) -> Iterator[Located | RecordError]:
    """Yield every top-level record of a JSON record file, located by line.

    Accepts JSONL, one JSON array of records, or objects concatenated with any whitespace
    (pretty-printed); a UTF-8 byte order mark is ignored. A value that does not parse, holds
    bytes that are not UTF-8 or nests too deeply is yielded as a `RecordError`, and reading
    resumes at the next record, so one bad record never hides the rest of the file.

    The file is read as a stream, record by record (a record starts on a line that opens a
    value in column 0), so memory holds one record at a time, and pipes and FIFOs read like
    files; a JSON array is read whole. A line longer than the bound (`lines.max_line_bytes`)
    is yielded as a `RecordError` at its line and ends the read.
    """
    name = str(path)
    lines = bounded_lines(path)
    segment: list[bytes] = []
    first_line = 1
    number = 0
    array: bool | None = None
    while True:
        try:
            data = next(lines, None)
        except LineTooLongError as error:
            if segment:
                yield from (
                    _segment_values(name, segment, first_line, final=True, array=bool(array)) or []
                )
            yield RecordError(name, error.line, "<line>", error.problem)
            return
        if data is None:
            break
        number += 1
        if array is None:
            stripped = data.lstrip(_WHITESPACE.encode())
            if not stripped:
                first_line = number + 1  # leading blank lines belong to no record
                continue
            array = stripped.startswith(b"[")
        if not array and data[:1] in (b"{", b"[") and segment:
            found = _segment_values(name, segment, first_line, final=False)
            if found is not None:  # else the segment's last value runs on: read on
                yield from found
                segment, first_line = [], number
        segment.append(data)
    if segment:
        yield from _segment_values(name, segment, first_line, final=True, array=bool(array)) or []


def _checked_value(
    name: str,
    value: Any,
    start_line: int,
    end_line: int,
    bad_lines: dict[int, str],
    *,
    surrogates: bool,
) -> Located | RecordError:
    """A decoded value on lines `start_line`..`end_line`, or the first reason it cannot be used."""
    bad = next((n for n in range(start_line, end_line + 1) if n in bad_lines), None)
    if bad is not None:
        return RecordError(name, bad, "<encoding>", bad_lines[bad])
    if surrogates and _has_lone_surrogate(value):
        return RecordError(name, start_line, "<json>", _LONE_SURROGATE)
    if _too_deep(value):
        return RecordError(name, start_line, "<json>", f"nested more than {MAX_DEPTH} levels deep")
    return Located(name, start_line, value)


def _segment_values(
    name: str, lines: list[bytes], first_line: int, *, final: bool, array: bool = False
) -> list[Located | RecordError] | None:
    """The values of consecutive lines of a record file, the first being line `first_line`
    (with `array`, the whole file, which opens a JSON array); None when the text ends inside a
    value and more lines follow (`final` false)."""
    text, relative_bad = decode_utf8(b"".join(lines))
    bad_lines = {first_line - 1 + number: problem for number, problem in relative_bad.items()}
    found: list[Located | RecordError] = []
    surrogates = _SURROGATE_ESCAPE.search(text) is not None
    pos = _skip_whitespace(text, 0)
    in_array = array and pos < len(text) and text[pos] == "["
    array_line = first_line
    if in_array:
        pos = _skip_whitespace(text, pos + 1)
    line, counted_to = first_line, 0
    content_end = len(text.rstrip(_WHITESPACE))

    def line_at(position: int) -> int:
        nonlocal line, counted_to
        if position < counted_to:  # back from where an error was found
            line -= text.count("\n", position, counted_to)
        else:
            line += text.count("\n", counted_to, position)
        counted_to = position
        return line

    if in_array:
        array_line = line_at(pos)
    while pos < len(text):
        if in_array and text[pos] == "]":
            in_array = False
            pos = _skip_whitespace(text, pos + 1)
            if pos < len(text):
                found.append(
                    RecordError(
                        name,
                        line_at(pos),
                        "<json>",
                        f"more data after the JSON array that opens on line {array_line}: a "
                        "file holds one JSON array of records, or one record per line (JSONL); "
                        "the rest is read as JSONL",
                    )
                )
            continue
        start_line = line_at(pos)
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError as error:
            if not final and error.pos >= content_end:
                return None
            found.append(
                RecordError(name, line_at(error.pos), "<json>", f"invalid JSON: {error.msg}")
            )
            pos = _next_record_start(text, pos)
            continue
        except ValueError as error:  # a non-finite number
            found.append(RecordError(name, start_line, "<json>", f"invalid JSON: {error}"))
            pos = _next_record_start(text, pos)
            continue
        except RecursionError:
            found.append(
                RecordError(name, start_line, "<json>", f"nested more than {MAX_DEPTH} levels deep")
            )
            pos = _next_record_start(text, pos)
            continue
        end_line = line_at(end)
        found.append(
            _checked_value(name, value, start_line, end_line, bad_lines, surrogates=surrogates)
        )
        pos = _skip_whitespace(text, end)
        if in_array and pos < len(text) and text[pos] == ",":
            pos = _skip_whitespace(text, pos + 1)
    if in_array:
        found.append(RecordError(name, line_at(len(text)), "<json>", "the array is never closed"))
    return found


# A `\ud800`-`\udfff` escape in the file: the decoded value may hold a lone surrogate, which is no
# character (JSON allows the escape; no UTF-8 writer downstream can encode it).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


_LONE_SURROGATE = "a \\u escape names half of a surrogate pair: not a character"


def _too_deep(value: Any) -> bool:
    """Whether a decoded value nests containers more than `MAX_DEPTH` levels (iterative)."""
    if not isinstance(value, dict | list):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


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


def iter_json_objects(path: str | Path, errors: list[RecordError]) -> Iterator[Located]:
    """Yield every top-level JSON object of a record file (`iter_json_values`); a value that
    cannot be read or is not an object is appended to `errors` instead."""
    for item in iter_json_values(path):
        if isinstance(item, RecordError):
            errors.append(item)
        elif not isinstance(item.value, dict):
            errors.append(RecordError(item.path, item.line, "<record>", "not a JSON object"))
        else:
            yield item


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


def _copy_bounded(stream: BinaryIO, copy: BinaryIO) -> None:
    """Copy a stream line by line; a line longer than the bound is copied up to one byte past
    it and the copy ends there, so the reader of the copy names it (`file:line`) instead of an
    endless line (`/dev/zero`, a FIFO) filling the disk."""
    bound = max_line_bytes()
    while True:
        # bound + 2: room for "\r\n" after a line of exactly `bound` bytes
        line = stream.readline(bound + 2)
        if not line:
            return
        copy.write(line)
        if not line.endswith(b"\n") and len(line) > bound:
            return


@contextlib.contextmanager
def as_regular_file(path: str | Path) -> Iterator[Path]:
    """`path` itself when it is a regular file; otherwise (a FIFO, a pipe such as
    `<(cat runs.jsonl)`, a character device) its content, read once, in a temporary file.

    For readers that open a file more than once (a quick look, then a column-wise read): a
    pipe can be read only once. The temporary file is removed on exit.
    """
    source = Path(path)
    try:
        regular = stat.S_ISREG(os.stat(source).st_mode)
    except OSError:
        regular = True  # let the reader report the missing file under its own name
    if regular:
        yield source
        return
    fd, temporary = tempfile.mkstemp(prefix=".plumbline-input-", suffix=source.suffix)
    try:
        with os.fdopen(fd, "wb") as copy, source.open("rb") as stream:
            _copy_bounded(stream, copy)
        yield Path(temporary)
    finally:
        Path(temporary).unlink(missing_ok=True)
