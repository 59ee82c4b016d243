"""The trial's jail from inside a real trial: its own network namespace with only the proxy
bridged in, and limits the kernel enforces (real bubblewrap, socat, cgroups, fork and memory
bombs kept small by low limits).

The network proofs: a direct TCP connection out fails (to the host's loopback and to the
host's own address); a host abstract Unix socket is unreachable; `/proc/net` shows nothing of
the host (a live connection on the host's loopback, the abstract socket); the bridged port
reaches a real HTTP server (the scripted model) on the host's Unix socket. The same agent with
`--network host` reaches all of them, which shows the probes are real.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.agent.helpers import read_jsonl
from tests.support.agent_server import Reply, Script, ScriptedAgentServer, unix_socket_server

from plumbline.agent.limits_kernel import mechanism

JAIL_AGENT = Path(__file__).with_name("jail_agent.py")

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None or shutil.which("socat") is None,
    reason="needs bubblewrap and socat (.ci/debian-packages.txt)",
)


def host_address() -> str:
    """This host's first IPv4 address that is not loopback."""
    found = json.loads(subprocess.run(["ip", "-j", "-4", "addr"], capture_output=True).stdout)
    addresses = [a["local"] for i in found for a in i["addr_info"] if a["local"] != "127.0.0.1"]
    if not addresses:
        pytest.skip("no IPv4 address besides loopback")
    return str(addresses[0])


@dataclass
class Host:
    """What lives on the host while a trial runs: a loopback listener with a live connection
    to it (another trial's connection to a local model server), a listener on the host's own
    address, an abstract Unix socket, and the scripted model on a Unix socket."""

    port: int
    connection_port: int
    outside: str
    abstract: str
    socket: Path
    server: ScriptedAgentServer


@pytest.fixture
def host() -> Iterator[Host]:
    short = Path(tempfile.mkdtemp(prefix="pl-jail-", dir="/tmp"))  # a Unix socket path is short
    abstract = f"plumbline-jail-{os.getpid()}-{short.name}"
    with (
        socket.socket() as loopback,
        socket.socket() as outside,
        socket.socket(socket.AF_UNIX) as unix,
        ScriptedAgentServer(Script([Reply("done")])) as server,
        unix_socket_server(server, short / "model.sock") as path,
    ):
        loopback.bind(("127.0.0.1", 0))
        loopback.listen(16)
        client = socket.create_connection(loopback.getsockname())
        address = host_address()
        outside.bind((address, 0))
        outside.listen(16)
        unix.bind("\0" + abstract)
        unix.listen(16)
        try:
            yield Host(
                loopback.getsockname()[1],
                client.getsockname()[1],
                f"{address}:{outside.getsockname()[1]}",
                abstract,
                path,
                server,
            )
        finally:
            client.close()
            shutil.rmtree(short, ignore_errors=True)


def suite(root: Path, arms: dict[str, dict[str, str]], timeout: int = 120) -> Path:
    """One task (its acceptance always passes) and an arm per entry of `arms` (its env)."""
    source = root / "source"
    source.mkdir(parents=True)
    (source / "README").write_text("nothing to do\n")
    data: dict[str, Any] = {
        "name": "jail",
        "control": next(iter(arms)),
        "repeats": 1,
        "timeout_seconds": timeout,
        "arms": [{"name": name, "env": env} for name, env in arms.items()],
        "tasks": [{"id": "t", "prompt": "p", "source": {"dir": str(source)}, "acceptance": "true"}],
    }
    path = root / "suite.json"
    path.write_text(json.dumps(data))
    return path


def agent_run(root: Path, suite_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "plumbline", "agent", "run", str(suite_path)]
    command += ["--agent", f"{sys.executable} {JAIL_AGENT}", "-o", str(root / "results")]
    command += ["--repeats", "1", "--concurrency", "2", "--json", *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)


def probe_env(host: Host, **more: str) -> dict[str, str]:
    return {
        "JAIL_ACTION": "probe",
        "JAIL_HOST_PORT": str(host.port),
        "JAIL_OUTSIDE": host.outside,
        "JAIL_ABSTRACT": host.abstract,
        **more,
    }


