"""The probe's worker processes (`ProbeProcesses`).

Each runs its share of the trials with its own event loop and model clients and sends every
record back to the process that runs the probe, which alone writes the journal.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from plumbline.core.closing import Closing
from plumbline.probe.caller import InspectCaller
from plumbline.probe.settings import ProbeSettings, TrialKey
from plumbline.probe.trials import run_trials
from plumbline.records.trial_record import TrialRecord

# The concurrency from which a probe's calls are shared by worker processes, and the least
# concurrency each process is given: below it one process's event loop keeps up (at 32, the
# client spends about a third of a core), above it the client's CPU per call is the limit.
SHARD_CONCURRENCY = 64


_SHARD_LEAST = 32


def process_count(settings: ProbeSettings, trials: int, processes: int | None = None) -> int:
    """How many worker processes run `trials` trials (1: this process runs them)."""
    if processes is None:
        if settings.concurrency < SHARD_CONCURRENCY:
            return 1
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        processes = min(cores or 1, settings.concurrency // _SHARD_LEAST)
    return max(1, min(processes, settings.concurrency, trials))


@dataclass(frozen=True)
class _ShardReady:
    """A worker process has set up its model clients and waits for its trials."""


@dataclass(frozen=True)
class _ShardEnd:
    """A worker process's last message: it ran all its trials (with the CPU seconds that took),
    or why it could not."""

    error: str | None = None
    cpu_seconds: float = 0.0


def _run_shard(settings: ProbeSettings, connection: Any) -> None:
    """A worker process: set up the model clients, then run the trials it is sent, sending each
    record to the parent as it completes."""

    async def run(caller: InspectCaller, keys: list[TrialKey]) -> None:
        try:
            await run_trials(settings, keys, caller, connection.send)
        finally:
            await caller.aclose()

    # interrupted, or the parent gone: the worker just ends (the journal keeps what it received)
    with (
        contextlib.closing(connection),
        contextlib.suppress(KeyboardInterrupt, BrokenPipeError, EOFError),
    ):
        try:
            caller = InspectCaller(settings)
        except (RuntimeError, ValueError) as error:  # a model that cannot be set up
            connection.send(_ShardEnd(str(error)))
            return
        connection.send(_ShardReady())
        keys = connection.recv()
        started = time.process_time()
        asyncio.run(run(caller, keys))
        connection.send(_ShardEnd(cpu_seconds=time.process_time() - started))


def _drain(
    connection: Any, loop: asyncio.AbstractEventLoop, submit: Callable[..., None]
) -> _ShardEnd:
    """Hand a worker process's records to `submit` on `loop` until it ends."""
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return _ShardEnd("a probe worker process stopped early; rerun to resume")
        if isinstance(message, _ShardEnd):
            return message
        try:
            loop.call_soon_threadsafe(submit, message)
        except RuntimeError:  # the run was torn down
            return _ShardEnd("interrupted")


class ProbeProcesses(Closing):
    """Worker processes for a probe: each with its own event loop, model clients and share of
    the concurrency, started and set up ahead of a run (`run_probe(workers=...)`). The records
    come back to the process that runs the probe, which alone writes the journal."""

    def __init__(self, settings: ProbeSettings, count: int) -> None:
        import multiprocessing

        # spawn, not fork: the parent may have an event loop and threads running
        context = multiprocessing.get_context("spawn")
        share = dataclasses.replace(settings, concurrency=settings.concurrency // count)
        self.count = count
        #: the worker processes' CPU seconds for their trials (set-up excluded), once run
        self.cpu_seconds = 0.0
        self._workers: list[tuple[Any, Any]] = []
        self._done = False
        try:
            for _ in range(count):
                parent_end, child_end = context.Pipe()
                worker = context.Process(target=_run_shard, args=(share, child_end), daemon=True)
                worker.start()
                child_end.close()
                self._workers.append((worker, parent_end))
            for _, connection in self._workers:
                ready = connection.recv()
                if isinstance(ready, _ShardEnd):
                    raise RuntimeError(ready.error)
        except BaseException:
            self.close()
            raise

    async def run(self, keys: Sequence[TrialKey], submit: Callable[[TrialRecord], None]) -> None:
        """Run `keys` (shared round-robin), handing each record to `submit` as it arrives."""
        loop = asyncio.get_running_loop()
        drains = []
        for index, (_, connection) in enumerate(self._workers):
            connection.send(list(keys[index :: self.count]))
            drains.append(asyncio.to_thread(_drain, connection, loop, submit))
        ends = await asyncio.gather(*drains)
        self._done = True
        self.cpu_seconds = sum(end.cpu_seconds for end in ends)
        problem = next((end.error for end in ends if end.error), None)
        if problem is not None:
            raise RuntimeError(problem)

    def close(self) -> None:
        """Wait for the processes; an interrupted run's are stopped (its calls in flight are
        lost, as in a killed run)."""
        for worker, connection in self._workers:
            if not self._done:
                worker.terminate()
            worker.join()
            connection.close()
