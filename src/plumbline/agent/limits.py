"""What one agent trial may use, enforced by the kernel: memory, processes, CPU time, wall time
and disk.

=============  ==========================================================================
limit          how it is enforced
=============  ==========================================================================
memory         the trial's own cgroup (`memory.max`, v2; `memory.limit_in_bytes` and
               `memory.memsw.limit_in_bytes`, v1): the kernel's OOM killer ends a process of
               the trial, never the harness. Without a cgroup: `RLIMIT_AS` of each process.
processes      the cgroup's `pids.max` (a fork fails once the trial has that many tasks).
               Without a cgroup: `RLIMIT_NPROC` (the user's processes besides the harness's).
cpu            `RLIMIT_CPU` of each process (SIGXCPU, then SIGKILL a second later); with a
               cgroup, a trial whose processes used that much CPU in total is also failed.
wall           the harness's clock: the task's `timeout_seconds`, lowered to this limit.
disk           the workspace and HOME together: the harness adds up the space they take while
               the trial runs and ends it past this size (`plumbline.agent.disk_watch`);
               `RLIMIT_FSIZE` caps every file at this size; `/tmp` and `/dev/shm` are private
               tmpfs mounts of this size (their pages also count as the trial's memory).
=============  ==========================================================================

Which mechanism held the limits (`cgroup-v2`, `cgroup-v1`, `rlimit`) is written in every record
(`limits.mechanism`). A trial that hits a limit fails with `failure_reason` naming it: the
agent's failure, never an infrastructure one.

Reference: cgroups(7), Documentation/admin-guide/cgroup-v2.rst and cgroup-v1/memory.rst,
pids.rst of the Linux kernel; setrlimit(2); tmpfs(5).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

MiB = 1024 * 1024
GiB = 1024 * MiB

#: How a trial's limits were enforced (recorded as `limits.mechanism`).
Mechanism = Literal["cgroup-v2", "cgroup-v1", "rlimit"]

#: The names `--limit NAME=VALUE` takes, with the field each sets and what a value is.
LIMIT_NAMES = {
    "memory": ("memory_bytes", "size"),
    "processes": ("processes", "count"),
    "cpu": ("cpu_seconds", "whole seconds"),
    "wall": ("wall_seconds", "seconds"),
    "disk": ("disk_bytes", "size"),
}

_UNITS = {"": 1, "K": 1024, "M": MiB, "G": GiB, "T": 1024 * GiB}


class LimitError(ValueError):
    """A `--limit` (or suite `limits`) value that is not a limit; the message says why."""


@dataclass(frozen=True)
class TrialLimits:
    """What one trial may use (defaults fit an agent session on a laptop).

    Attributes:
        memory_bytes: memory of all the trial's processes together, tmpfs pages included.
        processes: processes and threads of the trial at once.
        cpu_seconds: CPU seconds of each process.
        wall_seconds: wall-clock seconds of the agent; None: the task's `timeout_seconds`.
        disk_bytes: the space the workspace and HOME take together (and any one file), and
            the size of the private `/tmp` and `/dev/shm`.
    """

    memory_bytes: int = 4 * GiB
    processes: int = 1024
    cpu_seconds: int = 3600
    wall_seconds: float | None = None
    disk_bytes: int = 2 * GiB

    def timeout(self, task_timeout: float) -> float:
        """The agent's time limit: the task's, lowered to `wall_seconds`."""
        return task_timeout if self.wall_seconds is None else min(task_timeout, self.wall_seconds)

    def for_task(self, task_timeout: float) -> TrialLimits:
        """These limits with `wall_seconds` the time limit a task's agent gets."""
        return replace(self, wall_seconds=self.timeout(task_timeout))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_limit(limits: TrialLimits, text: str, where: str = "--limit") -> TrialLimits:
    """`limits` with one `NAME=VALUE` applied: sizes like 512M or 4G (binary units), counts and
    seconds as positive numbers. `LimitError` names the problem."""
    name, found, value = text.partition("=")
    name = name.strip().lower()
    if not found or name not in LIMIT_NAMES:
        raise LimitError(f"{where} {text}: expected NAME=VALUE with NAME one of {_names()}")
    field, kind = LIMIT_NAMES[name]
    amount = _amount(value.strip(), kind)
    if amount is None or (kind != "seconds" and not isinstance(amount, int)):
        examples = {
            "size": "512M or 4G",
            "count": "a whole number",
            "seconds": "seconds",
            "whole seconds": "seconds, rounded up",
        }
        raise LimitError(f"{where} {text}: {name} must be positive ({examples[kind]})")
    if field == "wall_seconds":
        return replace(limits, wall_seconds=float(amount))
    return replace(limits, **{field: int(amount)})


def parse_limits(
    texts: list[str] | tuple[str, ...], base: TrialLimits | None = None
) -> TrialLimits:
    """`base` (the defaults when None) with every `NAME=VALUE` of `texts` applied in order."""
    limits = base or TrialLimits()
    for text in texts:
        limits = parse_limit(limits, text)
    return limits


def _names() -> str:
    return ", ".join(LIMIT_NAMES)


def _amount(text: str, kind: str) -> int | float | None:
    """The positive value `text` gives for a limit of `kind`, or None."""
    if kind == "size":
        upper = text.upper().removesuffix("B").removesuffix("I")
        unit = upper[-1:] if upper[-1:] and upper[-1:] in _UNITS else ""
        number, scale = upper[: len(upper) - len(unit)], _UNITS[unit]
    else:
        number, scale = text, 1
    try:
        amount = float(number) * scale
    except ValueError:
        return None
    if not math.isfinite(amount) or amount <= 0:
        return None
    if kind == "seconds":
        return amount
    if kind == "count" and amount != int(amount):
        return None
    return max(1, math.ceil(amount))


def limit_failure(name: str, limits: TrialLimits, mechanism: Mechanism) -> str:
    """The `failure_reason` of a trial that hit the limit `name` (a `LIMIT_NAMES` key);
    `limits` as the trial had them (`TrialLimits.for_task`: its wall time known)."""
    value = getattr(limits, LIMIT_NAMES[name][0])
    if value is None:
        shown = "the task's timeout"
    elif LIMIT_NAMES[name][1] == "size":
        shown = _size(value)
    else:
        shown = f"{value:g}" + {"cpu": " CPU seconds", "wall": " seconds"}.get(name, "")
    enforcer = {
        "wall": "the harness's clock",
        "disk": f"{mechanism} per file and the harness's watch of workspace and HOME together",
    }.get(name, mechanism)
    return f"limit exceeded: {name} ({shown}, enforced by {enforcer})"


def _size(value: int) -> str:
    for unit, scale in (("G", GiB), ("M", MiB)):
        if value >= scale and value % scale == 0:
            return f"{value // scale}{unit}"
    return f"{value} bytes"


def limits_record(limits: TrialLimits, mechanism: Mechanism) -> dict[str, Any]:
    """The record's `limits` field: every limit and how it was enforced."""
    return {**limits.to_dict(), "mechanism": mechanism}


__all__ = [
    "LIMIT_NAMES",
    "GiB",
    "LimitError",
    "Mechanism",
    "MiB",
    "TrialLimits",
    "limit_failure",
    "limits_record",
    "parse_limit",
    "parse_limits",
]
