"""One writer at a time: an exclusive lock file beside (or inside) what a command writes.

The lock is `flock(2)` on a small file that names its holder. The kernel releases it when the
holder dies, however it dies, so a killed run never leaves a stale lock behind; the file
itself stays (removing it would let a second writer lock a fresh inode while the first still
holds the old one).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path


class LockBusy(RuntimeError):
    """Another process holds the lock; the message says who and what to do."""


@contextlib.contextmanager
def exclusive(path: Path, busy: str, error: type[LockBusy] = LockBusy) -> Iterator[None]:
    """Hold the exclusive lock at `path` (created if needed) while the block runs.

    Raises `error` (a `LockBusy`) at once when another process holds it, with the message
    `busy`, in which ``{holder}`` becomes the holder (``pid N``).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise error(busy.format(holder=holder)) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}\n")
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
