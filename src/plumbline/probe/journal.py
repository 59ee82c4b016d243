"""The probe's journal writer: group commit of trial records.

A trial's record is durable (written, flushed and fsynced) before it is counted as done.
Records that complete while an fsync is in progress wait for the next one, so a run pays one
fsync per batch instead of one per trial (about 15 ms each on a busy disk: one per trial
would cap a run near 60 trials/s), and the workers never wait for the disk: they hand the
record over and start their next trial. The write and the fsync run off the event loop.

A run killed at any moment keeps every line written before the kill; a partial last line is
dropped when the journal is next opened (`JsonlAppender`), so a rerun neither loses nor
duplicates a recorded trial (trials whose records had not reached the file run again).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from plumbline.records.io import JsonlAppender
from plumbline.records.trial_record import TrialRecord


class GroupCommitJournal:
    """Collects records from the workers; `run` commits them in batches until `close`."""

    def __init__(self, appender: JsonlAppender, on_durable: Callable[[TrialRecord], None]) -> None:
        self._appender = appender
        self._on_durable = on_durable
        self._lines: list[str] = []
        self._records: list[TrialRecord] = []
        self._wake = asyncio.Event()
        self._closed = False
        self._lock = threading.Lock()

    def submit(self, record: TrialRecord) -> None:
        """Queue a record (serialized now, so a record that cannot be written fails here)."""
        self._lines.append(JsonlAppender.line(record))
        self._records.append(record)
        self._wake.set()

    def close(self) -> None:
        """No more records: `run` returns once the queued ones are durable."""
        self._closed = True
        self._wake.set()

    async def run(self) -> None:
        while True:
            if not (self._lines or self._closed):
                await self._wake.wait()
            self._wake.clear()
            if self._lines:
                records = self._records
                await asyncio.to_thread(self._write, self._take())
                for record in records:
                    self._on_durable(record)
            elif self._closed:
                return

    def commit_now(self) -> None:
        """Write and sync what is queued, on this thread (when the run is being torn down)."""
        records = self._records
        lines = self._take()
        if lines:
            self._write(lines)
            for record in records:
                self._on_durable(record)

    def _take(self) -> list[str]:
        lines = self._lines
        self._lines, self._records = [], []
        return lines

    def _write(self, lines: list[str]) -> None:
        # a commit cancelled on the loop finishes on its thread: the lock keeps the teardown's
        # own commit from interleaving with it
        with self._lock:
            self._appender.write_lines(lines, sync=True)
