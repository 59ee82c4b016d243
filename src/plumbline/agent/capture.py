"""A command's output, streamed into log files of bounded size.

The harness never lets a command write its log files itself (a command could make them sparse
terabyte files, FIFOs or links): standard output and error are pipes, read by one thread in
chunks of at most `CHUNK_BYTES`. Each log keeps the first and the last half of
`MAX_OUTPUT_BYTES` (the end of an agent's output holds its final report), with a note of how
many bytes in between were left out, so memory and disk stay bounded whatever a command
prints. Once the command's process group has ended, whatever still holds a pipe (a process
that left the group) is read for at most `DRAIN_SECONDS` more.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import selectors
import stat
import threading
import time
from collections import deque
from pathlib import Path

from plumbline.agent.safe_files import remove_tree

#: The most bytes of one output stream a log keeps (half from its start, half from its end).
MAX_OUTPUT_BYTES = 8 * 1024 * 1024
CHUNK_BYTES = 1024 * 1024
#: The pipes' capacity asked for (Linux's default unprivileged maximum): fewer, larger reads.
PIPE_BYTES = 1024 * 1024
POLL_SECONDS = 0.05
DRAIN_SECONDS = 1.0

_LOG_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def open_log(path: Path) -> int:
    """A descriptor appending to the regular file `path`; whatever else stands there (a
    FIFO, a link, a directory a command put in its place) is removed first."""
    for attempt in range(2):
        try:
            fd = os.open(path, _LOG_FLAGS, 0o644)
        except OSError:
            if attempt:
                raise
        else:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                os.set_blocking(fd, True)
                return fd
            os.close(fd)
            if attempt:
                raise OSError(f"{path}: not a regular file")
        if path.is_dir() and not path.is_symlink():
            remove_tree(path)
        elif os.path.lexists(path):
            path.unlink()
    raise AssertionError("unreachable")


class CappedLog:
    """One log file that keeps the first and last bytes of a stream up to a budget (the file's
    current size counts against it), with a note of what was left out."""

    def __init__(self, path: Path, limit: int = MAX_OUTPUT_BYTES) -> None:
        self.fd = open_log(path)
        budget = max(limit - os.fstat(self.fd).st_size, 0)
        self.head_left = budget // 2
        self.tail_limit = budget - self.head_left
        self.tail: deque[bytes] = deque()
        self.tail_bytes = 0
        self.dropped = 0

    def write(self, data: bytes) -> None:
        if self.head_left:
            head = data[: self.head_left]
            os.write(self.fd, head)
            self.head_left -= len(head)
            data = data[len(head) :]
        if not data:
            return
        self.tail.append(data)
        self.tail_bytes += len(data)
        while self.tail_bytes > self.tail_limit:
            excess = self.tail_bytes - self.tail_limit
            first = self.tail[0]
            cut = min(len(first), excess)
            if cut == len(first):
                self.tail.popleft()
            else:
                self.tail[0] = first[cut:]
            self.tail_bytes -= cut
            self.dropped += cut

    def close(self) -> None:
        try:
            if self.dropped:
                note = f"\n[plumbline: {self.dropped} bytes of output left out here]\n"
                os.write(self.fd, note.encode())
            for chunk in self.tail:
                os.write(self.fd, chunk)
        finally:
            os.close(self.fd)


class OutputPump:
    """A thread moving what the pipes carry into their capped logs until every pipe is
    closed, or `DRAIN_SECONDS` after `finish`."""

    def __init__(self, logs: dict[int, CappedLog]) -> None:
        self.logs = logs
        self._finished = threading.Event()
        self._thread = threading.Thread(target=self._run, name="output-pump", daemon=True)
        for fd in logs:
            os.set_blocking(fd, False)
        self._thread.start()

    def _read(self, fd: int) -> bool:
        """Move what `fd` holds now; False once it is closed."""
        while True:
            try:
                data = os.read(fd, CHUNK_BYTES)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not data:
                return False
            self.logs[fd].write(data)

    def _run(self) -> None:
        selector = selectors.DefaultSelector()
        for fd in self.logs:
            selector.register(fd, selectors.EVENT_READ)
        deadline: float | None = None
        try:
            while selector.get_map():
                if deadline is None and self._finished.is_set():
                    deadline = time.monotonic() + DRAIN_SECONDS
                if deadline is not None and time.monotonic() > deadline:
                    break
                for key, _ in selector.select(POLL_SECONDS):
                    if not self._read(key.fd):
                        selector.unregister(key.fd)
        finally:
            selector.close()

    def finish(self) -> None:
        """The command has ended: drain, then close the pipes and the logs."""
        self._finished.set()
        self._thread.join()
        for fd, log in self.logs.items():
            with contextlib.suppress(OSError):
                os.close(fd)
            with contextlib.suppress(OSError):
                log.close()


def output_pipe() -> tuple[int, int]:
    """A pipe (read end, write end) as large as the system allows up to `PIPE_BYTES`."""
    read_end, write_end = os.pipe2(os.O_CLOEXEC)
    with contextlib.suppress(OSError):
        fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    return read_end, write_end


__all__ = ["MAX_OUTPUT_BYTES", "CappedLog", "OutputPump", "open_log", "output_pipe"]
