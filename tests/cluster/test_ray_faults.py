"""A node of the Ray cluster dying mid-run: its trials run again elsewhere, each unit is
recorded exactly once, and the records are the local executor's. It kills the second node of
the shared cluster, so it runs after every other Ray test (this module sorts last)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from tests.agent.helpers import read_jsonl
from tests.cluster.helpers import (
    diffs,
    normal,
    on_ray,
    once_each,
    plan_of,
    run,
    suite_with,
    wait_for,
)
from tests.support.ray_cluster import LocalCluster

from plumbline.agent.plan import Plan

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray_cluster")]


def test_a_node_dying_mid_run_loses_no_trial_and_duplicates_none(
    cluster: LocalCluster, work: Path, local_records: tuple[Plan, Path]
) -> None:
    _, local_out = local_records
    signals = work / "node-signals"
    plan = plan_of(suite_with(work / "node-suite", 4, signals))
    output = work / "node"
    trials = work / "node-trials"

    def kill_second_node() -> None:
        # Four trials at once (two CPUs per node): two of them on the second node, whose
        # every process (raylet, workers, agents) is killed the way a machine dies.
        wait_for(lambda: len(list(signals.glob("*.started"))) >= 4, "four running agents")
        cluster.kill_node(1)

    killer = threading.Thread(target=kill_second_node)
    killer.start()
    try:
        result = run(plan, output, **on_ray(cluster, trials))
    finally:
        killer.join()

    records = read_jsonl(output / "records.jsonl")
    once_each(plan, records)
    assert normal(records) == normal(read_jsonl(local_out / "records.jsonl"))
    assert diffs(output) == diffs(local_out)
    # The trials lost with the node ran again, were counted, and say so in their records (two
    # were running there, unless a loaded machine let one finish before the kill).
    assert len(result.infra_retries) >= 1
    retried = {(r.task_id, r.arm, r.repeat) for r in result.infra_retries}
    assert {(r["task_id"], r["arm"], r["repeat"]) for r in records if r["infra_retries"]} == retried
    assert all(not r["infra_failure"] for r in records)
    # The lost trials' directories were reclaimed by the trials that came after them.
    assert not list(trials.glob("plumbline-trial.*"))
