"""Running a command with a time limit that holds for everything it starts.

The command leads its own session (and so its own process group). On timeout the whole group
gets SIGTERM, then SIGKILL after a grace period; when the leader exits on its own, whatever it
left running in its group is killed too, so nothing keeps editing the workspace during the
acceptance check. The leader is waited for without being reaped (`waitid` with `WNOWAIT`), so
its process-group id cannot be reused before the group is killed. A process that starts a new
session of its own leaves the group: in a sandboxed trial (`plumbline.agent.sandbox`) the PID
namespace ends it with the trial; unconfined (`--sandbox none`) it is out of reach.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from plumbline.agent.capture import CappedLog, OutputPump, output_pipe

POLL_SECONDS = 0.02


@dataclass(frozen=True)
class ProcessResult:
    """How a command ended: its exit code (negative: killed by that signal), whether it hit
    the time limit, its wall-clock duration, and the error if it could not start."""

    exit_code: int | None
    timed_out: bool
    duration_seconds: float
    start_error: OSError | None = None
    #: Ended because its `watch` said so (a limit the harness checks, such as the disk's).
    stopped_by_watch: bool = False


class ProcessRegistry:
    """The process groups running now, so an interrupted harness can end them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._groups: set[int] = set()
        self.stopping = threading.Event()

    def add(self, pgid: int) -> None:
        with self._lock:
            self._groups.add(pgid)

    def discard(self, pgid: int) -> None:
        with self._lock:
            self._groups.discard(pgid)

    def kill_all(self) -> None:
        """Stop: SIGKILL every running group; later commands are not started."""
        self.stopping.set()
        with self._lock:
            groups = list(self._groups)
        for pgid in groups:
            _signal_group(pgid, signal.SIGKILL)


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _exited(pid: int) -> bool:
    """Whether the child has exited, without reaping it."""
    info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    return info is not None


def _wait_exit(
    pid: int,
    seconds: float,
    stopping: threading.Event | None = None,
    watch: Callable[[], bool] | None = None,
) -> bool:
    """Whether the child exited within `seconds`; False at once when the harness stops or
    `watch` says to stop."""
    deadline = time.monotonic() + seconds
    while True:
        if _exited(pid):
            return True
        if stopping is not None and stopping.is_set():
            return False
        if watch is not None and watch():
            return False
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        time.sleep(min(POLL_SECONDS, remaining))


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    stdout: Path,
    stderr: Path,
    stdin: Path | None = None,
    grace: float = 5.0,
    registry: ProcessRegistry | None = None,
    pass_fds: Sequence[int] = (),
    watch: Callable[[], bool] | None = None,
) -> ProcessResult:
    """Run `argv` in its own process group with a time limit on the whole group (`pass_fds`:
    descriptors the process inherits; `watch`, polled while it runs: True ends the group at
    once); its output goes through pipes into capped logs (`plumbline.agent.capture`),
    appended to `stdout` and `stderr`."""
    if registry is not None and registry.stopping.is_set():
        return ProcessResult(None, False, 0.0, InterruptedError("the harness is stopping"))
    started = time.monotonic()
    try:
        logs = (CappedLog(stdout), CappedLog(stderr))
    except OSError as error:
        return ProcessResult(None, False, time.monotonic() - started, error)
    out_read, out_write = output_pipe()
    err_read, err_write = output_pipe()
    try:
        with stdin.open("rb") if stdin else open(os.devnull, "rb") as inp:
            process = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=dict(env),
                stdin=inp,
                stdout=out_write,
                stderr=err_write,
                start_new_session=True,
                pass_fds=tuple(pass_fds),
            )
    except OSError as error:
        for fd in (out_read, err_read):
            os.close(fd)
        for log in logs:
            log.close()
        return ProcessResult(None, False, time.monotonic() - started, error)
    finally:
        os.close(out_write)
        os.close(err_write)
    pump = OutputPump({out_read: logs[0], err_read: logs[1]})
    try:
        return _wait(process, timeout, grace, registry, started, watch)
    finally:
        pump.finish()


def _wait(
    process: subprocess.Popen[bytes],
    timeout: float,
    grace: float,
    registry: ProcessRegistry | None,
    started: float,
    watch: Callable[[], bool] | None = None,
) -> ProcessResult:
    """Wait for the leader under the time limit, then end its whole group."""
    pgid = process.pid
    stopping = registry.stopping if registry is not None else None
    if registry is not None:
        registry.add(pgid)
    try:
        # `kill_all` may have run between the check above and `add`, missing this group.
        if stopping is not None and stopping.is_set():
            _signal_group(pgid, signal.SIGKILL)
        exited = _wait_exit(process.pid, timeout, stopping, watch)
        watched = not exited and watch is not None and watch()
        timed_out = not exited and not watched and not (stopping is not None and stopping.is_set())
        if timed_out:
            _signal_group(pgid, signal.SIGTERM)
            _wait_exit(process.pid, grace, stopping)
        # Whatever is left in the group (stragglers, or a leader ignoring SIGTERM) ends now.
        _signal_group(pgid, signal.SIGKILL)
        exit_code = process.wait()
    except BaseException:
        # Interrupted while waiting (a cancelled Ray task gets KeyboardInterrupt here): the
        # group must not outlive the wait, nor the registry that could still end it.
        _signal_group(pgid, signal.SIGKILL)
        raise
    finally:
        if registry is not None:
            registry.discard(pgid)
    return ProcessResult(exit_code, timed_out, time.monotonic() - started, None, watched)


def run_shell(
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    stdout: Path,
    stderr: Path,
    grace: float = 5.0,
    registry: ProcessRegistry | None = None,
    pass_fds: Sequence[int] = (),
) -> ProcessResult:
    """Run a shell command line (`/bin/sh -c`) like `run_process`."""
    return run_process(
        ["/bin/sh", "-c", command],
        cwd=cwd,
        env=env,
        timeout=timeout,
        stdout=stdout,
        stderr=stderr,
        grace=grace,
        registry=registry,
        pass_fds=pass_fds,
    )


__all__ = ["ProcessRegistry", "ProcessResult", "run_process", "run_shell"]