def probe_reports(root: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each trial's record and what its agent reported."""
    found = []
    for record in read_jsonl(root / "results" / "records.jsonl"):
        log = root / "results" / "logs" / record["run_id"] / "agent.stdout"
        found.append((record, json.loads(log.read_text().splitlines()[-1])))
    assert len(found) == 2
    return found


def hex_port(port: int) -> str:
    return f":{port:04X} "


def test_an_isolated_trial_reaches_only_the_bridged_proxy(tmp_path: Path, host: Host) -> None:
    bridge = 18080  # inside the trial's own namespace: no other test can hold it
    env = probe_env(host, JAIL_BRIDGE_PORT=str(bridge), JAIL_TOO_BIG=str(16 << 20))
    completed = agent_run(
        tmp_path,
        suite(tmp_path, {"a": env, "b": env}),
        "--bridge",
        f"{bridge}={host.socket}",
        "--limit",
        "disk=8M",
    )
    assert completed.returncode == 0, completed.stderr
    for record, report in probe_reports(tmp_path):
        assert record["success"] is True and record["network"] == "isolated"
        assert_isolated(host, report)
    assert [s.api for s in host.server.served] == ["chat", "chat"]


def assert_isolated(host: Host, report: dict[str, Any]) -> None:
    # A direct TCP connection out fails: to the host's loopback and to its own address.
    assert report["host_port"] is False and report["outside"] is False
    # A host abstract Unix socket is unreachable, and /proc/net shows nothing of the host.
    assert report["abstract"] is False
    assert host.abstract not in report["proc_net_unix"]
    for port in (host.port, host.connection_port, int(host.outside.rpartition(":")[2])):
        assert hex_port(port) not in report["proc_net_tcp"]
    # The bridged port reaches the real server on the host's Unix socket.
    assert report["bridged"]["status"] == 200, report["bridged"]
    assert report["bridged"]["body"]["choices"][0]["message"]["content"]
    # /dev/shm is the trial's own and holds no more than the disk limit; so does /tmp.
    assert report["shm"] == [] and report["shm_fits"] is False and report["tmp_fits"] is False


def test_network_host_is_an_explicit_opt_out_and_the_probes_are_real(
    tmp_path: Path, host: Host
) -> None:
    env = probe_env(host)
    completed = agent_run(tmp_path, suite(tmp_path, {"a": env, "b": env}), "--network", "host")
    assert completed.returncode == 0, completed.stderr
    for record, report in probe_reports(tmp_path):
        assert record["network"] == "host"
        assert report["host_port"] is True and report["outside"] is True
        assert report["abstract"] is True
        assert hex_port(host.connection_port) in report["proc_net_tcp"]


def records_by_arm(root: Path) -> dict[str, dict[str, Any]]:
    return {r["arm"]: r for r in read_jsonl(root / "results" / "records.jsonl")}


@pytest.mark.parametrize(
    ("action", "limit", "name"),
    [
        ("forkbomb", "processes=24", "processes"),
        ("membomb", "memory=96M", "memory"),
        ("cpu", "cpu=1", "cpu"),
    ],
)
def test_a_bomb_fails_its_trial_by_the_limit_and_the_other_arm_finishes(
    tmp_path: Path, action: str, limit: str, name: str
) -> None:
    arms = {"calm": {"JAIL_ACTION": "none"}, "bomb": {"JAIL_ACTION": action}}
    completed = agent_run(tmp_path, suite(tmp_path, arms, timeout=60), "--limit", limit)
    assert completed.returncode == 0, completed.stderr
    records = records_by_arm(tmp_path)
    bomb, calm = records["bomb"], records["calm"]
    assert bomb["success"] is False and bomb["infra_failure"] is False
    assert bomb["failure_reason"].startswith(f"limit exceeded: {name} ")
    assert bomb["timed_out"] is False  # stopped by the kernel, not by the clock
    assert bomb["limits"]["mechanism"] == mechanism()
    assert calm["success"] is True and calm.get("failure_reason") is None
    assert json.loads(completed.stdout)["record_errors"] == []


@pytest.mark.parametrize(
    ("action", "limit", "name"),
    [
        ("membomb", "memory=96M", "MemoryError"),
        ("diskfill", "disk=8M", "File too large"),
        ("cpu", "cpu=1", "cpu"),
    ],
)
def test_the_rlimit_fallback_holds_a_bomb_and_the_other_arm_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, action: str, limit: str, name: str
) -> None:
    """`PLUMBLINE_LIMITS_MECHANISM=rlimit`: no cgroup, the limits are the processes' rlimits
    (`prlimit`) and the tmpfs sizes. The kernel reports no hit of `RLIMIT_AS`, and Python
    ignores SIGXFSZ, so the memory bomb's allocation and the big file's write fail in the
    agent (its error says so) without a named limit; CPU (SIGXCPU, then SIGKILL) is named."""
    monkeypatch.setenv("PLUMBLINE_LIMITS_MECHANISM", "rlimit")
    arms = {"calm": {"JAIL_ACTION": "none"}, "bomb": {"JAIL_ACTION": action}}
    trials = tmp_path / "trials"
    trials.mkdir()
    keep = ("--workdir", str(trials), "--keep-workspaces")
    completed = agent_run(tmp_path, suite(tmp_path, arms, timeout=60), "--limit", limit, *keep)
    assert completed.returncode == 0, completed.stderr
    records = records_by_arm(tmp_path)
    bomb, calm = records["bomb"], records["calm"]
    assert bomb["limits"]["mechanism"] == calm["limits"]["mechanism"] == "rlimit"
    assert bomb["infra_failure"] is False
    assert bomb["timed_out"] is False  # stopped by the kernel, not by the clock
    stderr = tmp_path / "results" / "logs" / bomb["run_id"] / "agent.stderr"
    log = stderr.read_text() if stderr.exists() else ""
    if action == "diskfill":
        # The kernel held the file at the limit. The file at the cap and the directories
        # holding it are over the limit together, so the harness's disk watch, walking them
        # every 0.5 s, ends the trial too if the agent has not exited by then: a loaded
        # machine can delay the agent's error message past the next walk.
        sizes = [path.stat().st_size for path in trials.rglob("fill.bin")]  # and its copy
        assert sizes and set(sizes) == {8 * 1024**2}, sizes
        assert bomb["agent_exit_code"] != 0
        watched = bomb.get("failure_reason") or ""
        assert name in log or watched.startswith("limit exceeded: disk (8M"), (log, watched)
    elif name != "cpu":
        # The allocation failed in the agent (its acceptance, `true`, still decides).
        assert bomb["agent_exit_code"] != 0
        assert name in log
    else:
        assert bomb["success"] is False
        assert bomb["failure_reason"].startswith(f"limit exceeded: {name} ")
        assert "enforced by rlimit" in bomb["failure_reason"]
    assert calm["success"] is True and calm.get("failure_reason") is None


