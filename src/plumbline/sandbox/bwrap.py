"""Building and probing bubblewrap (``bwrap``) sandboxes.

A sandbox here is a fresh root file system made of read-only bind mounts of what the runtime
needs (``/usr``, the Python installation and virtual environment, Node.js, caches the caller
names), private size-limited tmpfs mounts (the work directory and /tmp) that are the only
writable places, no network, new PID,
IPC, UTS, cgroup and user namespaces, no capabilities, no further user namespaces, and the
environment replaced by an explicit one. The home directory, ``/etc`` secrets, ``/tmp`` of the
host and other samples' directories are simply not there.

Reference: bubblewrap(1); https://github.com/containers/bubblewrap.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: Where the sample's private tmpfs is mounted inside the sandbox.
SANDBOX_ROOT = "/sandbox"

#: /etc entries the runtime needs; everything else in /etc (shadow, ssh keys, ...) is absent.
ETC_FILES = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "localtime",
    "nsswitch.conf",
    "passwd",
    "group",
    "hosts",
    "mime.types",
)


class SandboxUnavailable(RuntimeError):
    """No sandbox can be created here; model code must not run."""


@dataclass(frozen=True)
class SandboxStatus:
    """Whether a bubblewrap sandbox works on this machine, and why not."""

    available: bool
    bwrap: str | None
    reason: str


@dataclass(frozen=True)
class SandboxLayout:
    """What a sandbox contains besides the system directories.

    Attributes:
        read_only: host paths bound read-only, each at the same path inside.
        read_only_at: (host path, sandbox path) pairs bound read-only elsewhere.
        writable_copies: (content, sandbox path) pairs: a private writable file with this
            content placed over a path that exists in a read-only mount (bwrap --bind-data).
        workdir_bytes: size of the private tmpfs at ``SANDBOX_ROOT``.
        environment: the complete environment of the sandboxed process.
    """

    read_only: tuple[Path, ...] = ()
    read_only_at: tuple[tuple[Path, str], ...] = ()
    writable_copies: tuple[tuple[bytes, str], ...] = ()
    workdir_bytes: int = 256 * 1024 * 1024
    environment: dict[str, str] = field(default_factory=dict)


#: Environment variable naming the bubblewrap executable to use instead of `bwrap` on PATH
#: (a path that is not an executable means: no bubblewrap here).
BWRAP_VARIABLE = "PLUMBLINE_BWRAP"


def find_bwrap() -> str | None:
    """The bwrap executable: $PLUMBLINE_BWRAP when set, else `bwrap` on PATH; None if absent."""
    chosen = os.environ.get(BWRAP_VARIABLE)
    if chosen is not None:
        return chosen if os.path.isfile(chosen) and os.access(chosen, os.X_OK) else None
    return shutil.which("bwrap")


def runtime_paths() -> tuple[Path, ...]:
    """Host directories the Python and Node.js runtimes need, outside /usr."""
    candidates = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent}
    node = shutil.which("node")
    if node is not None:
        candidates.add(Path(node).resolve().parent.parent)
    usr = Path("/usr")
    return tuple(
        sorted(
            path
            for path in candidates
            if path.exists() and path != usr and usr not in path.parents and path != Path("/")
        )
    )


#: What every sandbox here is, besides its namespaces and mounts: no nested user namespaces,
#: gone with its parent, its own session (no terminal injection), no capabilities, an empty
#: environment (only what is set explicitly), its own /proc and a minimal /dev.
CONFINED = (
    "--disable-userns",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--clearenv",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
)


def system_arguments(etc_files: Sequence[str] = ETC_FILES) -> list[str]:
    """bwrap arguments binding the system directories read-only, and of /etc only
    `etc_files` (each bound only when it exists here)."""
    arguments = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        host = Path("/") / name
        if host.is_symlink():
            arguments += ["--symlink", os.readlink(host), f"/{name}"]
        elif host.is_dir():
            arguments += ["--ro-bind", str(host), f"/{name}"]
    for name in etc_files:
        host = Path("/etc") / name
        if host.exists():
            arguments += ["--ro-bind", str(host), str(host)]
    return arguments


def build_command(
    layout: SandboxLayout, argv: Sequence[str], *, bwrap: str = "bwrap"
) -> tuple[list[str], list[int]]:
    """Return the bwrap command line and the file descriptors it must inherit.

    The caller passes the descriptors with ``pass_fds`` and closes them after the process has
    started (they carry the ``writable_copies`` contents through pipes).
    """
    arguments = [
        bwrap,
        "--unshare-all",  # pid, net, ipc, uts, cgroup (and user when unprivileged)
        "--unshare-user",  # also as root: --disable-userns needs its own user namespace
        *CONFINED,
        *system_arguments(),
    ]
    # The private tmpfs mounts first (the work directory, and /tmp as its own size-limited
    # tmpfs); then the read-only runtime paths, which may themselves live under /tmp (a
    # checkout or virtualenv there): their mount points are created inside the private /tmp.
    arguments += [
        "--size",
        str(layout.workdir_bytes),
        "--tmpfs",
        SANDBOX_ROOT,
        "--dir",
        f"{SANDBOX_ROOT}/tmp",
        "--dir",
        f"{SANDBOX_ROOT}/home",
        "--size",
        str(layout.workdir_bytes),
        "--tmpfs",
        "/tmp",
    ]
    seen: set[str] = set()
    for path in (*runtime_paths(), *layout.read_only):
        text = str(path)
        if text not in seen:
            seen.add(text)
            arguments += ["--ro-bind", text, text]
    for host, inside in layout.read_only_at:
        arguments += ["--ro-bind", str(host), inside]
    arguments += ["--chdir", SANDBOX_ROOT]
    fds: list[int] = []
    for content, inside in layout.writable_copies:
        read_end, write_end = os.pipe()
        os.write(write_end, content)  # small marker files: fits in the pipe buffer
        os.close(write_end)
        fds.append(read_end)
        arguments += ["--bind-data", str(read_end), inside]
    # The new root is itself a tmpfs holding the mount points: make it read-only too, so
    # that only the private work directory (a separate mount) can be written.
    arguments += ["--remount-ro", "/"]
    for name, value in sorted(layout.environment.items()):
        arguments += ["--setenv", name, value]
    arguments += ["--", *argv]
    return arguments, fds


@functools.cache
def probe_sandbox() -> SandboxStatus:
    """Check once per process that a sandbox with every isolation feature can be created.

    The probe runs ``true`` inside a sandbox built exactly like the real ones (all
    namespaces, no network, tmpfs work directory, dropped capabilities), so a machine where
    user namespaces are disabled, or bwrap is missing, is detected before any model code runs.
    """
    bwrap = find_bwrap()
    if bwrap is None:
        chosen = os.environ.get(BWRAP_VARIABLE)
        where = f" ({BWRAP_VARIABLE}={chosen} is not an executable)" if chosen is not None else ""
        return SandboxStatus(
            False,
            None,
            f"bubblewrap is not installed{where} (Debian/Ubuntu: apt-get install bubblewrap)",
        )
    command, fds = build_command(SandboxLayout(), ["/bin/sh", "-c", "exit 0"], bwrap=bwrap)
    try:
        completed = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=30,
            pass_fds=fds,
            check=False,
            env={"PATH": os.defpath},
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return SandboxStatus(False, bwrap, f"bwrap could not be started: {error}")
    finally:
        for fd in fds:
            os.close(fd)
    if completed.returncode != 0:
        detail = completed.stderr.strip() or f"exit status {completed.returncode}"
        return SandboxStatus(
            False,
            bwrap,
            f"bwrap cannot create a sandbox here ({detail}); unprivileged user namespaces may "
            "be disabled (sysctl kernel.unprivileged_userns_clone=1 or "
            "user.max_user_namespaces>0)",
        )
    return SandboxStatus(True, bwrap, "bubblewrap sandbox available")


def require_sandbox() -> str:
    """Return the bwrap path, or raise SandboxUnavailable with the reason."""
    status = probe_sandbox()
    if not status.available or status.bwrap is None:
        raise SandboxUnavailable(
            f"refusing to run model-written code without a sandbox: {status.reason}. "
            "Pass --unsafe-no-sandbox (unsafe=True) only if you accept running it on this host."
        )
    return status.bwrap
