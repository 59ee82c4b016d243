"""The kernel side of a trial's limits (`plumbline.agent.limits`): its own cgroup, the rlimits
of its processes, and what the kernel counted when the trial ended.

The mechanism is chosen once per process: cgroup v2 when this process's cgroup is delegated
to it (its `cgroup.subtree_control` has, or takes, `memory` and `pids`), cgroup v1 when run as
root with writable `memory` and `pids` hierarchies, rlimits otherwise;
`PLUMBLINE_LIMITS_MECHANISM=rlimit` forces rlimits (to try that path, or where no cgroup may be
made). The kernel does not apply `RLIMIT_NPROC` to root: as root, only a cgroup limits the
process count. A trial's command is
started by `/bin/sh` writing its own PID into the trial's cgroup and then `prlimit` (util-linux)
setting the rlimits, so every process the trial starts is inside both from its first
instruction (no race with a fork).

Reference: cgroups(7); Linux Documentation/admin-guide/cgroup-v2.rst, cgroup-v1/memory.rst,
cgroup-v1/pids.rst; prlimit(1); setrlimit(2).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shlex
import shutil
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from plumbline.agent.limits import Mechanism, TrialLimits

CGROUP_PREFIX = "plumbline-trial"
#: The environment variable that chooses the mechanism: `auto` (or unset: the first that
#: works here) or `rlimit` (never a cgroup).
MECHANISM_VARIABLE = "PLUMBLINE_LIMITS_MECHANISM"
MECHANISM_CHOICES = ("auto", "rlimit")


def mechanism_problem() -> str | None:
    """Why `PLUMBLINE_LIMITS_MECHANISM` is not a choice (None: it is, or it is unset)."""
    value = os.environ.get(MECHANISM_VARIABLE, "auto")
    if value in MECHANISM_CHOICES:
        return None
    return f"{MECHANISM_VARIABLE}={value!r}: expected one of {', '.join(MECHANISM_CHOICES)}"


@dataclass(frozen=True)
class CgroupParents:
    """Where trial cgroups are made: one directory (v2) or one per v1 controller."""

    mechanism: Mechanism
    memory: Path
    pids: Path
    cpu: Path | None


#: A cgroup mount: (fstype, mount point, mount root, super options).
Mount = tuple[str, Path, str, set[str]]


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup path per controller name (v2: the key `""`)."""
    found: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            found[name] = path
    return found


def _cgroup_mounts() -> list[Mount]:
    """(fstype, mount point, mount root, super options) of every cgroup mount."""
    mounts = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        before, _, after = line.partition(" - ")
        parts, rest = before.split(), after.split()
        if len(rest) >= 3 and rest[0] in ("cgroup", "cgroup2"):
            mounts.append((rest[0], Path(parts[4]), parts[3], set(rest[2].split(","))))
    return mounts


def _inside(mount: Path, root: str, path: str) -> Path:
    relative = os.path.relpath(path, root) if path.startswith(root) else path
    return mount / relative.lstrip("/").removeprefix(".").lstrip("/")


def _v2_parent(own: dict[str, str], mounts: list[Mount]) -> Path | None:
    """This process's v2 cgroup when trial cgroups with memory and pids can be made in it."""
    if "" not in own:
        return None
    for fstype, mount, root, _ in mounts:
        if fstype != "cgroup2":
            continue
        directory = _inside(mount, root, own[""])
        try:
            available = set((directory / "cgroup.controllers").read_text().split())
            if not {"memory", "pids"} <= available:
                continue
            control = directory / "cgroup.subtree_control"
            if not {"memory", "pids"} <= set(control.read_text().split()):
                control.write_text("+memory +pids")
        except OSError:
            continue
        if os.access(directory, os.W_OK):
            return directory
    return None


def _v1_parents(own: dict[str, str], mounts: list[Mount]) -> dict[str, Path]:
    """This process's v1 cgroup per controller (memory, pids, cpuacct) that root can write."""
    parents: dict[str, Path] = {}
    for fstype, mount, root, options in mounts:
        for name in ("memory", "pids", "cpuacct"):
            if fstype == "cgroup" and name in options and name in own:
                directory = _inside(mount, root, own[name])
                if os.access(directory, os.W_OK):
                    parents[name] = directory
    return parents


@functools.cache
def cgroup_parents() -> CgroupParents | None:
    """Where this process can make trial cgroups (None: rlimits only), found once."""
    if os.environ.get(MECHANISM_VARIABLE) == "rlimit":
        return None
    try:
        own, mounts = _own_cgroups(), _cgroup_mounts()
    except (OSError, ValueError):
        return None
    v2 = _v2_parent(own, mounts)
    if v2 is not None:
        return CgroupParents("cgroup-v2", v2, v2, v2)
    if os.geteuid() == 0:
        v1 = _v1_parents(own, mounts)
        if "memory" in v1 and "pids" in v1:
            return CgroupParents("cgroup-v1", v1["memory"], v1["pids"], v1.get("cpuacct"))
    return None