def test_a_bad_limits_mechanism_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLUMBLINE_LIMITS_MECHANISM", "cgroup-v3")
    completed = agent_run(tmp_path, suite(tmp_path, {"a": {}, "b": {}}))
    assert completed.returncode != 0 and "Traceback" not in completed.stderr
    assert (
        "PLUMBLINE_LIMITS_MECHANISM='cgroup-v3': expected one of auto, rlimit" in completed.stderr
    )


def test_the_workspace_and_home_share_one_disk_limit(tmp_path: Path) -> None:
    """1 MiB files in the workspace and HOME in turn, none near the per-file cap: together they
    pass the disk limit, the harness ends the trial and names the limit, the other arm
    finishes."""
    arms = {"calm": {"JAIL_ACTION": "none"}, "spread": {"JAIL_ACTION": "diskspread"}}
    completed = agent_run(tmp_path, suite(tmp_path, arms, timeout=120), "--limit", "disk=24M")
    assert completed.returncode == 0, completed.stderr
    records = records_by_arm(tmp_path)
    spread, calm = records["spread"], records["calm"]
    assert spread["success"] is False and spread["infra_failure"] is False
    assert spread["timed_out"] is False
    assert spread["failure_reason"].startswith("limit exceeded: disk (24M, enforced by ")
    assert "workspace and HOME together" in spread["failure_reason"]
    assert calm["success"] is True and calm.get("failure_reason") is None


def test_the_wall_limit_lowers_the_task_timeout(tmp_path: Path) -> None:
    arms = {"calm": {"JAIL_ACTION": "none"}, "spin": {"JAIL_ACTION": "cpu"}}
    run = agent_run(tmp_path, suite(tmp_path, arms), "--limit", "wall=1", "--kill-grace", "0")
    assert run.returncode == 0, run.stderr
    spin = records_by_arm(tmp_path)["spin"]
    assert spin["timed_out"] is True and spin["success"] is False
    assert spin["failure_reason"].startswith("limit exceeded: wall (1 seconds")
    assert spin["limits"]["wall_seconds"] == 1


def test_a_bad_limit_or_bridge_is_a_one_line_usage_error(tmp_path: Path) -> None:
    path = suite(tmp_path, {"a": {}, "b": {}})
    for extra in (["--limit", "memory=lots"], ["--limit", "speed=1"], ["--bridge", "x=/a"]):
        completed = agent_run(tmp_path, path, *extra)
        assert completed.returncode == 2
        assert "Traceback" not in completed.stderr
        assert extra[1] in completed.stderr
