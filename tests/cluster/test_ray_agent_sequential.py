"""`--until-decided` on the Ray executor: trials are submitted at most `concurrency` at a time,
so once the sequential verdict is reached no new trial starts on the cluster; the records are
the local executor's verdict (pairs in schedule order), and a rerun starts nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.agent.helpers import read_jsonl
from tests.cluster.helpers import (
    SECRET,
    SECRET_NAME,
    UNCONFINED,
    on_ray,
    plan_of,
    suite_with,
)
from tests.support.ray_cluster import LocalCluster

from plumbline.agent.harness import Harness, RunOptions
from plumbline.agent.plan import Plan
from plumbline.agent.sequential import SequentialMonitor
from plumbline.stats import plan_sequential, run_sequential

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray_cluster")]


def _harness(plan: Plan, output: Path, cluster: LocalCluster, work: Path) -> Harness:
    harness = Harness(
        plan,
        RunOptions(
            output=output,
            pass_env={SECRET_NAME: SECRET},
            concurrency=2,
            sandbox=UNCONFINED,
            **on_ray(cluster, work / "seq-trials"),
        ),
    )
    harness.monitor = SequentialMonitor(
        harness.plan.schedule, "with_hint", "without_hint", plan_sequential(0.5, 0.3)
    )
    return harness


def test_until_decided_on_ray_stops_submitting_at_the_verdict(
    cluster: LocalCluster, work: Path
) -> None:
    suite = suite_with(work / "seq-suite", 0.2, work / "seq-signals")
    plan = plan_of(suite, repeats=15)
    output = work / "seq"
    harness = _harness(plan, output, cluster, work)
    result = harness.run()
    assert harness.monitor is not None and harness.monitor.stopped
    verdict = harness.monitor.result
    design = harness.monitor.plan
    wins = run_sequential([1] * design.max_pairs, [0] * design.max_pairs, design).stopped_at
    assert verdict is not None and verdict.verdict == "better" and verdict.stopped_at == wins
    records = read_jsonl(output / "records.jsonl")
    assert result.ran == len(records)
    assert 2 * wins <= len(records) <= 2 * wins + 2 < len(plan.schedule)
    assert len({(r["task_id"], r["arm"], r["repeat"]) for r in records}) == len(records)
    # resumed: the same verdict from the records, nothing submitted
    again = _harness(plan, output, cluster, work)
    assert again.run().ran == 0
    assert again.monitor is not None and again.monitor.result is not None
    assert again.monitor.result.stopped_at == wins
