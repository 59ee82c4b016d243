"""The trial sandbox on the Ray executor: the hostile agent of tests/agent/test_agent_sandbox.py
on a real two-node cluster reaches nothing but its own trial, as it does locally."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import pytest
from tests.agent.helpers import read_jsonl
from tests.agent.test_agent_sandbox import agent_run, left_running, reports, scene
from tests.cluster.helpers import SRC
from tests.support.ray_cluster import LocalCluster

pytestmark = pytest.mark.xdist_group("ray_cluster")


def test_ray_trials_run_in_the_same_sandbox(cluster: LocalCluster, work: Path) -> None:
    root = work / "sandbox"
    root.mkdir()
    marker = f"plumbline-ray-linger-{os.getpid()}-{time.monotonic_ns()}"
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        here = scene(root, server.getsockname()[1], agent_env={"HOSTILE_LINGER": marker})
        completed = agent_run(
            here,
            "--executor",
            "ray",
            "--ray-address",
            cluster.address,
            env={"PYTHONPATH": SRC},
        )
    assert completed.returncode == 0, completed.stderr
    document = json.loads(completed.stdout)
    assert document["executor"] == "ray" and document["record_errors"] == []
    found = reports(here)
    assert len(found) == 4
    for report in found:
        assert report["home_secret"] is None and report["shadow"] is None
        assert report["env_marker_in"] == [] and report["suite_listing"] is None
        assert report["answers"] is None and report["planted_in_source"] is False
        assert report["other_trials"] == [] and report["results_listing"] is None
        assert report["records_appended"] is False and report["outside_written"] is False
        assert report["workspace_written"] and report["home_written"] and report["tmp_written"]
        assert report["network"] is False  # its own network namespace, by default
    records = read_jsonl(here.results / "records.jsonl")
    assert {r["sandbox"] for r in records} == {"bubblewrap"} and all(r["node"] for r in records)
    assert {r["network"] for r in records} == {"isolated"}
    assert left_running(marker) == []
