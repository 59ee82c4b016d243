"""One real two-node Ray cluster on 127.0.0.1 for every test here (its start is the costly
part): a head and a second node, each its own `ray start` process with two CPUs, stopped (every
process of it killed) at the end of the session. The tests on it are one xdist group
(`ray_cluster`: one cluster, on one worker, under `--dist loadgroup`), and the node-killing
module (test_ray_faults.py) runs after the others: it leaves the cluster with one node."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.cluster.helpers import SRC, local_run
from tests.support.ray_cluster import LocalCluster

from plumbline.agent.plan import Plan

#: The module that kills a node of the shared cluster.
FAULTS = "test_ray_faults.py"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The node-killing module's tests after every other test of this directory (by name it
    would sort before test_ray_options.py and test_ray_sandbox.py)."""
    here = Path(__file__).parent
    faults = [item for item in items if item.path.name == FAULTS and item.path.parent == here]
    if not faults:
        return
    rest = [item for item in items if item not in faults]
    last = max((i for i, item in enumerate(rest) if item.path.parent == here), default=-1)
    items[:] = [*rest[: last + 1], *faults, *rest[last + 1 :]]


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
