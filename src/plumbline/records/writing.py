"""Writing record and output files: atomic whole-file writes, this process's open descriptors,
and the appender for journals (append + flush + fsync, a torn last line cut on reopening)."""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from plumbline.core.closing import Closing


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Write a whole file so that no reader ever sees half of it, whatever `path` is.

    - a regular file (or a new one): a temporary file in the same directory, then rename
      (atomic), keeping the mode of the file it replaces;
    - a symbolic link: written to the file the link points to (the link stays a link);
    - a FIFO or a character device (`/dev/stdout`, `<(...)`, a terminal): streamed into it,
      never renamed over it;
    - a file this process already has open (`/dev/stdout`, `/dev/stderr`, `/dev/fd/N`,
      `/proc/self/fd/N`: `--json /dev/stdout >> run.log`): written into through that open
      descriptor, at its offset, so a file the shell opened for appending is appended to and
      never replaced (replacing it would delete its earlier lines);
    - a directory, a socket or a block device: refused (`IsADirectoryError`, `OSError`).
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    descriptor = open_descriptor(path)
    if descriptor is not None and stat.S_ISREG(os.fstat(descriptor).st_mode):
        _write_into(descriptor, payload)
        return
    kind = output_kind(path)
    if kind == "stream":
        descriptor = os.open(path, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(payload)
        return
    # Through symbolic links to the file they name (a dangling link's target is created).
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(target.stat().st_mode) if kind == "file" else None
    except OSError:
        mode = None
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp creates the file 0600; give it the mode a plain open() would have.
        os.chmod(temporary, mode if mode is not None else 0o666 & ~_current_umask())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


#: The names of this process's own open descriptors: `/dev/fd/N`, `/proc/self/fd/N`,
#: `/proc/thread-self/fd/N` and `/proc/<pid>/fd/N` (`/dev/stdin`, `/dev/stdout`, `/dev/stderr`
#: are links to the first).
_DESCRIPTOR = re.compile(r"/(?:dev/fd|proc/(?:self|thread-self|(\d+)(?:/task/\d+)?)/fd)/(\d+)")


def open_descriptor(path: str | Path) -> int | None:
    """The descriptor of this process that `path` names (`/dev/stdout` is 1, `/dev/fd/3` is 3),
    or None when it names a file by its own name.

    Links are followed one at a time until a descriptor's name appears: opening such a name
    again would open the file anew (from its start, not appending), and following every link
    at once (`realpath`) would give the file's own name and lose the descriptor.
    """
    current = os.path.abspath(os.fspath(path))
    for _ in range(40):  # the kernel's own bound on links followed
        match = _DESCRIPTOR.fullmatch(current)
        if match is not None:
            pid, number = match.groups()
            if pid is not None and int(pid) != os.getpid():
                return None
            descriptor = int(number)
            try:
                os.fstat(descriptor)
            except OSError:
                return None
            return descriptor
        head, name = os.path.split(current)
        parent = os.path.realpath(head)
        if parent != head:  # `/dev/fd` is itself a link to `/proc/self/fd`
            current = os.path.join(parent, name)
            continue
        try:
            target = os.readlink(current)
        except OSError:  # not a link: a file named by its own name
            return None
        current = os.path.normpath(os.path.join(head, target))
    return None


def _write_into(descriptor: int, payload: bytes) -> None:
    """Write all of `payload` into an open descriptor (at its offset; appended under
    O_APPEND), after what Python's own streams on it hold, so the order is kept."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            if stream is not None and stream.fileno() == descriptor:
                stream.flush()
    view = memoryview(payload)
    while view:
        written = os.write(descriptor, view)
        view = view[written:]


def output_kind(path: str | Path) -> str:
    """How `write_atomic` writes `path`: `"new"` (nothing there yet, or a dangling link),
    `"file"` (a regular file, or a link to one: replaced atomically) or `"stream"` (a FIFO or a
    character device, or a link to one: written into). Raises `IsADirectoryError` for a
    directory and `OSError` for anything else (a socket, a block device, a link loop)."""
    try:
        status = os.stat(path)  # follows links, magic ones too (/dev/stdout -> pipe:[...])
    except FileNotFoundError:
        return "new"
    if stat.S_ISREG(status.st_mode):
        return "file"
    if stat.S_ISFIFO(status.st_mode) or stat.S_ISCHR(status.st_mode):
        return "stream"
    if stat.S_ISDIR(status.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
    raise OSError(
        errno.EINVAL,
        "not a regular file, FIFO or character device: nothing is written there",
        str(path),
    )


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


class JsonlAppender(Closing):
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

    @staticmethod
    def line(record: dict[str, Any] | BaseModel) -> str:
        """The journal line of a record (with its newline)."""
        value = record.model_dump(mode="json") if isinstance(record, BaseModel) else record
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"

    def append(self, record: dict[str, Any] | BaseModel) -> None:
        self.write_lines([self.line(record)])

    def write_lines(self, lines: list[str], *, sync: bool | None = None) -> None:
        """Append complete lines in one write, flushed, and synced when `sync` (default: the
        appender's setting): a group commit of several records costs one fsync."""
        self._handle.write("".join(lines))
        self._handle.flush()
        if self.sync if sync is None else sync:
            os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()


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
