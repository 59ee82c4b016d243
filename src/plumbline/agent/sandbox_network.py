"""A trial's own network: nothing but the harness's proxy ports.

In the default `isolated` network mode a trial has its own network namespace (bwrap
`--unshare-net`: only a loopback interface, which bwrap brings up) and the harness's proxy is
bridged in: for each `port -> Unix socket` of `bridges`, the socket is bound into the sandbox
at its host path and `socat` listens on `127.0.0.1:port` inside, forwarding every connection to
it. The agent's base URL `http://127.0.0.1:<port>/...` is the same as with `--network host`,
yet no other address, host abstract Unix socket or host connection (`/proc/net`) is reachable
or visible. This is how Anthropic's sandbox runtime for Claude Code
(`@anthropic-ai/sandbox-runtime`, linux-sandbox-utils) reaches its proxies.

Before the agent starts, the trial's entry script waits until every bridge listens (read from
the namespace's `/proc/net/tcp`) and then writes `ready` to a pipe the harness reads after the
trial: a trial whose bridges never listened is an infrastructure failure, not the agent's.

Reference: socat(1); bubblewrap(1); proc(5) (`/proc/net/tcp`).
"""

from __future__ import annotations

import shlex
import shutil
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

#: `isolated`: own namespace, only the bridged proxy ports; `none`: own namespace, nothing;
#: `host`: the host's network (an explicit opt-out, written in every record).
Network = Literal["isolated", "host", "none"]
NETWORKS: tuple[Network, ...] = ("isolated", "host", "none")

#: Starts each bridge with an empty environment (coreutils' env, always at this path on Debian).
ENV = "/usr/bin/env"

#: The word the entry script writes once the trial's command is about to start.
READY = b"ready"

#: How long the entry script waits for the bridges to listen: looks at /proc/net/tcp, the
#: first `BRIDGE_SPIN_LOOKS` at once (socat starts in a few ms), the rest 5 ms apart (~10 s).
BRIDGE_SPIN_LOOKS = 300
BRIDGE_WAIT_STEPS = BRIDGE_SPIN_LOOKS + 2000


class BridgeError(ValueError):
    """A bridge that cannot be made (a bad port, a path that is not a Unix socket)."""


def find_socat() -> str | None:
    """The socat executable, or None when it is not installed."""
    return shutil.which("socat")


def check_bridges(bridges: Sequence[tuple[int, Path]]) -> None:
    """`BridgeError` unless every port is a TCP port and every path a Unix socket."""
    ports = [port for port, _ in bridges]
    if len(set(ports)) != len(ports):
        raise BridgeError(f"a port is bridged twice: {sorted(ports)}")
    for port, path in bridges:
        if not 1 <= port <= 65535:
            raise BridgeError(f"bridge {port}: not a TCP port")
        try:
            mode = path.stat().st_mode
        except OSError as error:
            raise BridgeError(f"bridge {port}: {path}: {error.strerror}") from None
        if not stat.S_ISSOCK(mode):
            raise BridgeError(f"bridge {port}: {path} is not a Unix socket")


def entry_script(bridges: Sequence[tuple[int, Path]], socat: str, ready_fd: int) -> str:
    """The shell script (`/bin/sh -c SCRIPT sh COMMAND...`) run inside the sandbox before the
    trial's command: start a socat listener per bridge, wait until each listens, say `ready`,
    then exec the command (exit 125, nothing said, when a bridge does not come up)."""
    lines = []
    for port, path in bridges:
        listen = f"TCP-LISTEN:{port},bind=127.0.0.1,fork,reuseaddr"
        target = shlex.quote(f"UNIX-CONNECT:{path}")
        # An empty environment: the bridge carries none of the agent's variables (keys).
        lines.append(
            f"{ENV} -i {shlex.quote(socat)} {listen} {target} </dev/null >/dev/null 2>&1 &"
        )
    if bridges:
        # /proc/net/tcp: local address 0100007F:PORT (hex), remote 00000000:0000, state 0A.
        # Read with shell builtins (no process per look): first a short spin while socat
        # starts, then looks 5 ms apart.
        patterns = " ".join(f"0100007F:{port:04X}" for port, _ in bridges)
        lines += [
            "listening() {",
            "  while read -r _ here there state _; do",
            '    [ "$here $there $state" = "$1 00000000:0000 0A" ] && return 0',
            "  done < /proc/net/tcp",
            "  return 1",
            "}",
            "i=0",
            f"for p in {patterns}; do",
            '  until listening "$p"; do',
            f"    i=$((i+1)); [ $i -gt {BRIDGE_WAIT_STEPS} ] && exit 125",
            f"    [ $i -gt {BRIDGE_SPIN_LOOKS} ] && sleep 0.005",
            "  done",
            "done",
        ]
    lines += [f"printf {READY.decode()} > /proc/self/fd/{ready_fd} || exit 125", 'exec "$@"']
    return "\n".join(lines) + "\n"


def bridge_mounts(bridges: Sequence[tuple[int, Path]]) -> list[str]:
    """bwrap options binding each bridge's socket into the sandbox at its host path."""
    arguments: list[str] = []
    for _, path in bridges:
        arguments += ["--bind", str(path), str(path)]
    return arguments


__all__ = [
    "BRIDGE_SPIN_LOOKS",
    "BRIDGE_WAIT_STEPS",
    "NETWORKS",
    "READY",
    "BridgeError",
    "Network",
    "bridge_mounts",
    "check_bridges",
    "entry_script",
    "find_socat",
]
