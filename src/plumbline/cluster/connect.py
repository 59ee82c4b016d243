"""Connecting this process to a Ray cluster (or starting a local one)."""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
from types import ModuleType


class ClusterError(RuntimeError):
    """Ray is missing, or the cluster cannot be reached or used."""


def require_ray() -> ModuleType:
    """The `ray` module, or a ClusterError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ClusterError(
            "the Ray executor needs Ray: pip install 'plumbline[ray]' (on this machine and "
            "on every node of the cluster)"
        ) from None
    return ray


def connect(address: str | None) -> bool:
    """Connect to the Ray cluster at `address` (None: the one `RAY_ADDRESS` names, else a
    new local one); True when this call connected (and so should disconnect), False when
    this process was already connected.

    Worker output is not copied to this process (`--json` owns standard output; the
    harness saves every trial's logs itself)."""
    ray = require_ray()
    if ray.is_initialized():
        return False
    if address is not None:
        _reachable(address)
    options: dict[str, object] = {"log_to_driver": False, "logging_level": logging.WARNING}
    if address is None and not os.environ.get("RAY_ADDRESS"):
        options["include_dashboard"] = False
    # Ray's core installs its own SIGTERM handler (which aborts the process); the caller's
    # (the CLI's: stop the trials, record nothing of them) is put back.
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGTERM) if main else None
    try:
        ray.init(address=address, **options)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as error:
        where = f"at {address}" if address else "(local)"
        raise ClusterError(
            f"--ray-address: cannot connect to the Ray cluster {where}: {error}; start it "
            "with `ray start --head` and give its address (HOST:6379)"
        ) from None
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)
    return True


def _reachable(address: str) -> None:
    """Fail fast on a HOST:PORT nobody listens on (Ray itself retries for minutes)."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or "://" in address:
        return  # `auto`, `ray://...`: Ray's to resolve
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as error:
        raise ClusterError(
            f"--ray-address {address}: nothing answers there ({error}); start the head with "
            "`ray start --head --port PORT` and give HOST:PORT"
        ) from None


def disconnect(connected: bool) -> None:
    """Undo `connect` when it connected."""
    if connected:
        require_ray().shutdown()


__all__ = ["ClusterError", "connect", "disconnect", "require_ray"]
