"""An open cluster (issue 27): the Ray cluster plumbline starts listened with no
authentication, so anyone who reached a port ran code. The local cluster now runs with Ray's
token authentication: a second client without the token is refused; one with it gets in."""

from __future__ import annotations

import importlib
import logging
import os
import stat
import subprocess
import sys

import pytest
from tests.support.ray_cluster import LocalCluster

pytestmark = pytest.mark.xdist_group("ray_cluster")

# the module (the package exports a function of the same name)
connect_module = importlib.import_module("plumbline.cluster.connect")

PROBE = (
    "import ray; ray.init(address={address!r}, log_to_driver=False); "
    "print('answer', ray.get(ray.remote(lambda: 6 * 7).remote()))"
)


def _client(cluster: LocalCluster, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    return subprocess.run(
        [sys.executable, "-c", PROBE.format(address=cluster.address)],
        env={**base, "RAY_USAGE_STATS_ENABLED": "0", **env},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_a_client_without_the_token_is_refused(cluster: LocalCluster) -> None:
    assert os.environ["RAY_AUTH_MODE"] == "token"
    assert os.environ["RAY_AUTH_TOKEN_PATH"] == str(cluster.token_path)
    assert stat.S_IMODE(cluster.token_path.stat().st_mode) == 0o600
    refused = _client(cluster, {})
    assert refused.returncode != 0
    assert "answer" not in refused.stdout
    assert "Authentication" in refused.stderr or "InvalidAuthToken" in refused.stderr
    wrong = _client(cluster, {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": "not-the-token"})
    assert wrong.returncode != 0 and "answer" not in wrong.stdout
    admitted = _client(cluster, cluster.client_env)
    assert admitted.returncode == 0, admitted.stderr[-2000:]
    assert "answer 42" in admitted.stdout


def test_connecting_without_a_token_warns_once_with_what_to_set(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    monkeypatch.setattr(connect_module, "_warned_open", set())
    with caplog.at_level(logging.WARNING, logger="plumbline.cluster"):
        assert connect_module.warn_if_open("10.0.0.5:6379") is True
        assert connect_module.warn_if_open("10.0.0.5:6379") is False
    [record] = caplog.records
    assert "10.0.0.5:6379" in record.getMessage()
    assert "RAY_AUTH_MODE=token" in record.getMessage()
    assert "RAY_AUTH_TOKEN_PATH" in record.getMessage()
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    assert connect_module.warn_if_open("10.0.0.6:6379") is False


def test_a_one_node_cluster_listens_on_loopback_only() -> None:
    with LocalCluster(nodes=1, cpus=1) as single:
        listening = subprocess.run(
            ["ss", "-ltnp"], capture_output=True, text=True, check=False
        ).stdout
        from tests.support.ray_cluster import process_tree

        pids = set(process_tree(single.members[0].process.pid))
        ours = [
            line.split()[3]
            for line in listening.splitlines()
            if any(f"pid={pid}," in line for pid in pids)
        ]
        assert ours, listening
        assert all(address.startswith(("127.0.0.1:", "[::ffff:127.0.0.1]:")) for address in ours), (
            ours
        )
        admitted = _client(single, single.client_env)
        assert "answer 42" in admitted.stdout, admitted.stderr[-2000:]


LOCAL_PROBE = """
import socket, ray
from plumbline.cluster.connect import connect
connect(None)
host, port = ray.get_runtime_context().gcs_address.rsplit(":", 1)
print("gcs", host)
print("answer", ray.get(ray.remote(lambda: 6 * 7).remote()))
# this machine's own address on its network (a UDP "connection" sends nothing)
with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
    probe.connect(("192.0.2.1", 9))
    outside = probe.getsockname()[0]
print("outside", outside)
try:
    socket.create_connection((outside, int(port)), timeout=5).close()
    print("reachable")
except OSError:
    print("refused")
"""


def test_the_instance_plumbline_starts_itself_listens_on_loopback_only() -> None:
    """`--executor ray` without an address starts a local Ray instance: its ports take no
    connection from the machine's network address, only from 127.0.0.1."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    done = subprocess.run(
        [sys.executable, "-c", LOCAL_PROBE],
        env={**base, "RAY_USAGE_STATS_ENABLED": "0"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    assert lines.get("answer") == "42", done.stderr[-2000:]
    assert lines["gcs"] == "127.0.0.1"
    assert not lines["outside"].startswith("127."), "the machine needs a network address"
    assert "refused" in done.stdout.split() and "reachable" not in done.stdout.split(), done.stdout
