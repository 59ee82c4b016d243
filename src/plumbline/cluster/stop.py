"""How an interrupted driver stops the trials it runs on a Ray cluster.

`ray.cancel` of a task whose result is arriving at that moment aborts the driver inside Ray
(2.60: `task_manager.cc` "Tried to complete task that was not pending"), so the driver never
cancels a trial: it sets the run's `StopSignal`, an actor every trial polls, and each trial
ends its own processes, as the local executor's trials do when the run stops.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from plumbline.cluster.connect import require_ray

#: How often a running trial asks whether its run was stopped.
POLL_SECONDS = 0.5
#: How long one question may take before the trial stops asking (the actor is gone).
ANSWER_SECONDS = 30.0


class StopSignal:
    """A run's stop flag: set once by the driver, read by its trials (a Ray actor)."""

    def __init__(self) -> None:
        self._stopped = False

    def stop(self) -> None:
        self._stopped = True

    def stopped(self) -> bool:
        return self._stopped


def new_stop_signal() -> Any:
    """A `StopSignal` actor for one run (no CPU; it ends when the driver drops it)."""
    ray = require_ray()
    return ray.remote(num_cpus=0, max_restarts=0)(StopSignal).remote()


def send_stop(signal: Any) -> None:
    """Set the run's stop flag (a signal that cannot be reached is left: the trials end with
    their owner, the driver, and the next run reclaims what they leave)."""
    ray = require_ray()
    with contextlib.suppress(ray.exceptions.RayError):
        ray.get(signal.stop.remote(), timeout=ANSWER_SECONDS)


def stop_requested(signal: Any) -> bool:
    """Whether the run was stopped (False when the signal cannot be reached)."""
    ray = require_ray()
    try:
        return bool(ray.get(signal.stopped.remote(), timeout=ANSWER_SECONDS))
    except ray.exceptions.RayError:
        return False


@contextlib.contextmanager
def watch(signal: Any, on_stop: Callable[[], None]) -> Iterator[None]:
    """Call `on_stop` (from another thread) if the run is stopped while the block runs; the
    watcher is not waited for at the end (a late call finds nothing left to stop)."""
    done = threading.Event()

    def poll() -> None:
        while not done.wait(POLL_SECONDS):
            if stop_requested(signal):
                on_stop()
                return

    watcher = threading.Thread(target=poll, name="plumbline-stop-watch", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()


__all__ = ["POLL_SECONDS", "StopSignal", "new_stop_signal", "send_stop", "stop_requested", "watch"]
