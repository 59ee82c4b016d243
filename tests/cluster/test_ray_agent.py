"""Agent trials on a real two-node Ray cluster on this machine (`--executor ray`).

One cluster serves the module: a head and a second node, each its own `ray start` process with
two CPUs. The scripted agent (tests/agent/fake_agent.py) runs the example suite on both nodes;
the records must be the local executor's (apart from timings, run ids and node names), each
scheduled unit recorded exactly once, also when the driver is killed with SIGKILL and rerun,
and when the second node dies mid-run (its trials run again on the head, counted as retries).
The node-killing test comes last: it leaves the cluster with one node.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.agent.helpers import arms, fake_agent, gone, one_task, read_jsonl, write_suite

import plumbline
from plumbline.agent.harness import Harness, RayOptions, RunOptions, RunResult
from plumbline.agent.plan import Plan, make_plan
from plumbline.agent.profiles import resolve_agent
from plumbline.agent.suite import load_suite
from plumbline.cluster.local import LocalCluster
from plumbline.cluster.trials import NODE_LEASES, lease_scope

pytestmark = [pytest.mark.slow]

SRC = str(Path(plumbline.__file__).resolve().parents[1])
SECRET_NAME = "PLUMBLINE_RAY_TEST_KEY"
SECRET = "sk-ray-test-0123456789abcdef"
#: What differs between two runs of the same unit whatever runs them.
VOLATILE = {
    "run_id",
    "diff_file",
    "session_id",
    "started_at_utc",
    "ended_at_utc",
    "duration_seconds",
    "harness_duration_seconds",
    "acceptance_duration_seconds",
    "node",
    "infra_retries",
}


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster(nodes=2, cpus=2, env={"PYTHONPATH": SRC}) as started:
        yield started


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ray-agent")


def _plan(suite: Path, repeats: int = 2) -> Plan:
    return make_plan(
        load_suite(suite), resolve_agent(fake_agent(), None), repeats=repeats, seed=3, order="random"
    )


def _suite(directory: Path, sleep: float, signals: Path) -> Path:
    signals.mkdir(parents=True, exist_ok=True)
    env = {"FAKE_SLEEP": str(sleep), "FAKE_SIGNAL_DIR": str(signals)}
    return write_suite(directory, {"env": {**env, "FAKE_SECRET_NAME": SECRET_NAME}})


def _run(plan: Plan, output: Path, **options: Any) -> RunResult:
    return Harness(plan, RunOptions(output=output, pass_env={SECRET_NAME: SECRET}, **options)).run()


def _on_ray(cluster: LocalCluster, workdir: Path) -> dict[str, Any]:
    workdir.mkdir(parents=True, exist_ok=True)
    return {"executor": "ray", "ray": RayOptions(address=cluster.address), "workdir": workdir}


def _normal(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    kept = [{k: v for k, v in r.items() if k not in VOLATILE} for r in records]
    return sorted(kept, key=lambda r: (r["task_id"], r["arm"], r["repeat"]))


def _diffs(output: Path) -> dict[tuple[str, str, int], bytes]:
    return {
        (r["task_id"], r["arm"], r["repeat"]): (output / r["diff_file"]).read_bytes()
        for r in read_jsonl(output / "records.jsonl")
    }


def _once_each(plan: Plan, records: list[dict[str, Any]]) -> None:
    counts = Counter((r["task_id"], r["arm"], r["repeat"]) for r in records)
    assert set(counts) == {unit.key for unit in plan.schedule}
    assert set(counts.values()) == {1}


@pytest.fixture(scope="module")
def local_records(work: Path) -> tuple[Plan, Path]:
    """The suite run by the local executor: what every Ray run must reproduce."""
    suite = _suite(work / "local-suite", 0.5, work / "local-signals")
    plan = _plan(suite)
    _run(plan, work / "local", concurrency=2)
    return plan, work / "local"


def _no_secret_in(*roots: Path) -> None:
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and not path.is_symlink():
                with path.open("rb") as handle:
                    assert SECRET.encode() not in handle.read(), f"the secret is in {path}"


def test_ray_trials_give_the_local_records_on_both_nodes(
    cluster: LocalCluster, work: Path, local_records: tuple[Plan, Path]
) -> None:
    local_plan, local_out = local_records
    suite = _suite(work / "ray-suite", 0.5, work / "ray-signals")
    plan = _plan(suite)
    output = work / "ray"
    result = _run(plan, output, **_on_ray(cluster, work / "ray-trials"))

    assert result.executor == "ray" and result.ran == len(plan.schedule) == 8
    assert result.infra_retries == []
    records = read_jsonl(output / "records.jsonl")
    _once_each(plan, records)
    assert _normal(records) == _normal(read_jsonl(local_out / "records.jsonl"))
    assert _diffs(output) == _diffs(local_out)
    # Every trial ran on a node of the cluster, and both nodes took trials.
    assert len({r["node"] for r in records}) == 2
    # The schedule is the plan's: each record keeps its position.
    positions = {(u.task_id, u.arm, u.repeat): u.position for u in local_plan.schedule}
    assert all(r["schedule_position"] == positions[(r["task_id"], r["arm"], r["repeat"])] for r in records)
    # The agent printed the passed-through key: it reached the agent on its node and was
    # written nowhere, not in the results and not in anything Ray keeps (logs, sessions).
    logs = [p.read_text() for p in (output / "logs").rglob("agent.stdout")]
    assert len(logs) == 8 and all(f"[redacted {SECRET_NAME}]" in text for text in logs)
    _no_secret_in(output, cluster.temp_dir, work / "ray-trials")
    # Nothing of the trials is left on the nodes.
    assert not list((work / "ray-trials").glob("plumbline-trial.*"))


def test_a_trial_over_its_time_limit_is_killed_on_its_node_with_its_process_group(
    cluster: LocalCluster, work: Path
) -> None:
    pidfiles = [work / "timeout-a.pid", work / "timeout-b.pid"]
    suite = write_suite(
        work / "timeout-suite",
        {
            "tasks": one_task(),
            "timeout_seconds": 2,
            "env": {"FAKE_SLEEP": "120"},
            "arms": arms(
                {"env": {"FAKE_GRANDCHILD_PIDFILE": str(pidfiles[0])}},
                {"env": {"FAKE_GRANDCHILD_PIDFILE": str(pidfiles[1])}},
            ),
        },
    )
    plan = _plan(suite, repeats=1)
    options = _on_ray(cluster, work / "timeout-trials")
    result = Harness(plan, RunOptions(output=work / "timeout", kill_grace=0.5, **options)).run()

    records = read_jsonl(work / "timeout" / "records.jsonl")
    assert result.ran == 2 and all(r["timed_out"] and not r["success"] for r in records)
    assert all(not r["infra_failure"] for r in records)
    # The agent's grandchild (same process group, on the worker's node) was killed with it.
    assert all(gone(int(path.read_text())) for path in pidfiles)


def _wait_for(condition: Callable[[], bool], what: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def test_a_driver_killed_with_sigkill_resumes_from_the_records_file(
    cluster: LocalCluster, work: Path
) -> None:
    signals = work / "kill9-signals"
    signals.mkdir()
    # The third agent to start never finishes: the driver is killed while it runs.
    suite = write_suite(
        work / "kill9-suite",
        {"tasks": one_task(), "env": {"FAKE_SIGNAL_DIR": str(signals), "FAKE_BLOCK_AT": "3"}},
    )
    output = work / "kill9"
    trials = work / "kill9-trials"
    trials.mkdir()
    command = [sys.executable, "-m", "plumbline", "agent", "run", str(suite), "--agent"]
    command += [fake_agent(), "-o", str(output), "--repeats", "2", "--json", "--seed", "3"]
    command += ["--executor", "ray", "--ray-address", cluster.address, "--workdir", str(trials)]
    env = {**os.environ, "PYTHONPATH": SRC}
    driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    records = output / "records.jsonl"
    try:
        _wait_for(
            lambda: len(list(signals.glob("*.started"))) == 4
            and records.exists()
            and len(records.read_text().splitlines()) == 3,
            "three finished trials and the blocked one",
        )
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    # The blocked agent's process group outlives the driver and its Ray worker.
    agent_and_child = [int(p.read_text()) for p in signals.glob("*.child")]
    agent_and_child.append(int(next(signals.glob("*.child")).with_suffix(".started").read_text()))
    alive = [pid for pid in agent_and_child if not gone(pid, 0.5)]
    assert alive
    first = read_jsonl(records)

    try:
        rerun = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    finally:
        reclaimed_in_time = all(gone(pid) for pid in alive)
        for pid in alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert rerun.returncode == 0, rerun.stderr
    assert reclaimed_in_time, "the rerun left the killed driver's agent running on its node"
    document = json.loads(rerun.stdout)
    assert document["executor"] == "ray"
    assert document["ran"] == 1 and document["skipped"] == 3
    assert len(document["reclaimed"]) == 1 and document["reclaimed"][0]["killed"] >= 1
    found = read_jsonl(records)
    assert found[:3] == first
    _once_each(_plan(suite), found)
    assert not list(trials.glob("plumbline-trial.*"))
    assert not list((trials / NODE_LEASES / lease_scope(output) / "running").iterdir())


def test_a_node_dying_mid_run_loses_no_trial_and_duplicates_none(
    cluster: LocalCluster, work: Path, local_records: tuple[Plan, Path]
) -> None:
    _, local_out = local_records
    signals = work / "node-signals"
    suite = _suite(work / "node-suite", 4, signals)
    plan = _plan(suite)
    output = work / "node"
    trials = work / "node-trials"

    def kill_second_node() -> None:
        # Four trials at once: two of them on the second node, whose every process dies.
        _wait_for(lambda: len(list(signals.glob("*.started"))) >= 4, "four running agents")
        cluster.kill_node(1)

    killer = threading.Thread(target=kill_second_node)
    killer.start()
    try:
        result = _run(plan, output, **_on_ray(cluster, trials))
    finally:
        killer.join()

    records = read_jsonl(output / "records.jsonl")
    _once_each(plan, records)
    assert _normal(records) == _normal(read_jsonl(local_out / "records.jsonl"))
    assert _diffs(output) == _diffs(local_out)
    # The trials lost with the node ran again, were counted, and say so in their records.
    assert len(result.infra_retries) >= 2
    retried = {(r.task_id, r.arm, r.repeat) for r in result.infra_retries}
    assert {
        (r["task_id"], r["arm"], r["repeat"]) for r in records if r["infra_retries"]
    } == retried
    assert all(not r["infra_failure"] for r in records)
    # The lost trials' directories were reclaimed by the trials that came after them.
    assert not list(trials.glob("plumbline-trial.*"))
