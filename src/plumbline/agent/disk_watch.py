"""One disk limit for a trial's writable directories together (its workspace and HOME).

The kernel caps each file at the disk limit (`RLIMIT_FSIZE`) and each private `/tmp` and
`/dev/shm` at it (tmpfs sizes); no kernel mechanism open to an unprivileged harness caps two
host directories together. So while a trial's command runs, the harness adds up the space its
writable directories take (`st_blocks`, hard links once, symbolic links not followed) and ends
the trial once the total is over the limit: the trial fails with `limit exceeded: disk`. The
walk is iterative and bounded in time: after a walk that took `t` seconds the next one starts
no sooner than `max(interval, 10 t)` later, so a workspace of many files costs the harness at
most a tenth of a core. Between two walks the trial can write past the limit, by at most what
it writes in that time (each file still capped by the kernel).

Reference: stat(2) (`st_blocks` counts 512-byte units); du(1), which counts the same way.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterable
from pathlib import Path

#: Seconds between two walks at least.
INTERVAL_SECONDS = 0.5


def used_bytes(roots: Iterable[Path]) -> int:
    """The bytes allocated to everything under `roots` (as `du -s` counts them, together)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    pending: list[str] = []
    for root in roots:  # the directories themselves count too, as du counts them
        try:
            info = os.stat(root, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and (info.st_dev, info.st_ino) not in seen:
            seen.add((info.st_dev, info.st_ino))
            total += info.st_blocks * 512
            pending.append(str(root))
    while pending:
        directory = pending.pop()
        try:
            entries = os.scandir(directory)
        except OSError:
            continue  # removed meanwhile, or unreadable: nothing to count there
        with entries:
            for entry in entries:
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                key = (info.st_dev, info.st_ino)
                if key in seen:
                    continue
                seen.add(key)
                total += info.st_blocks * 512
                if stat.S_ISDIR(info.st_mode):
                    pending.append(entry.path)
    return total


class DiskWatch:
    """The disk limit of a trial's writable directories together; `over` is polled while the
    trial runs (it walks them at most every `interval` seconds, see the module)."""

    def __init__(
        self, roots: Iterable[Path], limit_bytes: int, interval: float = INTERVAL_SECONDS
    ) -> None:
        self.roots = tuple(roots)
        self.limit_bytes = limit_bytes
        self.interval = interval
        self.peak_bytes = 0
        self.exceeded = False
        self._next = 0.0

    def over(self) -> bool:
        """Whether the directories took more than the limit (walking them when it is time)."""
        now = time.monotonic()
        if self.exceeded or now < self._next:
            return self.exceeded
        used = used_bytes(self.roots)
        took = time.monotonic() - now
        self._next = now + max(self.interval, 10 * took)
        self.peak_bytes = max(self.peak_bytes, used)
        self.exceeded = used > self.limit_bytes
        return self.exceeded


__all__ = ["INTERVAL_SECONDS", "DiskWatch", "used_bytes"]
