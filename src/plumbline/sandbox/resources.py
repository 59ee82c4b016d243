"""Resource limits for one sandboxed sample."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

MiB = 1024 * 1024
GiB = 1024 * MiB


@dataclass(frozen=True)
class ResourceLimits:
    """What one sample may use before it is stopped.

    - ``wall_seconds``: wall-clock time from the moment the sample is handed to its (already
      warm) worker until its result; enforced by the host, which kills the whole sandbox.
    - ``cpu_seconds``: CPU seconds of the sample's process (RLIMIT_CPU, SIGXCPU then SIGKILL).
    - ``address_space_bytes``: virtual memory of the sample's Python process (RLIMIT_AS).
    - ``max_processes``: RLIMIT_NPROC. The kernel does not enforce it for uid 0, so the worker
      also installs a seccomp filter that refuses every new process once the runtime is warm.
    - ``file_size_bytes``: largest file any process may write (RLIMIT_FSIZE).
    - ``workdir_bytes``: size of the private tmpfs that is the sample's only writable place.
    """

    wall_seconds: float = 60.0
    cpu_seconds: int = 60
    address_space_bytes: int = 4 * GiB
    max_processes: int = 256
    file_size_bytes: int = 64 * MiB
    workdir_bytes: int = 256 * MiB

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if value <= 0:
                raise ValueError(f"{name} must be positive, got {value}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
