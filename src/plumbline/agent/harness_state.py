"""A harness's state and the walls of its trials: the sandbox, the mounts, the metering proxy
and the baselines while trials run, and running a command confined (`HarnessState`).
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from plumbline.agent.disk_watch import DiskWatch
from plumbline.agent.leases import BASELINES_PREFIX
from plumbline.agent.meter import DEFAULT_ALLOW, Meter, MeterError
from plumbline.agent.plan import Plan
from plumbline.agent.process import ProcessRegistry, run_process
from plumbline.agent.safe_files import remove_tree
from plumbline.agent.sandbox import (
    ConfinedResult,
    Confinement,
    TrialSandbox,
    require,
)
from plumbline.agent.trial_paths import home_file_secrets
from plumbline.core.redaction import Redactor
from plumbline.records.io import JsonlAppender
from plumbline.records.run_record import RunRecord

if TYPE_CHECKING:
    from plumbline.agent.sequential import SequentialMonitor


from plumbline.agent.run_types import RECORDS, Materials, RunError, RunOptions


class HarnessState:
    """What every part of a harness shares: its plan, options, sandbox, metering proxy and
    output; and how a command runs confined in a trial."""

    def __init__(
        self,
        plan: Plan,
        options: RunOptions,
        *,
        on_record: Callable[[RunRecord], None] | None = None,
        materials: Materials | None = None,
    ) -> None:
        self.plan = plan
        self.options = options
        self.on_record = on_record
        self.materials = materials or Materials(plan)
        self.registry = ProcessRegistry()
        self.redact = Redactor({**options.secrets(), **home_file_secrets(options.home_files)})
        self.base = (options.workdir or Path(tempfile.gettempdir())).resolve()
        loaded = plan.loaded
        #: What trials must never read: the suite and every task source, the results, other
        #: trials, the invoking user's home (masked wherever a read-only mount holds them).
        self.sources = tuple(
            loaded.resolve(task.source.git or task.source.dir or "").resolve()
            for task in loaded.suite.tasks
        )
        #: Of those, what no read-only mount may lie inside: the suite, the sources, the results.
        self.unmountable = (loaded.path.parent.resolve(), *self.sources, options.output.resolve())
        self.hidden = (*self.unmountable, self.base, Path.home().resolve())
        self._sandbox: TrialSandbox | None = None
        self.records_path = options.output / RECORDS
        self._lock = threading.Lock()
        self._appender: JsonlAppender | None = None
        self.pending_count = 0  # units this run executes (set when it starts)
        # Pristine copies of each trial's `.git`, outside every trial directory (set per run).
        self._baselines: Path | None = None
        # Where trial leases go (OUTPUT/running/; a Ray worker keeps its node's own).
        self.lease_root = options.output
        #: The run's metering proxy while trials run here (`metering`); None: not metered.
        self.meter: Meter | None = None
        #: `--until-decided`: the sequential verdict, updated after every record; once it is
        #: reached no new trial starts (trials already running finish and are recorded).
        self.monitor: SequentialMonitor | None = None

    @property
    def decided(self) -> bool:
        """No new trial should start: the sequential verdict (when monitored) is reached."""
        return self.monitor is not None and self.monitor.stopped

    def sandbox(self) -> TrialSandbox:
        """The trial sandbox the options name, checked once to work here (`SandboxError`)."""
        if self._sandbox is None:
            self._sandbox = require(self.options.sandbox)
        return self._sandbox

    def mounts(self) -> tuple[Path, ...]:
        """The extra read-only paths of every trial: `--mount-ro`, then the suite's `mounts`."""
        loaded = self.plan.loaded
        suite_mounts = (loaded.resolve(m).resolve() for m in loaded.suite.mounts)
        return tuple(
            dict.fromkeys([*(m.resolve() for m in self.options.sandbox.mount_ro), *suite_mounts])
        )

    def allowed_upstreams(self) -> tuple[str, ...]:
        """The upstream hosts the metering proxy forwards to."""
        network = self.plan.loaded.suite.network
        return (*DEFAULT_ALLOW, *network.allow, *self.options.allow_hosts)

    def meter_bridges(self) -> dict[int, Path]:
        """Where a trial with its own network namespace reaches the metering proxy: its
        loopback port inside the trial -> the proxy's Unix socket on the host (empty when the
        run is not metered). The agent's base URLs name `127.0.0.1:<port>` in either mode."""
        return {} if self.meter is None else {self.meter.port: self.meter.socket_path}

    @contextlib.contextmanager
    def metering(self) -> Iterator[None]:
        """Run the metering proxy while the trials of this block run (unless metering is off)."""
        if not self.options.meter:
            yield
            return
        try:
            meter = Meter(self.allowed_upstreams()).__enter__()
        except MeterError as error:
            raise RunError(str(error)) from None
        self.meter = meter
        try:
            yield
        finally:
            self.meter = None
            meter.close()

    @contextlib.contextmanager
    def baselines(self) -> Iterator[None]:
        """Keep the pristine `.git` copies of the trials run in this block in a fresh
        directory under the trial base (outside every trial directory), removed after."""
        self._baselines = Path(tempfile.mkdtemp(prefix=f"{BASELINES_PREFIX}.", dir=self.base))
        try:
            yield
        finally:
            remove_tree(self._baselines)

    def _bridges(self) -> tuple[tuple[int, Path], ...]:
        """The ports a trial with its own network namespace reaches on its loopback: the
        user's `--bridge`s and the metering proxy (none on the host's network)."""
        if self.options.sandbox.network != "isolated":
            return ()
        return (*self.options.sandbox.trial_bridges(), *self.meter_bridges().items())

    def _confines(self) -> bool:
        return self.options.sandbox.kind != "none"

    def run_confined(
        self,
        sandbox: TrialSandbox,
        argv: list[str],
        confinement: Confinement,
        *,
        timeout: float,
        stdout: Path,
        stderr: Path,
        stdin: Path | None = None,
    ) -> ConfinedResult:
        """Run `argv` in `sandbox` under a time limit on everything it starts, in its limits
        (its writable directories together under the disk limit: `agent.disk_watch`)."""
        limits = confinement.limits
        disk = DiskWatch(confinement.writable, limits.disk_bytes) if limits else None
        try:
            launch = sandbox.launch(argv, confinement)
        except OSError as error:
            return ConfinedResult(None, False, 0.0, OSError(f"making the trial's cgroup: {error}"))
        try:
            result = run_process(
                launch.argv,
                cwd=launch.cwd or confinement.cwd,
                env=launch.env,
                timeout=timeout,
                stdout=stdout,
                stderr=stderr,
                stdin=stdin,
                grace=self.options.kill_grace,
                registry=self.registry,
                pass_fds=launch.pass_fds,
                watch=disk.over if disk is not None else None,
            )
            # A command whose writable directories are over the disk limit from the start is
            # stopped by the watch before it says ready: that is the limit, not a failed start.
            if not result.stopped_by_watch and result.start_error is None and not launch.started():
                problem = "its cgroup, limits or network bridges could not be set up"
                return ConfinedResult(None, False, result.duration_seconds, OSError(problem))
            limit = "disk" if result.stopped_by_watch else launch.exceeded(result)
            return ConfinedResult.of(result, limit, launch.mechanism)
        finally:
            launch.close()
