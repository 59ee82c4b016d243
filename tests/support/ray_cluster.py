"""A real multi-node Ray cluster on this machine, for tests and benchmarks.

Every node is its own `ray start --block` process (the head first, then the others joining
it at 127.0.0.1:PORT), in its own session and a private temporary directory, so the cluster
can be stopped, or one node killed the way a machine dies (SIGKILL to every process of it,
agents included), without touching any other Ray instance on the machine.

The cluster is locked down: every node runs with Ray's token authentication
(`RAY_AUTH_MODE=token`, Ray >= 2.52) and a random token of its own, kept in a 0600 file in the
cluster's directory (`token_path`), so a client without it is refused. While it runs, this
process's environment carries `RAY_AUTH_MODE=token` and `RAY_AUTH_TOKEN_PATH` (`client_env`),
so this process and the commands it starts connect with the token. A one-node cluster also
binds every port to 127.0.0.1 only; the nodes of a larger one must reach each other, and Ray
binds their ports to the machine's address (Ray resolves 127.0.0.1 to it), behind the token.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from plumbline.cluster.connect import ClusterError

#: Ray settings that make a small local cluster start faster, use less memory and notice a
#: dead node within seconds (Ray reads `RAY_<setting>` from the environment of `ray start`).
QUIET_RAY_ENV = {
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_health_check_initial_delay_ms": "1000",
    "RAY_health_check_period_ms": "1000",
    "RAY_health_check_timeout_ms": "1000",
    "RAY_health_check_failure_threshold": "3",
    "RAY_worker_register_timeout_seconds": "120",
}
OBJECT_STORE_BYTES = 100 * 1024 * 1024
#: Ray reads this when it imports: "0" keeps a node (and a client) on the loopback address
#: (Ray otherwise resolves 127.0.0.1 to the machine's address, and binds there), at the price
#: of a one-node cluster (`ray start --address` refuses to join).
LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _children() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    return children


def process_tree(pid: int) -> list[int]:
    """`pid` and every process descending from it (whatever session they lead)."""
    children = _children()
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(children.get(current, []))
    return found


def kill_tree(pid: int) -> None:
    """SIGKILL `pid` and its descendants, again until none is left (a dying tree forks)."""
    for _attempt in range(50):
        tree = [p for p in process_tree(pid) if Path(f"/proc/{p}").exists()]
        alive = [p for p in tree if not _zombie(p)]
        if not alive:
            return
        for member in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(member, signal.SIGKILL)
        time.sleep(0.05)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX"
    except (OSError, IndexError):
        return True


@dataclass
class Node:
    """One `ray start --block` process and the log of its start."""

    process: subprocess.Popen[bytes]
    log: Path
    head: bool

    def started(self) -> bool:
        return "Ray runtime started" in self.log.read_text(errors="replace")


@dataclass
class LocalCluster:
    """A head and `nodes - 1` further nodes, each with `cpus` CPUs, on 127.0.0.1.

    Use it as a context manager (or call `start` and `stop`); `address` is what drivers
    give `ray.init` (or `--ray-address`)."""

    nodes: int = 2
    cpus: int = 2
    env: Mapping[str, str] = field(default_factory=dict)
    start_timeout: float = 180.0
    temp_dir: Path = field(init=False)
    port: int = field(init=False, default=0)
    members: list[Node] = field(init=False, default_factory=list)
    _saved_env: dict[str, str | None] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        # Short: Ray's socket paths below it must stay under the 107-byte limit.
        self.temp_dir = Path(tempfile.mkdtemp(prefix="plr-", dir="/tmp"))

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def token_path(self) -> Path:
        """The file holding the cluster's authentication token (mode 0600)."""
        return self.temp_dir / "auth_token"

    @property
    def client_env(self) -> dict[str, str]:
        """What a client needs in its environment to be let in."""
        env = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(self.token_path)}
        if self.nodes == 1:
            env[LOOPBACK_ENV] = "0"
        return env

    def _environment(self) -> dict[str, str]:
        environment = {**os.environ, **QUIET_RAY_ENV, **self.env, **self.client_env}
        environment.pop("RAY_ADDRESS", None)
        environment.pop("RAY_AUTH_TOKEN", None)  # the file is this cluster's token
        return environment

    def _write_token(self) -> None:
        descriptor = os.open(self.token_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(secrets.token_hex(32))

    def _export_client_env(self) -> None:
        for name, value in self.client_env.items():
            self._saved_env.setdefault(name, os.environ.get(name))
            os.environ[name] = value
        self._saved_env.setdefault("RAY_AUTH_TOKEN", os.environ.pop("RAY_AUTH_TOKEN", None))

    def _restore_env(self) -> None:
        for name, value in self._saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved_env.clear()

    def _start_node(self, head: bool) -> Node:
        ray = str(Path(sys.executable).with_name("ray"))
        command = [ray, "start", "--block", "--disable-usage-stats"]
        command += ["--num-cpus", str(self.cpus), "--num-gpus", "0"]
        command += ["--object-store-memory", str(OBJECT_STORE_BYTES)]
        command += ["--node-ip-address", "127.0.0.1"]
        if head:
            command += ["--head", "--port", str(self.port), "--include-dashboard", "false"]
        else:
            command += ["--address", self.address]
        command += ["--temp-dir", str(self.temp_dir)]
        log = self.temp_dir / f"node-{len(self.members)}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=self._environment(),
                start_new_session=True,
            )
        node = Node(process, log, head)
        self.members.append(node)
        return node

    def _wait(self, node: Node) -> None:
        deadline = time.monotonic() + self.start_timeout
        while not node.started():
            if node.process.poll() is not None or time.monotonic() > deadline:
                text = node.log.read_text(errors="replace")[-3000:]
                raise ClusterError(f"a local Ray node did not start:\n{text}")
            time.sleep(0.2)

    def start(self) -> LocalCluster:
        self.port = free_port()
        self._write_token()
        self._export_client_env()
        try:
            self._wait(self._start_node(head=True))
            for _ in range(self.nodes - 1):
                self._wait(self._start_node(head=False))
        except BaseException:
            self.stop()
            raise
        return self

    def add_node(self) -> Node:
        """Start one more node joining the cluster."""
        node = self._start_node(head=False)
        self._wait(node)
        return node

    def kill_node(self, index: int) -> None:
        """Kill node `index` as a machine dies: SIGKILL to every process of it."""
        kill_tree(self.members[index].process.pid)
        self.members[index].process.wait()

    def stop(self) -> None:
        """End every node (the others before the head), then remove the directory."""
        for node in reversed(self.members):
            kill_tree(node.process.pid)
            with contextlib.suppress(subprocess.TimeoutExpired):
                node.process.wait(timeout=10)
        self.members.clear()
        self._restore_env()
        shutil.rmtree(self.temp_dir, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


__all__ = ["QUIET_RAY_ENV", "LocalCluster", "Node", "free_port", "kill_tree", "process_tree"]
