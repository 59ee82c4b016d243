"""Agent trials on a real two-node Ray cluster on this machine (`--executor ray`).

The scripted agent (tests/agent/fake_agent.py) runs the example suite on both nodes;
the records must be the local executor's (apart from timings, run ids and node names), each
scheduled unit recorded exactly once, also when the driver is killed with SIGKILL and rerun,
and when the second node dies mid-run (test_ray_faults.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tests.agent.helpers import arms, fake_agent, gone, one_task, read_jsonl, write_suite
from tests.cluster.helpers import (
    MODEL_USAGE,
    SECRET,
    SECRET_NAME,
    SRC,
    UNCONFINED,
    blocked_agent,
    blocking_suite,
    diffs,
    ended,
    normal,
    on_ray,
    once_each,
    plan_of,
    run,
    suite_with,
    wait_for,
)
from tests.support.ray_cluster import LocalCluster

from plumbline.agent.harness import Harness, RunOptions, TrialOutput
from plumbline.agent.plan import Plan
from plumbline.cluster.connect import connect, disconnect, require_ray
from plumbline.cluster.stop import new_stop_signal, send_stop
from plumbline.cluster.trials import (
    NODE_LEASES,
    ShippedMaterials,
    WorkerSettings,
    lease_scope,
    run_trial,
)

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray_cluster")]


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
    suite = suite_with(work / "ray-suite", 0.5, work / "ray-signals")
    plan = plan_of(suite)
    output = work / "ray"
    result = run(plan, output, **on_ray(cluster, work / "ray-trials"))

    assert result.executor == "ray" and result.ran == len(plan.schedule) == 4
    assert result.infra_retries == []
    records = read_jsonl(output / "records.jsonl")
    once_each(plan, records)
    # Metered on the nodes as here: one call each through the proxy, the tokens the scripted
    # model sent.
    for record in records:
        assert record["usage_source"] == "metered", record.get("usage_note")
        assert record["metered_usage"]["calls"] == 1
        assert record["output_tokens"] == MODEL_USAGE.output
        assert record["cache_read_tokens"] == MODEL_USAGE.cached
    assert normal(records) == normal(read_jsonl(local_out / "records.jsonl"))
    assert diffs(output) == diffs(local_out)
    # Every trial ran on a node of the cluster, and both nodes took trials.
    assert len({r["node"] for r in records}) == 2
    # The schedule is the plan's: each record keeps its position.
    positions = {(u.task_id, u.arm, u.repeat): u.position for u in local_plan.schedule}
    assert all(
        r["schedule_position"] == positions[(r["task_id"], r["arm"], r["repeat"])] for r in records
    )
    # The agent printed the passed-through key: it reached the agent on its node and was
    # written nowhere, not in the results and not in anything Ray keeps (logs, sessions).
    logs = [p.read_text() for p in (output / "logs").rglob("agent.stdout")]
    assert len(logs) == 4 and all(f"[redacted {SECRET_NAME}]" in text for text in logs)
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
    plan = plan_of(suite, repeats=1)
    options = on_ray(cluster, work / "timeout-trials")
    result = Harness(
        plan, RunOptions(output=work / "timeout", kill_grace=0.5, sandbox=UNCONFINED, **options)
    ).run()

    records = read_jsonl(work / "timeout" / "records.jsonl")
    assert result.ran == 2 and all(r["timed_out"] and not r["success"] for r in records)
    assert all(not r["infra_failure"] for r in records)
    # The agent's grandchild (same process group, on the worker's node) was killed with it.
    assert all(gone(int(path.read_text())) for path in pidfiles)


def test_a_driver_killed_with_sigkill_resumes_from_the_records_file(
    cluster: LocalCluster, work: Path
) -> None:
    # The third agent to start never finishes: the driver is killed while it runs.
    suite, signals = blocking_suite(work, "kill9", block_at=3)
    output = work / "kill9"
    trials = work / "kill9-trials"
    trials.mkdir()
    command = [sys.executable, "-m", "plumbline", "agent", "run", str(suite), "--agent"]
    command += [fake_agent(), "-o", str(output), "--repeats", "2", "--json", "--seed", "3"]
    command += ["--sandbox", "none"]
    command += ["--executor", "ray", "--ray-address", cluster.address, "--workdir", str(trials)]
    env = {**os.environ, "PYTHONPATH": SRC}
    driver = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    records = output / "records.jsonl"
    try:
        wait_for(
            lambda: (
                len(list(signals.glob("*.started"))) == 4
                and records.exists()
                and len(records.read_text().splitlines()) == 3
            ),
            "three finished trials and the blocked one",
        )
    finally:
        # The driver dies with SIGKILL, and so does the Ray worker running the blocked trial
        # (which might otherwise still end its trial on the way out): nothing on the node ends
        # the blocked agent's process group, only the rerun can. The driver is stopped first:
        # a running driver that saw the worker die would submit the trial again (an infra
        # retry), and the new trial would reclaim the orphaned lease before the rerun could.
        driver.send_signal(signal.SIGSTOP)
        child = next(signals.glob("*.child"), None)
        if child is not None:
            agent = int(child.with_suffix(".started").read_text())
            worker = int(Path(f"/proc/{agent}/stat").read_text().rsplit(")", 1)[1].split()[1])
            os.kill(worker, signal.SIGKILL)
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    assert child is not None
    alive = [int(child.read_text()), agent]
    assert not any(gone(pid, 0.5) for pid in alive)
    first = read_jsonl(records)

    try:
        rerun = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    finally:
        reclaimed_in_time = ended(alive, timeout=10)
    assert rerun.returncode == 0, rerun.stderr
    assert reclaimed_in_time, "the rerun left the killed driver's agent running on its node"
    document = json.loads(rerun.stdout)
    assert document["executor"] == "ray"
    assert document["ran"] == 1 and document["skipped"] == 3
    assert len(document["reclaimed"]) == 1 and document["reclaimed"][0]["killed"] >= 1
    found = read_jsonl(records)
    assert found[:3] == first
    once_each(plan_of(suite, repeats=2), found)
    assert not list(trials.glob("plumbline-trial.*"))
    assert not list((trials / NODE_LEASES / lease_scope(output) / "running").iterdir())


def test_an_interrupted_driver_stops_its_trials_on_the_nodes(
    cluster: LocalCluster, work: Path
) -> None:
    # The first agent to start never finishes; SIGTERM (as Ctrl-C) interrupts the driver.
    suite, signals = blocking_suite(work, "term", block_at=1)
    output = work / "term"
    command = [sys.executable, "-m", "plumbline", "agent", "run", str(suite), "--agent"]
    command += [fake_agent(), "-o", str(output), "--repeats", "1", "--json", "--sandbox", "none"]
    command += ["--executor", "ray", "--ray-address", cluster.address]
    command += ["--workdir", str(on_ray(cluster, work / "term-trials")["workdir"])]
    env = {**os.environ, "PYTHONPATH": SRC}
    driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        wait_for(lambda: list(signals.glob("*.child")), "the blocked agent's child")
    finally:
        driver.send_signal(signal.SIGTERM)
        _, stderr = driver.communicate(timeout=120)
    assert driver.returncode == 130, stderr
    stopped = ended(blocked_agent(signals))
    assert stopped, "the cancelled trial's processes kept running on their node"
    # The interrupted trial has no record (it runs again on resume); at most the other one.
    records = output / "records.jsonl"
    assert len(read_jsonl(records) if records.exists() else []) <= 1


def test_the_stop_signal_ends_a_running_trial_and_a_later_one_runs_nothing(
    cluster: LocalCluster, work: Path
) -> None:
    suite, signals = blocking_suite(work, "stop", block_at=1)
    plan = plan_of(suite)
    trials = work / "stop-trials"
    trials.mkdir()
    settings = WorkerSettings(
        workdir=str(trials),
        scope="stop-test",
        keep_workspaces=False,
        kill_grace=1.0,
        duration_from="agent",
        sandbox=UNCONFINED,
    )
    connected = connect(cluster.address)
    try:
        ray = require_ray()
        task = ray.remote(run_trial).options(num_cpus=1, max_retries=0)
        materials = ray.put(ShippedMaterials(plan))
        stop = new_stop_signal()
        first, second = plan.schedule[:2]
        running = task.remote(plan, materials, settings, {}, {}, first, stop)
        wait_for(lambda: list(signals.glob("*.child")), "the blocked agent's child")
        send_stop(stop)
        (ready, _) = ray.wait([running], timeout=60)
        assert ready, "the running trial did not end when the run was stopped"
        assert ended(blocked_agent(signals)), "the trial's processes kept running"
        started = len(list(signals.glob("*.started")))
        later: TrialOutput = ray.get(task.remote(plan, materials, settings, {}, {}, second, stop))
        assert later.record is None
        assert len(list(signals.glob("*.started"))) == started, "a stopped run started an agent"
    finally:
        disconnect(connected)
