"""Where a harness's pending units run: the `TrialExecutor` protocol, its registry, and the
local executor (threads of this process).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Protocol

from plumbline.agent.leases import Reclaimed
from plumbline.agent.run_types import InfraRetry
from plumbline.agent.schedule import Unit
from plumbline.agent.unit_run import UnitRunner
from plumbline.core.registry import Registry


class TrialExecutor(Protocol):
    """Where a harness's pending units run; `Harness.finish` writes each result. An executor
    registers a factory that takes the harness in `TRIAL_EXECUTORS` (or in the
    `plumbline.trial_executors` entry-point group)."""

    def connect(self) -> None:
        """Reach the machines trials run on, before anything is written."""

    def reclaim(self) -> list[Reclaimed]:
        """End what a killed run left on those machines."""

    def run(self, pending: list[Unit]) -> list[InfraRetry]:
        """Run the units in schedule order; the trials run again after infrastructure loss."""

    def close(self) -> None:
        """Release what `connect` took."""


ExecutorFactory = Callable[[UnitRunner], TrialExecutor]


TRIAL_EXECUTORS: Registry[ExecutorFactory] = Registry("trial executor", "plumbline.trial_executors")


@TRIAL_EXECUTORS.register("local")
class LocalExecutor:
    """Runs the units in threads of this process, `concurrency` at a time."""

    def __init__(self, harness: UnitRunner) -> None:
        self.harness = harness

    def connect(self) -> None:
        return None

    def reclaim(self) -> list[Reclaimed]:
        return []  # the harness reclaims its own output's leases

    def run(self, pending: list[Unit]) -> list[InfraRetry]:
        harness = self.harness
        with (
            harness.metering(),
            harness.baselines(),
            ThreadPoolExecutor(max_workers=harness.options.concurrency) as pool,
        ):
            futures: list[Future[None]] = [pool.submit(harness.run_unit, u) for u in pending]
            try:
                for future in futures:
                    future.result()
            except BaseException:
                harness.registry.kill_all()
                for future in futures:
                    future.cancel()
                raise
        return []

    def close(self) -> None:
        return None
