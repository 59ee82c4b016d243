"""Isolated execution of untrusted (model-written) code with bubblewrap.

- ``bwrap``: sandbox layout, command construction, availability probe.
- ``limits``: per-sample resource limits.
- ``env``: the allow-listed environment.
- ``pool``: warm, sandboxed, single-use worker processes.
- ``worker``: the process inside the sandbox (standard library only).

What each sample gets, and how it is enforced:

==============================  =============================================================
no network                      new network namespace (only a loopback device, no routes)
fresh PID namespace             ``--unshare-pid``; the sample sees a handful of its own PIDs;
                                killing the sandbox kills every process in it
system read-only                a new root of read-only bind mounts (``/usr``, the Python and
                                Node.js installations, the jsii package cache), the root tmpfs
                                itself remounted read-only; home, ``/tmp``, ``/etc/shadow``,
                                the repository and other samples are simply absent
private work directory          a size-limited tmpfs at ``/sandbox`` (``/tmp`` points into it)
environment                     built from an allow-list (``env.sandbox_environment``); bwrap
                                itself starts with an empty environment, because its process
                                is visible inside as PID 1 and ``/proc/1/environ`` is readable
no privileges                   ``--cap-drop ALL``, ``--disable-userns``, ``--new-session``
CPU, memory, file size          RLIMIT_CPU (SIGXCPU), RLIMIT_AS (MemoryError), RLIMIT_FSIZE
processes                       a seccomp filter refuses fork/vfork/clone-without-threads with
                                EAGAIN once the runtime is warm; RLIMIT_NPROC as well, which
                                the kernel ignores for uid 0 (as when the host runs as root)
wall clock                      the host kills the whole sandbox at the limit
==============================  =============================================================

Checked on this project's machines (Debian 12, bubblewrap 0.8, running as root in a
container): every feature above works, including user namespaces for root. Where bwrap is
missing or namespaces are disabled, ``probe_sandbox`` says why and nothing runs unless the
caller explicitly asks for ``unsafe_no_sandbox``.

Trust model: the sandbox protects the host and other samples from model code. It does not
try to stop code written specifically to fake a result (it runs in the same process that
reports the cloud assembly).
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
from plumbline.sandbox.pool import Job, JobResult, WarmPool
from plumbline.sandbox.resources import ResourceLimits

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
