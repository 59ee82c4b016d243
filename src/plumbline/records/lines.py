"""Reading a text file line by line with a bound on each line.

Every reader of user files goes through `bounded_lines`: a line longer than the limit (a file
that is one endless line, `/dev/zero`, a FIFO fed without newlines, a record with a response
of gigabytes) stops the read with `LineTooLongError`, located as `file:line`, after reading at
most the limit plus two bytes of it, so memory never grows with a line nobody bounded. Files
are read as streams (never `stat`-ed for a size, never seeked), so FIFOs, process substitution
(`<(cat file)`) and character devices read like regular files.

The limit (`DEFAULT_MAX_LINE_BYTES`) is raised for the whole process with the global option
`plumbline --max-line-bytes N` or the environment variable `PLUMBLINE_MAX_LINE_BYTES`.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterator
from pathlib import Path

from plumbline.core.limits import MAX_LINE_BYTES

#: The default bound on one line of any input file, in bytes (without its newline).
DEFAULT_MAX_LINE_BYTES = MAX_LINE_BYTES
#: The environment variable that sets the bound (the global option `--max-line-bytes` sets it).
ENV_VAR = "PLUMBLINE_MAX_LINE_BYTES"

_limit: int | None = None


class LineTooLongError(ValueError):
    """A line longer than the bound, located as `file:line`."""

    def __init__(self, path: str | Path, line: int, limit: int) -> None:
        self.path = str(path)
        self.line = line
        self.limit = limit
        self.problem = (
            f"the line is longer than {limit:,} bytes (the limit on one line; raise it with "
            f"`plumbline --max-line-bytes N` or {ENV_VAR}=N)"
        )
        super().__init__(f"{self.path}:{line}: {self.problem}")


def set_max_line_bytes(limit: int | None) -> None:
    """Set the bound for this process (None: back to the environment or the default)."""
    if limit is not None and limit < 1:
        raise ValueError(f"max line bytes must be at least 1, got {limit}")
    global _limit
    _limit = limit


def max_line_bytes() -> int:
    """The bound in force: `set_max_line_bytes`, else `PLUMBLINE_MAX_LINE_BYTES`, else the
    default. An environment value that is not a positive integer is ignored for the default."""
    if _limit is not None:
        return _limit
    raw = os.environ.get(ENV_VAR, "").strip().replace("_", "")
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    return DEFAULT_MAX_LINE_BYTES


def bounded_lines(path: str | Path, limit: int | None = None) -> Iterator[bytes]:
    """Yield the lines of a file as bytes, each with its newline (the last may lack one), a
    leading UTF-8 byte order mark dropped. Raises `LineTooLongError` for a line of more than
    `limit` bytes (default: `max_line_bytes()`), before reading more than `limit + 2` bytes
    of it, and `OSError` when the file cannot be opened or read."""
    bound = max_line_bytes() if limit is None else limit
    number = 0
    with open(path, "rb") as handle:
        while True:
            # limit + 2: room for "\r\n" after a line of exactly `bound` bytes
            data = handle.readline(bound + 2)
            if not data:
                return
            number += 1
            if number == 1 and data.startswith(codecs.BOM_UTF8):
                data = data[len(codecs.BOM_UTF8) :]
            content = len(data)
            if data.endswith(b"\n"):
                content -= 2 if data.endswith(b"\r\n") else 1
            if content > bound:
                raise LineTooLongError(path, number, bound)
            yield data


__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "ENV_VAR",
    "LineTooLongError",
    "bounded_lines",
    "max_line_bytes",
    "set_max_line_bytes",
]
