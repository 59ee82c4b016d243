"""A pool of warm, sandboxed, single-use workers.

Each worker is a Python process in its own bubblewrap sandbox that imports the configured
modules (for CDK, ``aws_cdk``: about 3 s of jsii runtime start-up) *before* a sample is
assigned to it, then serves exactly one sample and exits. Samples never share a process,
a file system or a namespace. The pool keeps ``size`` workers warming while ``size`` samples
run, so the start-up overlaps with other samples and with model generation.

Measured here: the first synthesis in a fresh runtime still costs several seconds (Node.js
loads and compiles the aws-cdk-lib modules the app uses, lazily); later apps in the same
runtime take about 0.5 s. Isolation means every sample pays that first-synthesis cost.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from plumbline.core.closing import Closing
from plumbline.sandbox.bwrap import SANDBOX_ROOT, SandboxLayout, build_command, require_sandbox
from plumbline.sandbox.resources import ResourceLimits

WORKER_SCRIPT = Path(__file__).with_name("worker.py")
WORKER_IN_SANDBOX = "/opt/plumbline/worker.py"
LOG_LIMIT = 64 * 1024

JobStatus = Literal[
    "ok",  # the entry point ran to completion (or exited 0)
    "exception",  # it raised; see JobResult.exception
    "timeout",  # the host stopped it at the wall-clock limit
    "crashed",  # the worker died without a result (signal or exit status)
    "warmup_failed",  # the runtime could not start: an infrastructure problem
    "sandbox_error",  # the sandbox could not be set up
    "worker_error",  # the worker itself failed around the job
]


@dataclass(frozen=True)
class Job:
    """One sample: files to write into the work directory and the entry point to run.

    Attributes:
        files: relative path -> text, written under the work directory.
        entry: script path (relative to ``cwd``) or module name when ``module`` is true.
        collect: glob patterns (relative to ``cwd``) of output files to return.
        cdk_context: context merged into every ``aws_cdk.App`` (from cdk.json).
        cdk_app_defaults: ``aws_cdk.App`` keyword arguments applied when the app does not pass
            them (skipped when this aws-cdk-lib's App does not know the argument).
        record_synthesis: record every file a CDK synthesis (``App.synth``/``Stage.synth``)
            writes, with its digest, in ``JobResult.synthesized``.
    """

    files: Mapping[str, str]
    entry: str
    args: Sequence[str] = ()
    module: bool = False
    cwd: str = "app"
    collect: Sequence[str] = ()
    collect_max_bytes: int = 32 * 1024 * 1024
    cdk_context: Mapping[str, Any] = field(default_factory=dict)
    cdk_app_defaults: Mapping[str, Any] = field(default_factory=dict)
    record_synthesis: bool = False


@dataclass
class JobResult:
    """What happened to one job.

    ``synthesized`` (for jobs with ``record_synthesis``) maps each file a CDK synthesis wrote,
    relative to the job's ``cwd``, to the SHA-256 of what it wrote; None when not recorded.
    """

    status: JobStatus
    exception: dict[str, Any] | None = None
    files: dict[str, str] = field(default_factory=dict)
    truncated: bool = False
    log: str = ""
    returncode: int | None = None
    signal: int | None = None
    seconds: float = 0.0
    message: str = ""
    synthesized: dict[str, str] | None = None


class _LogBuffer:
    """Keeps the first LOG_LIMIT bytes of a stream and drains the rest."""

    def __init__(self, stream: Any) -> None:
        self.chunks: list[bytes] = []
        self.size = 0
        self.dropped = 0
        self.thread = threading.Thread(target=self._drain, args=(stream,), daemon=True)
        self.thread.start()

    def _drain(self, stream: Any) -> None:
        for chunk in iter(lambda: stream.read1(65536), b""):
            room = LOG_LIMIT - self.size
            if room > 0:
                self.chunks.append(chunk[:room])
                self.size += min(room, len(chunk))
            self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        self.thread.join(timeout=2)
        text = b"".join(self.chunks).decode("utf-8", errors="replace")
        if self.dropped:
            text += f"\n[... {self.dropped} more bytes of output dropped]"
        return text


class _Worker:
    """One sandboxed worker process and its protocol channel."""

    def __init__(self, command: list[str], fds: list[int], workdir: Path | None) -> None:
        self.workdir = workdir
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        try:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=fds,
                start_new_session=True,
                cwd=workdir,
                # bwrap's own process stays visible inside the sandbox as PID 1, with its
                # /proc/1/environ readable: it must not inherit the caller's secrets either.
                env={"PATH": os.defpath},
            )
        finally:
            for fd in fds:
                os.close(fd)
        assert self.process.stdout is not None and self.process.stderr is not None
        self.log = _LogBuffer(self.process.stderr)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict):
                self.messages.put(message)
        self.messages.put(None)

    def next_message(self, deadline: float) -> dict[str, Any] | None:
        """The next protocol message; None at end of stream; raises queue.Empty at deadline."""
        return self.messages.get(timeout=max(0.0, deadline - time.monotonic()))

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        if self.workdir is not None:
            _remove_tree(self.workdir)

    def exit_signal(self) -> int | None:
        code = self.process.returncode
        if code is None:
            return None
        if code < 0:
            return -code
        # bwrap reports a child killed by signal N as exit status 128 + N.
        return code - 128 if code > 128 else None


def _remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def _send(worker: _Worker, payload: dict[str, Any]) -> None:
    """Write the job to the worker's stdin and close it."""
    assert worker.process.stdin is not None
    # A worker that died cannot take the job; that is reported from its exit status.
    with contextlib.suppress(OSError):
        worker.process.stdin.write((json.dumps(payload) + "\n").encode())
        worker.process.stdin.close()


def _await_result(worker: _Worker, deadline: float) -> tuple[dict[str, Any] | None, bool]:
    """The worker's result message (None if it ended without one), and whether time ran out."""
    try:
        while True:
            message = worker.next_message(deadline)
            if message is None or message.get("event") == "result":
                return message, False
    except queue.Empty:
        return None, True


class WarmPool(Closing):
    """Warm, sandboxed, single-use Python workers.

    Args:
        preload: modules each worker imports before it is given a sample.
        environment: the worker's complete environment (see ``sandbox_environment``); values
            may contain ``{workdir}``, replaced by the work directory.
        limits: per-sample resource limits.
        size: samples run at once; as many further workers warm up meanwhile.
        layout: extra read-only mounts and writable copies for the sandbox.
        unsafe_no_sandbox: run workers directly on the host (model code can then read and
            write anything this user can). Refused unless explicitly requested.
        allow_processes: let the job create processes (no seccomp filter).
        warmup_seconds: how long a worker may take to become ready.
        expected_jobs: if known, how many jobs will run; no worker beyond that is started
            (a single check then warms one runtime, not two).
    """

    def __init__(
        self,
        *,
        preload: Sequence[str] = (),
        environment: Mapping[str, str] | None = None,
        limits: ResourceLimits | None = None,
        size: int | None = None,
        layout: SandboxLayout | None = None,
        unsafe_no_sandbox: bool = False,
        allow_processes: bool = False,
        warmup_seconds: float = 300.0,
        expected_jobs: int | None = None,
    ) -> None:
        self.limits = limits or ResourceLimits()
        self.size = size if size is not None else max(2, os.cpu_count() or 2)
        if self.size < 1:
            raise ValueError(f"size must be at least 1, got {self.size}")
        self.unsafe_no_sandbox = unsafe_no_sandbox
        self.bwrap = None if unsafe_no_sandbox else require_sandbox()
        self.layout = layout or SandboxLayout()
        self.environment = dict(environment or {})
        self.warmup_seconds = warmup_seconds
        self.config = {
            "preload": list(preload),
            "allow_processes": allow_processes,
            "limits": {
                "file_size_bytes": self.limits.file_size_bytes,
                "max_processes": self.limits.max_processes,
            },
        }
        self._slots = threading.BoundedSemaphore(self.size)
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._lock = threading.Lock()
        self._closed = False
        # bwrap --die-with-parent uses PR_SET_PDEATHSIG, which fires when the *thread* that
        # started it ends. Workers are therefore started by one long-lived thread, so a
        # caller's short-lived thread (a ThreadPoolExecutor's, asyncio.to_thread's) ending
        # does not kill the warm workers it asked for.
        self._requests: queue.Queue[tuple[list[_Worker | BaseException], threading.Event]] = (
            queue.Queue()
        )
        self._spawner = threading.Thread(
            target=self._spawn_loop, name="plumbline-sandbox-spawner", daemon=True
        )
        self._spawner.start()
        self._unspawned = expected_jobs  # workers still to start (None: no limit)
        for _ in range(self.size):
            self._spawn_if_needed()

    def _spawn_if_needed(self) -> None:
        if self._unspawned is not None:
            if self._unspawned <= 0:
                return
            self._unspawned -= 1
        self._idle.put(self._spawn())

    def _spawn_loop(self) -> None:
        while True:
            box, done = self._requests.get()
            try:
                box.append(self._create())
            except BaseException as error:
                box.append(error)
            finally:
                done.set()

    def _spawn(self) -> _Worker:
        box: list[_Worker | BaseException] = []
        done = threading.Event()
        self._requests.put((box, done))
        done.wait()
        if isinstance(box[0], BaseException):
            raise box[0]
        return box[0]

    def _create(self) -> _Worker:
        config = json.dumps(self.config)
        if self.bwrap is not None:
            layout = SandboxLayout(
                read_only=self.layout.read_only,
                read_only_at=(*self.layout.read_only_at, (WORKER_SCRIPT, WORKER_IN_SANDBOX)),
                writable_copies=self.layout.writable_copies,
                workdir_bytes=self.limits.workdir_bytes,
                environment={
                    k: v.replace("{workdir}", SANDBOX_ROOT) for k, v in self.environment.items()
                },
            )
            argv = [sys.executable, "-I", "-B", WORKER_IN_SANDBOX, config]
            command, fds = build_command(layout, argv, bwrap=self.bwrap)
            return _Worker(command, fds, None)
        workdir = Path(tempfile.mkdtemp(prefix="plumbline-unsafe-"))
        (workdir / "tmp").mkdir()
        (workdir / "home").mkdir()
        environment = {k: v.replace("{workdir}", str(workdir)) for k, v in self.environment.items()}
        command = ["env", "-i", *(f"{k}={v}" for k, v in sorted(environment.items()))]
        command += [sys.executable, "-I", "-B", str(WORKER_SCRIPT), config]
        return _Worker(command, [], workdir)

    def run(self, job: Job) -> JobResult:
        """Run one job in a warm worker and return its result (blocking, thread-safe)."""
        with self._slots:
            with self._lock:
                if self._closed:
                    raise RuntimeError("the worker pool is closed")
                if self._idle.empty() and self._unspawned == 0:
                    self._unspawned = 1  # more jobs than announced: start one anyway
                    self._spawn_if_needed()
                worker = self._idle.get()
                self._spawn_if_needed()  # the next sample's worker warms up meanwhile
            try:
                return self._run(worker, job)
            finally:
                worker.kill()

    def _run(self, worker: _Worker, job: Job) -> JobResult:
        """Give the job to a ready worker, wait for its result until the limit, then stop it."""
        failure = self._warmup_failure(worker)
        if failure is not None:
            return failure
        payload = self._payload(worker, job)
        started = time.monotonic()
        deadline = started + self.limits.wall_seconds
        _send(worker, payload)
        result, timed_out = _await_result(worker, deadline)
        seconds = time.monotonic() - started
        if timed_out:
            worker.kill()
        else:
            with contextlib.suppress(subprocess.TimeoutExpired):
                worker.process.wait(timeout=10)
            worker.kill()
        return self._outcome(worker, result, timed_out, seconds)

    def _warmup_failure(self, worker: _Worker) -> JobResult | None:
        """None once the worker says it is ready; otherwise kill it and say why it is not."""
        try:
            ready = worker.next_message(time.monotonic() + self.warmup_seconds)
        except queue.Empty:
            worker.kill()
            return JobResult(
                "warmup_failed",
                log=worker.log.text(),
                message=f"the worker was not ready after {self.warmup_seconds:.0f} s",
            )
        if ready is None or ready.get("event") != "ready":
            worker.kill()
            exception = None if ready is None else ready.get("exception")
            return JobResult(
                "warmup_failed",
                exception=exception,
                log=worker.log.text(),
                returncode=worker.process.returncode,
                message="the worker failed to start its runtime",
            )
        return None

    def _payload(self, worker: _Worker, job: Job) -> dict[str, Any]:
        """The job as the worker protocol sends it, with this pool's per-sample limits."""
        workdir = SANDBOX_ROOT if worker.workdir is None else str(worker.workdir)
        return {
            "workdir": workdir,
            "files": dict(job.files),
            "entry": job.entry,
            "args": list(job.args),
            "module": job.module,
            "cwd": job.cwd,
            "collect": list(job.collect),
            "collect_max_bytes": job.collect_max_bytes,
            "cdk_context": dict(job.cdk_context),
            "cdk_app_defaults": dict(job.cdk_app_defaults),
            "record_synthesis": job.record_synthesis,
            "limits": {
                "address_space_bytes": self.limits.address_space_bytes,
                "cpu_seconds": self.limits.cpu_seconds,
            },
        }

    def _outcome(
        self, worker: _Worker, result: dict[str, Any] | None, timed_out: bool, seconds: float
    ) -> JobResult:
        """The JobResult of a stopped worker: timed out, crashed, or what its result says."""
        log = worker.log.text()
        if timed_out:
            return JobResult(
                "timeout",
                log=log,
                seconds=seconds,
                message=f"stopped after the {self.limits.wall_seconds:g} s wall-clock limit",
            )
        if result is None:
            return JobResult(
                "crashed",
                log=log,
                returncode=worker.process.returncode,
                signal=worker.exit_signal(),
                seconds=seconds,
                message="the worker exited without a result",
            )
        status = result.get("status", "worker_error")
        return JobResult(
            status if status in ("ok", "exception", "sandbox_error", "worker_error") else "crashed",
            exception=result.get("exception"),
            files=dict(result.get("files") or {}),
            truncated=bool(result.get("truncated")),
            log=log,
            returncode=worker.process.returncode,
            seconds=seconds,
            message=str(result.get("message", "")),
            synthesized=_synthesized(result.get("synthesized")),
        )

    def close(self) -> None:
        """Stop every idle worker. Running jobs finish; later calls to run() fail."""
        with self._lock:
            self._closed = True
            while True:
                try:
                    worker = self._idle.get_nowait()
                except queue.Empty:
                    break
                worker.kill()


def _synthesized(value: Any) -> dict[str, str] | None:
    if not isinstance(value, dict):
        return None
    return {str(name): str(digest) for name, digest in value.items()}
