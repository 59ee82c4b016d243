"""Connecting this process to a Ray cluster (or starting a local one)."""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import threading
from types import ModuleType
from typing import Any

_log = logging.getLogger("plumbline.cluster")
_warned_open: set[str] = set()
AUTH_MODE = "RAY_AUTH_MODE"

#: Said once per cluster a client reached without authentication.
OPEN_CLUSTER_WARNING = (
    "the Ray cluster at {where} let this process in without authentication: anyone who "
    "reaches its port can run code on its nodes. Start every node with RAY_AUTH_MODE=token "
    "(Ray >= 2.52; `ray get-auth-token --generate` makes a token) and set RAY_AUTH_MODE=token "
    "and RAY_AUTH_TOKEN_PATH (or RAY_AUTH_TOKEN) here; see the README's Ray cluster section"
)


def token_auth_requested(environ: dict[str, str] | None = None) -> bool:
    """Whether this process asks Ray for token authentication (`RAY_AUTH_MODE=token`)."""
    values = os.environ if environ is None else environ
    return values.get(AUTH_MODE, "").strip().lower() == "token"


def warn_if_open(where: str) -> bool:
    """Warn (once per cluster) that a cluster took this process without a token; True when it
    warned. Connecting without `RAY_AUTH_MODE=token` succeeds only on such a cluster."""
    if token_auth_requested() or where in _warned_open:
        return False
    _warned_open.add(where)
    _log.warning(OPEN_CLUSTER_WARNING.format(where=where))
    return True


def _refresh_auth_settings() -> None:
    """Make an already imported Ray read `RAY_AUTH_MODE` and the token again (Ray caches both
    when it first reads its configuration)."""
    import contextlib

    from plumbline.compat.ray import refresh_auth_settings

    with contextlib.suppress(Exception):  # private API (compat.ray): a newer Ray may differ
        refresh_auth_settings()


def _ask_for_token_auth(ray_imported: bool) -> None:
    """Give the local instance this process starts token authentication: set
    `RAY_AUTH_MODE=token` before Ray reads it (at import), or, when Ray was imported already,
    have it read the setting again (`compat.ray`). When neither is possible the instance
    starts without a token (a token only the instance knew would lock this process out) and a
    warning says so; it still listens on loopback only."""
    from plumbline.compat import ray as ray_compat

    if AUTH_MODE in os.environ:
        return
    if ray_imported and not ray_compat.ADAPTER.fast:
        _log.warning(
            "the local Ray instance starts without token authentication: Ray was imported "
            "before plumbline could ask for it; set RAY_AUTH_MODE=token before importing Ray"
        )
        return
    os.environ[AUTH_MODE] = "token"


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
    imported_before = "ray" in sys.modules
    local = address is None and not os.environ.get("RAY_ADDRESS")
    if local and not (imported_before and sys.modules["ray"].is_initialized()):
        _ask_for_token_auth(imported_before)
    ray = require_ray()
    if ray.is_initialized():
        return False
    if address is not None:
        _reachable(address)
    options: dict[str, object] = {"log_to_driver": False, "logging_level": logging.WARNING}
    if local:
        options["include_dashboard"] = False
        _loopback_only(ray, options)
    _refresh_auth_settings()
    # Ray's core installs its own SIGTERM handler (which aborts the process); the caller's
    # (the CLI's: stop the trials, record nothing of them) is put back.
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGTERM) if main else None
    try:
        ray.init(address=address, **options)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as error:
        where = f"at {address}" if address else "(local)"
        hint = "start it with `ray start --head` and give its address (HOST:6379)"
        if _authentication_refused(error):
            hint = (
                "it requires token authentication: set RAY_AUTH_MODE=token and "
                "RAY_AUTH_TOKEN_PATH (or RAY_AUTH_TOKEN) to the cluster's token"
            )
        raise ClusterError(
            f"--ray-address: cannot connect to the Ray cluster {where}: {error}; {hint}"
        ) from None
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)
    if not local:
        warn_if_open(address or os.environ.get("RAY_ADDRESS", "auto"))
    return True


#: Ray binds a node's ports to the machine's address unless this is "0" (it then keeps
#: 127.0.0.1, and no other machine can join: right for an instance of this machine alone).
LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def _loopback_only(ray: Any, options: dict[str, object]) -> None:
    """Make the local instance this process starts listen on 127.0.0.1 only: nothing beyond
    this machine reaches its ports, token or not."""
    os.environ.setdefault(LOOPBACK_ENV, "0")
    if os.environ[LOOPBACK_ENV] != "0":
        return  # the user asked for a joinable instance
    # Ray reads the variable once, when it is imported (an earlier import may have come first).
    constants = getattr(getattr(ray, "_private", None), "ray_constants", None)
    if constants is not None and hasattr(constants, "ENABLE_RAY_CLUSTER"):
        constants.ENABLE_RAY_CLUSTER = False
    options["_node_ip_address"] = "127.0.0.1"


def _authentication_refused(error: BaseException) -> bool:
    """Whether Ray refused this process for want of a token (its AuthenticationError)."""
    link: BaseException | None = error
    for _ in range(10):
        if link is None:
            return False
        if type(link).__name__ == "AuthenticationError" or "InvalidAuthToken" in str(link):
            return True
        link = link.__cause__ or link.__context__
    return False


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


__all__ = [
    "OPEN_CLUSTER_WARNING",
    "ClusterError",
    "connect",
    "disconnect",
    "require_ray",
    "token_auth_requested",
    "warn_if_open",
]
