"""Many Inspect logs read for a leaderboard: each log's header and score columns, in order, in
this process or in a pool of forked processes.

A `LogReader` starts its workers when it is made, so a caller can make it before importing
what it needs next (the leaderboard's statistics import scipy): the workers, forked from a
process that has imported little, read logs meanwhile. This module imports nothing heavy.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import sys
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from plumbline.core.closing import Closing
from plumbline.records.inspect_logs import read_log_header, read_score_columns
from plumbline.records.log_files import LogFiles, find_log_files
from plumbline.records.log_scores import LogHeader, LogReadError, ScoreColumns

#: A process pool reads the logs when they are this many and this large at least (below,
#: starting the workers costs more than they save).
POOL_MIN_LOGS = 4
POOL_MIN_BYTES = 32 * 2**20
#: Logs each worker may read ahead of the caller: enough to keep reading while the caller
#: imports, few enough that memory does not follow the number of logs.
READ_AHEAD = 16


@dataclass(frozen=True)
class LogRead:
    """One log as read: its header and its score columns (every scorer), or why not."""

    path: str
    header: LogHeader | None
    header_problem: str | None = None
    """Why the header could not be read (`LogReadError.problem`); then nothing else is."""
    columns: ScoreColumns | None = None
    names: frozenset[str] = frozenset()
    samples_problem: str | None = None
    """Why the samples could not be read (`LogReadError.problem`)."""


def read_log(path: Path | str, fast: bool = True) -> LogRead:
    """Read one log's header, then its score columns."""
    location = str(path)
    try:
        header = read_log_header(path, fast=fast)
    except LogReadError as error:
        return LogRead(location, None, header_problem=error.problem)
    try:
        columns, names = read_score_columns(path, None, fast=fast)
    except LogReadError as error:
        return LogRead(location, header, samples_problem=error.problem)
    columns.id_keys  # noqa: B018  (computed here: in a worker, while the caller does other work)
    return LogRead(location, header, columns=columns, names=names)


def _read_packed(path: Path | str, fast: bool) -> bytes:
    """`read_log` in a worker, pickled: the caller holds the logs read ahead as bytes (a
    few hundred KiB each), not as the thousands of objects each unpacks to."""
    return pickle.dumps(read_log(path, fast), protocol=pickle.HIGHEST_PROTOCOL)


def pool_workers(paths: list[Path | str]) -> int:
    """How many processes should read these logs: the usable cores, when the logs are local
    files large enough to pay for a pool and processes can be forked; else 1."""
    if sys.platform != "linux" or len(paths) < POOL_MIN_LOGS:
        return 1
    if not all(isinstance(path, Path) for path in paths):
        return 1  # remote logs are read in-process, through Inspect's clients
    try:
        size = sum(Path(path).stat().st_size for path in paths)
    except OSError:
        return 1
    if size < POOL_MIN_BYTES:
        return 1
    return max(1, min(len(os.sched_getaffinity(0)), len(paths)))


class LogReader(Closing):
    """The logs under some paths (`files`), read in order by iterating: in this process, or
    by `workers` forked processes (default: `pool_workers`) started at once. Close it (or use
    it as a context manager) when not iterating to the end."""

    def __init__(
        self, paths: Iterable[str | Path], *, workers: int | None = None, fast: bool = True
    ) -> None:
        self.files: LogFiles = find_log_files(paths)
        self.fast = fast
        count = pool_workers(self.files.logs) if workers is None else workers
        self._pool: ProcessPoolExecutor | None = None
        self._pending: deque[Future[bytes]] = deque()
        self._todo = iter(self.files.logs)
        if count > 1 and len(self.files.logs) > 1:
            # fork: the workers start with what is imported already (a fresh interpreter
            # would import it all again), and with nothing of what the caller imports next.
            context = multiprocessing.get_context("fork")
            self._pool = ProcessPoolExecutor(count, mp_context=context)
            for _ in range(READ_AHEAD * count):
                if not self._submit():
                    break

    def _submit(self) -> bool:
        path = next(self._todo, None)
        if path is None or self._pool is None:
            return False
        self._pending.append(self._pool.submit(_read_packed, path, self.fast))
        return True

    def __iter__(self) -> Iterator[LogRead]:
        try:
            if self._pool is None:
                for path in self._todo:
                    yield read_log(path, self.fast)
                return
            while self._pending:
                future = self._pending.popleft()
                self._submit()
                read: LogRead = pickle.loads(future.result())
                yield read
        finally:
            self.close()

    def close(self) -> None:
        """Stop the workers (reads not started are cancelled)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
            self._pending.clear()
