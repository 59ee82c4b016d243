"""Where an agent trial runs: a sandbox around the agent, and a fresh one around its judge.

The agent under test runs arbitrary commands, so a trial is a wall, not a convention. With the
`bubblewrap` sandbox (the default on Linux) the agent and everything it starts see:

=========================  ===================================================================
system                     `/usr`, `/bin`, `/lib*` read-only; of `/etc` only what a runtime
                           needs (`TRIAL_ETC_FILES`: no `shadow`, no ssh keys)
runtimes                   the Python and Node.js installations read-only
the agent                  its resolved executable's install prefix read-only (a Node
                           package's `node_modules`, a virtual environment), the interpreter its
                           script names, `--mount-ro` paths and the suite's `mounts`
writable                   the trial's workspace, its own HOME, a private `/tmp` and
                           `/dev/shm` (tmpfs mounts of the disk limit)
absent                     the invoking user's home, the suite and task sources, the results
                           directory, every other trial, the harness's processes (`/proc` is
                           the sandbox's own: new PID namespace)
namespaces                 new user, PID, IPC, UTS and cgroup namespaces, and network unless
                           `--network host`: only the harness's proxy ports are reachable
                           (`plumbline.agent.sandbox_network`); no capabilities, no nested
                           user namespaces, `--die-with-parent`, a new session
limits                     the trial's own cgroup and rlimits (`plumbline.agent.limits`)
end of the trial           the PID namespace dies with the agent's main process: no process
                           outlives the trial, detached or not
=========================  ===================================================================

bwrap reads its arguments from a memory file (`--args`), so the environment it sets (a
`--pass-env` key) is on no command line that `ps` shows, and bwrap itself starts with an empty
environment (it is PID 1 inside, and `/proc/1/environ` is readable there).

The acceptance command runs afterwards in a second, fresh sandbox (`Confinement` with a new
HOME and the harness's PATH), so nothing the agent left in its HOME, `/tmp` or PATH can judge
its own work. The `none` sandbox runs both on the host, unconfined, and says so in every
record (`sandbox: none`). Other runtimes (podman, docker) register in `TRIAL_SANDBOXES`.

Reference: bubblewrap(1), https://github.com/containers/bubblewrap.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from plumbline.agent.limits import Mechanism, TrialLimits
from plumbline.agent.limits_kernel import (
    TrialCgroup,
    cgroup_parents,
    mechanism_problem,
    rlimit_arguments,
)
from plumbline.agent.process import ProcessResult
from plumbline.agent.sandbox_network import (
    READY,
    BridgeError,
    Network,
    bridge_mounts,
    check_bridges,
    entry_script,
    find_socat,
)
from plumbline.core.registry import Registry, RegistryError
from plumbline.sandbox.bwrap import (
    CONFINED,
    ETC_FILES,
    find_bwrap,
    system_arguments,
)

#: /etc entries a trial's runtimes need: the sandbox's own, plus name resolution and TLS
#: certificates (agents call their APIs over the network).
TRIAL_ETC_FILES = (
    *ETC_FILES,
    "resolv.conf",
    "host.conf",
    "gai.conf",
    "services",
    "protocols",
    "ssl",
    "ca-certificates",
    "ca-certificates.conf",
    "pki",
)

#: Size of the private /tmp of a sandboxed trial (a tmpfs: memory is used only as written).
TMP_BYTES = 2 * 1024**3


class SandboxError(RuntimeError):
    """A trial cannot be sandboxed as asked (no bubblewrap here, a mount that would expose
    the results); the message says why and what to do."""


@dataclass(frozen=True)
class HomeFile:
    """A host file copied into every trial's HOME (a credential, a config): `source` on the
    host, `destination` relative to HOME."""

    source: Path
    destination: str

    @classmethod
    def parse(cls, text: str) -> HomeFile:
        """`SRC[:DEST]`: DEST defaults to SRC's path below the user's home, else its name."""
        source_text, _, destination = text.partition(":")
        source = Path(source_text).expanduser()
        if not source.is_file():
            raise SandboxError(f"--home-file {text}: {source} is not a file")
        if not destination:
            resolved, home = source.resolve(), Path.home().resolve()
            destination = (
                resolved.relative_to(home).as_posix()
                if resolved.is_relative_to(home)
                else source.name
            )
        relative = Path(destination)
        if relative.is_absolute() or ".." in relative.parts or not relative.parts:
            raise SandboxError(f"--home-file {text}: DEST must be a path inside HOME")
        return cls(source.resolve(), relative.as_posix())


@dataclass(frozen=True)
class SandboxOptions:
    """How trials are sandboxed: the `TRIAL_SANDBOXES` name, the network (`isolated`: its own
    namespace, only the `bridges` ports reachable), the proxy ports bridged in (port -> host
    Unix socket), extra read-only paths, files copied into each trial's HOME, and the
    kernel-enforced limits of each trial."""

    kind: str = "bubblewrap"
    network: Network = "isolated"
    bridges: tuple[tuple[int, Path], ...] = ()
    mount_ro: tuple[Path, ...] = ()
    home_files: tuple[HomeFile, ...] = ()
    limits: TrialLimits = field(default_factory=TrialLimits)

    def __post_init__(self) -> None:
        # Unconfined trials (`--sandbox none`) can only be on the host's network: that is
        # what their records say.
        if self.kind == "none" and self.network == "isolated":
            object.__setattr__(self, "network", "host")

    @property
    def tmp_bytes(self) -> int:
        return self.limits.disk_bytes

    def trial_bridges(self) -> tuple[tuple[int, Path], ...]:
        """The bridges a trial gets: `bridges` when isolated, none otherwise."""
        return self.bridges if self.network == "isolated" else ()


@dataclass(frozen=True)
class Confinement:
    """What one sandboxed command may reach. Paths appear inside at their host paths.

    Attributes:
        writable: directories bound read-write (the workspace, the HOME).
        read_only: host paths bound read-only (runtimes, the agent's install prefix, mounts).
        symlinks: (target, path) pairs: symbolic links recreated inside (an executable's
            link on PATH pointing into its install prefix).
        hidden: host paths never visible, even below a read-only path (an empty tmpfs
            covers each one found there).
        network: whether the host's network is reachable.
        cwd: where the command starts.
        environment: its complete environment.
        tmp_bytes: the size of the private /tmp and /dev/shm.
        bridges: (port, host Unix socket) pairs: without the host's network,
            `127.0.0.1:port` inside forwards to the socket (`sandbox_network`).
        limits: the kernel-enforced limits (None: none, as for the sandbox probe).
    """

    writable: tuple[Path, ...]
    read_only: tuple[Path, ...]
    hidden: tuple[Path, ...]
    network: bool
    cwd: Path
    environment: Mapping[str, str]
    symlinks: tuple[tuple[str, Path], ...] = ()
    tmp_bytes: int = TMP_BYTES
    bridges: tuple[tuple[int, Path], ...] = ()
    limits: TrialLimits | None = None


@dataclass(frozen=True)
class Launch:
    """How to start a command in a sandbox: the argv, the launcher's own environment, the
    descriptors it inherits (closed by the caller once the process has started), the trial's
    cgroup, and the pipe its entry script says `ready` on just before the command starts."""

    argv: list[str]
    env: Mapping[str, str]
    pass_fds: tuple[int, ...] = ()
    cwd: Path | None = None
    cgroup: TrialCgroup | None = None
    ready: int | None = None
    limits: TrialLimits | None = None

    def close(self) -> None:
        """Close what the launcher inherited; remove the cgroup; close the ready pipe."""
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        if self.cgroup is not None:
            self.cgroup.remove()
        if self.ready is not None:
            with contextlib.suppress(OSError):
                os.close(self.ready)

    def started(self) -> bool:
        """Whether the command itself started (its cgroup joined, its bridges listening); read
        once the process has ended."""
        if self.ready is None:
            return True
        with contextlib.suppress(OSError):
            return os.read(self.ready, len(READY)) == READY
        return False

    def exceeded(self, result: ProcessResult) -> str | None:
        """The limit (a `LIMIT_NAMES` key) the trial hit, read once it ended: what its cgroup
        counted, else a process ended by SIGXCPU or SIGXFSZ (bwrap exits with 128 + signal),
        else its time limit."""
        if self.limits is None:
            return None
        found = self.cgroup.exceeded() if self.cgroup is not None else None
        code = result.exit_code
        signals = {int(signal.SIGXCPU): "cpu", int(signal.SIGXFSZ): "disk"}
        if found is None and code is not None:
            found = signals.get(-code) or signals.get(code - 128)
        if found is None and result.timed_out:
            found = "wall"
        return found

    @property
    def mechanism(self) -> Mechanism:
        return self.cgroup.parents.mechanism if self.cgroup is not None else "rlimit"


@dataclass(frozen=True)
class ConfinedResult(ProcessResult):
    """How a sandboxed command ended, with the limit it hit (a `LIMIT_NAMES` key) and the
    mechanism that enforced the limits."""

    limit_exceeded: str | None = None
    limits_mechanism: Mechanism | None = None

    @classmethod
    def of(
        cls, result: ProcessResult, limit: str | None, mechanism: Mechanism | None
    ) -> ConfinedResult:
        """`result` with the limit it hit and the mechanism that held the limits."""
        values = {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}
        return cls(**values, limit_exceeded=limit, limits_mechanism=mechanism)


class TrialSandbox(Protocol):
    """A way to run a trial's commands: `unavailable()` says why it cannot run here (None when
    it can), `launch` turns a command and its confinement into what to start."""

    name: str

    def unavailable(self, network: Network) -> str | None: ...

    def launch(self, argv: Sequence[str], confinement: Confinement) -> Launch: ...


TRIAL_SANDBOXES: Registry[TrialSandbox] = Registry("trial sandbox", "plumbline.trial_sandboxes")


class NoSandbox:
    """The command runs on the host as the harness's user (`--sandbox none`): it can read and
    write whatever that user can. Its records say `sandbox: none`."""

    name = "none"

    def unavailable(self, network: Network) -> str | None:
        if network != "host":
            return f"--network {network} needs a sandbox (--sandbox bubblewrap)"
        return None

    def launch(self, argv: Sequence[str], confinement: Confinement) -> Launch:
        if confinement.limits is None:
            return Launch(list(argv), dict(confinement.environment), cwd=confinement.cwd)
        ready_read, ready_write = _ready_pipe()
        script = entry_script((), "socat", ready_write)
        try:
            prefix, cgroup = limited_prefix(confinement.limits)
        except OSError:
            _close(ready_read, ready_write)
            raise
        return Launch(
            [*prefix, "/bin/sh", "-c", script, "sh", *argv],
            dict(confinement.environment),
            (ready_write,),
            cwd=confinement.cwd,
            cgroup=cgroup,
            ready=ready_read,
            limits=confinement.limits,
        )


class BubblewrapSandbox:
    """The command runs in a bubblewrap sandbox built from its `Confinement`."""

    name = "bubblewrap"

    def unavailable(self, network: Network) -> str | None:
        return _bubblewrap_problem(network == "host")

    def launch(self, argv: Sequence[str], confinement: Confinement) -> Launch:
        bwrap = find_bwrap()
        if bwrap is None:
            raise SandboxError(
                "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
            )
        options = bwrap_options(confinement)
        fd = os.memfd_create("plumbline-bwrap-args")
        os.write(fd, b"".join(os.fsencode(a) + b"\0" for a in options))
        os.lseek(fd, 0, os.SEEK_SET)
        # bwrap takes the command itself from its own command line, after the options.
        command = [bwrap, "--args", str(fd), "--"]
        if confinement.limits is None and not confinement.bridges:
            return Launch([*command, *argv], {}, (fd,), cwd=Path("/"))
        socat = find_socat()
        if confinement.bridges and socat is None:
            os.close(fd)
            raise SandboxError("socat is not installed (Debian/Ubuntu: apt-get install socat)")
        ready_read, ready_write = _ready_pipe()
        script = entry_script(confinement.bridges, socat or "socat", ready_write)
        inner = ["/bin/sh", "-c", script, "sh", *argv]
        try:
            prefix, cgroup = limited_prefix(confinement.limits)
        except OSError:
            _close(fd, ready_read, ready_write)
            raise
        return Launch(
            [*prefix, *command, *inner],
            {},
            (fd, ready_write),
            cwd=Path("/"),
            cgroup=cgroup,
            ready=ready_read,
            limits=confinement.limits,
        )


def _ready_pipe() -> tuple[int, int]:
    """The pipe a trial's entry script says `ready` on: the read end non-blocking (read once
    the trial has ended), the write end inherited by the trial."""
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    return read_end, write_end


def _close(*fds: int) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def limited_prefix(limits: TrialLimits | None) -> tuple[list[str], TrialCgroup | None]:
    """The commands that start a trial inside its limits (a shell joining its new cgroup, then
    `prlimit`), and that cgroup; nothing without limits. `OSError` when the cgroup cannot be
    made."""
    if limits is None:
        return [], None
    parents = cgroup_parents()
    cgroup = TrialCgroup(parents, limits) if parents is not None else None
    rlimits = rlimit_arguments(limits, with_cgroup=cgroup is not None)
    if cgroup is None:
        return rlimits, None
    return ["/bin/sh", "-c", cgroup.join_script() + 'exec "$@"', "sh", *rlimits], cgroup


TRIAL_SANDBOXES.register("none")(NoSandbox())
TRIAL_SANDBOXES.register("bubblewrap")(BubblewrapSandbox())


def bwrap_options(confinement: Confinement) -> list[str]:
    """The bwrap options (after `bwrap`, before `--` and the command) that confine a command
    as `confinement` says."""
    arguments = [
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        *([] if confinement.network else ["--unshare-net"]),
        *CONFINED,
        *system_arguments(TRIAL_ETC_FILES),
        "--size",
        str(confinement.tmp_bytes),
        "--tmpfs",
        "/tmp",
        # The host's /dev/shm is not there; the trial's own is a tmpfs of the same size.
        "--size",
        str(confinement.tmp_bytes),
        "--tmpfs",
        "/dev/shm",
        *([] if confinement.network else bridge_mounts(confinement.bridges)),
    ]
    read_only = _outermost(confinement.read_only)
    for path in read_only:
        arguments += ["--ro-bind", str(path), str(path)]
    for target, link in confinement.symlinks:
        if not any(link.is_relative_to(p) for p in read_only):
            arguments += ["--symlink", target, str(link)]
    for hidden in _outermost(confinement.hidden):
        if any(hidden.is_relative_to(p) for p in read_only) and hidden.is_dir():
            arguments += ["--tmpfs", str(hidden), "--remount-ro", str(hidden)]
    for path in confinement.writable:
        arguments += ["--bind", str(path), str(path)]
    arguments += ["--chdir", str(confinement.cwd), "--remount-ro", "/"]
    for name, value in sorted(confinement.environment.items()):
        arguments += ["--setenv", name, value]
    return arguments


def _outermost(paths: Sequence[Path]) -> list[Path]:
    """`paths` without those inside another one of them, in order."""
    unique = list(dict.fromkeys(paths))
    return [p for p in unique if not any(p != q and p.is_relative_to(q) for q in unique)]


@functools.cache
def _bubblewrap_problem(network: bool) -> str | None:
    """Why a trial sandbox cannot be made here (None: it can), checked once per process by
    running `true` in one built like a trial's."""
    bwrap = find_bwrap()
    if bwrap is None:
        return "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    confinement = Confinement(
        writable=(),
        read_only=(),
        hidden=(),
        network=network,
        cwd=Path("/"),
        environment={"PATH": "/usr/bin:/bin"},
    )
    launch = BubblewrapSandbox().launch(["/bin/sh", "-c", "exit 0"], confinement)
    try:
        completed = subprocess.run(
            launch.argv,
            env=dict(launch.env),
            pass_fds=launch.pass_fds,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bwrap could not be started: {error}"
    finally:
        launch.close()
    if completed.returncode != 0:
        detail = completed.stderr.strip() or f"exit status {completed.returncode}"
        return (
            f"bwrap cannot create a sandbox here ({detail}); unprivileged user namespaces may "
            "be disabled (sysctl kernel.unprivileged_userns_clone=1 or user.max_user_namespaces>0)"
        )
    return None


def require(options: SandboxOptions) -> TrialSandbox:
    """The sandbox `options` names, checked to work here; `SandboxError` says why not."""
    try:
        sandbox = TRIAL_SANDBOXES.get(options.kind)
    except RegistryError as error:
        raise SandboxError(f"--sandbox {options.kind}: {error}") from None
    problem = mechanism_problem() or sandbox.unavailable(options.network)
    if problem is None and options.trial_bridges() and options.kind != "none":
        try:
            check_bridges(options.trial_bridges())
        except BridgeError as error:
            problem = str(error)
        if problem is None and find_socat() is None:
            problem = "socat is not installed (Debian/Ubuntu: apt-get install socat)"
    if problem is not None:
        hint = "" if options.kind == "none" else "; --sandbox none runs trials unconfined"
        raise SandboxError(f"agent trials cannot be sandboxed with {options.kind}: {problem}{hint}")
    return sandbox


__all__ = [
    "TRIAL_SANDBOXES",
    "BubblewrapSandbox",
    "ConfinedResult",
    "Confinement",
    "HomeFile",
    "Launch",
    "Network",
    "NoSandbox",
    "SandboxError",
    "SandboxOptions",
    "TrialSandbox",
    "bwrap_options",
    "require",
]
