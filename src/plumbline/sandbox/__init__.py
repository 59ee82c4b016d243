"""Isolated execution of untrusted (model-written) code with bubblewrap.

- ``bwrap``: sandbox layout, command construction, availability probe.
- ``limits``: per-sample resource limits.
- ``env``: the allow-listed environment.
- ``pool``: warm, sandboxed, single-use worker processes.
"""

from plumbline.sandbox.bwrap import (
    SANDBOX_ROOT,
    SandboxLayout,
    SandboxStatus,
    SandboxUnavailable,
    build_command,
    probe_sandbox,
    require_sandbox,
)
from plumbline.sandbox.env import sandbox_environment
from plumbline.sandbox.limits import ResourceLimits
from plumbline.sandbox.pool import Job, JobResult, WarmPool

__all__ = [
    "SANDBOX_ROOT",
    "Job",
    "JobResult",
    "ResourceLimits",
    "SandboxLayout",
    "SandboxStatus",
    "SandboxUnavailable",
    "WarmPool",
    "build_command",
    "probe_sandbox",
    "require_sandbox",
    "sandbox_environment",
]
