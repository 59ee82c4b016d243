"""One real two-node Ray cluster on 127.0.0.1 for every test here (its start is the costly
part): a head and a second node, each its own `ray start` process with two CPUs, stopped (every
process of it killed) at the end of the session. The node-killing test runs last
(test_ray_faults.py): it leaves the cluster with one node."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.cluster.helpers import SRC, local_run
from tests.support.ray_cluster import LocalCluster

from plumbline.agent.plan import Plan


@pytest.fixture(scope="session")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster(nodes=2, cpus=2, env={"PYTHONPATH": SRC}) as started:
        yield started


@pytest.fixture(scope="session")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ray")


@pytest.fixture(scope="session")
def local_records(work: Path) -> tuple[Plan, Path]:
    """The suite run by the local executor: what every Ray run must reproduce."""
    return local_run(work)