def mechanism() -> Mechanism:
    """How trial limits are enforced on this machine."""
    parents = cgroup_parents()
    return "rlimit" if parents is None else parents.mechanism


class TrialCgroup:
    """One trial's cgroup (a directory per v1 controller, or one v2 directory) with its limits
    written; `exceeded` reads what the kernel counted, `remove` ends it."""

    def __init__(self, parents: CgroupParents, limits: TrialLimits) -> None:
        self.parents, self.limits = parents, limits
        name = f"{CGROUP_PREFIX}-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        places = [parents.memory, parents.pids, parents.cpu]
        self.directories = tuple(dict.fromkeys(p / name for p in places if p is not None))
        try:
            for directory in self.directories:
                directory.mkdir()
            self._write_limits()
        except OSError:
            self.remove()
            raise

    @property
    def memory(self) -> Path:
        return self.parents.memory / self.directories[0].name

    @property
    def pids(self) -> Path:
        return self.parents.pids / self.directories[0].name

    def _write_limits(self) -> None:
        memory, processes = str(self.limits.memory_bytes), str(self.limits.processes)
        if self.parents.mechanism == "cgroup-v2":
            (self.memory / "memory.max").write_text(memory)
            swap = self.memory / "memory.swap.max"
            if swap.exists():
                swap.write_text("0")
        else:
            (self.memory / "memory.limit_in_bytes").write_text(memory)
            swap = self.memory / "memory.memsw.limit_in_bytes"
            if swap.exists():
                swap.write_text(memory)
        (self.pids / "pids.max").write_text(processes)

    def join_script(self) -> str:
        """Shell lines that move the shell into this cgroup (exit status 125 when they fail)."""
        files = " ".join(shlex.quote(str(d / "cgroup.procs")) for d in self.directories)
        return f'for f in {files}; do echo $$ > "$f" || exit 125; done\n'

    def exceeded(self) -> str | None:
        """The limit the kernel enforced on this trial, if any: `memory` (the OOM killer
        ended a process), `processes` (a fork was refused) or `cpu` (the processes used the
        trial's CPU seconds)."""
        if self.parents.mechanism == "cgroup-v2":
            oom = _counter(self.memory / "memory.events", "oom_kill")
        else:
            oom = _counter(self.memory / "memory.oom_control", "oom_kill")
        if oom:
            return "memory"
        if _counter(self.pids / "pids.events", "max"):
            return "processes"
        if self._cpu_seconds() >= self.limits.cpu_seconds:
            return "cpu"
        return None

    def _cpu_seconds(self) -> float:
        cpu = self.parents.cpu
        if cpu is None:
            return 0.0
        directory = cpu / self.directories[0].name
        if self.parents.mechanism == "cgroup-v2":
            return _counter(directory / "cpu.stat", "usage_usec") / 1e6
        with contextlib.suppress(OSError, ValueError):
            return int((directory / "cpuacct.usage").read_text()) / 1e9
        return 0.0

    def remove(self) -> None:
        """Kill what is left in the cgroup and remove it (retried while processes exit)."""
        for directory in self.directories:
            if not directory.is_dir():
                continue
            deadline = time.monotonic() + 5.0
            while True:
                _kill_members(directory)
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.01)


def _kill_members(directory: Path) -> None:
    with contextlib.suppress(OSError, ValueError):
        for text in (directory / "cgroup.procs").read_text().split():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(text), signal.SIGKILL)


def _counter(path: Path, key: str) -> int:
    """The value of `key` in a flat-keyed cgroup file (`oom_kill 2`), 0 when absent."""
    with contextlib.suppress(OSError, ValueError):
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    return 0


def rlimit_arguments(limits: TrialLimits, *, with_cgroup: bool) -> list[str]:
    """The `prlimit` command and options for a trial: CPU seconds (soft, then SIGKILL one second
    later), largest file; without a cgroup, also address space and processes (the user's
    processes now plus the limit, since the kernel counts them per user)."""
    prlimit = shutil.which("prlimit") or "/usr/bin/prlimit"
    cpu = limits.cpu_seconds
    arguments = [prlimit, f"--cpu={cpu}:{cpu + 1}", f"--fsize={limits.disk_bytes}"]
    if not with_cgroup:
        arguments += [
            f"--as={limits.memory_bytes}",
            f"--nproc={_user_tasks() + limits.processes}",
        ]
    return [*arguments, "--"]


def _user_tasks() -> int:
    """Processes and threads of this user now (what RLIMIT_NPROC counts)."""
    uid, count = os.getuid(), 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(entry / "task"))
    return count


__all__ = [
    "MECHANISM_VARIABLE",
    "CgroupParents",
    "TrialCgroup",
    "cgroup_parents",
    "mechanism",
    "mechanism_problem",
    "rlimit_arguments",
]
