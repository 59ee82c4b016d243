"""Reading and removing what an agent leaves, whatever it left.

An agent controls everything in its trial directory: a file may be a FIFO (opening it would
block forever), a symbolic link (reading it would read elsewhere), a sparse file of a terabyte
(reading it whole would exhaust memory), a directory nested deeper than Python's recursion
limit, or a name that is not UTF-8. The harness opens workspace files only through
`open_regular` (no link followed, never blocking, regular files only), reads at most a bound,
removes trees without recursion (`remove_tree`), and writes names with `escaped_name`.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import Any

#: The most bytes of one file the harness reads from a trial (a protected file, a log).
MAX_READ_BYTES = 64 * 1024 * 1024

_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class NotRegularFileError(OSError):
    """A path that is not a regular file (a FIFO, a device, a socket, a link, a directory)."""


def open_regular(path: str | Path) -> int:
    """A read-only descriptor of the regular file at `path`: a symbolic link is not followed,
    a FIFO or device does not block the open, and anything but a regular file is refused
    (`NotRegularFileError`)."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(f"{escaped_name(str(path))}: not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_head(path: str | Path, limit: int = MAX_READ_BYTES) -> tuple[bytes, int]:
    """The first `limit` bytes of the regular file at `path` (`open_regular`), and its size."""
    fd = open_regular(path)
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        return handle.read(min(size, limit)), size


def read_regular(path: str | Path, limit: int = MAX_READ_BYTES) -> bytes:
    """The whole regular file at `path`; `OSError` when it is larger than `limit` bytes."""
    data, size = read_head(path, limit)
    if size > limit:
        raise OSError(f"{escaped_name(str(path))}: {size} bytes, more than the {limit} read")
    return data


def escaped_name(name: str) -> str:
    """A file name as valid UTF-8 text: bytes that are not UTF-8 (held as surrogate escapes
    by `os` functions) are written `\\xff`; other names are unchanged."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return name


def escaped_value(value: Any) -> Any:
    """A JSON-like value with every string (keys included) made valid UTF-8 text
    (`escaped_name`): a name the agent chose can never make a record unwritable."""
    if isinstance(value, str):
        return escaped_name(value)
    if isinstance(value, dict):
        return {escaped_value(key): escaped_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [escaped_value(item) for item in value]
    return value


def _open_directory(name: str, dir_fd: int | None) -> int | None:
    """A descriptor of the directory `name` (made readable first if it was not), or None."""
    for attempt in range(2):
        try:
            return os.open(name, _DIRECTORY_FLAGS, dir_fd=dir_fd)
        except PermissionError:
            if attempt:
                return None
            with contextlib.suppress(OSError):
                os.chmod(name, 0o700, dir_fd=dir_fd)
        except OSError:
            return None
    return None


def _next_directory(fd: int, failed: set[tuple[int, int]]) -> tuple[str, int] | None:
    """Remove every non-directory entry of the open directory `fd`; the first subdirectory
    not in `failed` (name and identity), or None when none is left."""
    with os.scandir(fd) as entries:
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                if (info.st_dev, info.st_ino) not in failed:
                    return entry.name, info.st_ino
                continue
            with contextlib.suppress(OSError):
                os.unlink(entry.name, dir_fd=fd)
    return None


def remove_tree(root: str | Path) -> None:
    """Remove `root` and everything below it, as far as possible, never raising: one
    directory descriptor open at a time and no recursion, so any depth is removed; links are
    removed, never followed; unreadable directories are made readable first."""
    root = Path(root)
    fd = _open_directory(str(root), None)
    if fd is None:
        with contextlib.suppress(OSError):
            if not root.is_dir() or root.is_symlink():
                root.unlink()
        return
    names: list[str] = []
    failed: set[tuple[int, int]] = set()
    while True:
        try:
            found = _next_directory(fd, failed)
        except OSError:
            found = None
        child = None if found is None else _open_directory(found[0], fd)
        if found is not None and child is not None:
            names.append(found[0])
            os.close(fd)
            fd = child
            continue
        if found is not None:
            failed.add((os.fstat(fd).st_dev, found[1]))
            continue
        # This directory is as empty as it can be made: go up and remove it.
        identity = os.fstat(fd)
        if not names:
            os.close(fd)
            with contextlib.suppress(OSError):
                root.rmdir()
            return
        parent = os.open("..", _DIRECTORY_FLAGS, dir_fd=fd)
        os.close(fd)
        fd = parent
        try:
            os.rmdir(names.pop(), dir_fd=fd)
        except OSError:
            failed.add((identity.st_dev, identity.st_ino))


__all__ = [
    "MAX_READ_BYTES",
    "NotRegularFileError",
    "escaped_name",
    "escaped_value",
    "open_regular",
    "read_head",
    "read_regular",
    "remove_tree",
]
