"""Scale-out: the same agent suite on the local executor and on a two-node Ray cluster.

A 40-trial suite (one task, two arms, 20 repeats) whose agent sleeps 2 seconds runs on the
local executor (concurrency 2) and on a real two-node Ray cluster started on this machine
(`tests.support.ray_cluster.LocalCluster`, 2 CPUs per node, one CPU per trial: 4 slots). Printed:
trials/s of each, their ratio, and the overhead per trial of each executor: the slot-seconds a
trial costs after start-up ((wall time - start-up) × slots / trials) minus the trial's own
time (its record's start to end, measured on its node); start-up (connecting, checking every
node, starting worker processes: until the first trial starts) is printed apart, as it is paid
once per run. Ray's overhead is what it adds to the local executor's. Target: under 0.3 s per
trial, and throughput that scales with slots (about 2x for twice the slots).

    .venv/bin/python benchmarks/bench_scale.py               # 40 trials, 2 s agent
    .venv/bin/python benchmarks/bench_scale.py --cdk         # also: all 40 CDK reference
                                                             # apps, local pool vs Ray actors

With --cdk, every reference solution of the cdk_synth dataset is synthesized by a local warm
pool and by Ray actors (one per node, each with its own warm pool); the script prints how
many reports agree in every judged field, and exits 1 if any differs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the test cluster lives in tests/support

from tests.support.ray_cluster import LocalCluster  # noqa: E402

import plumbline  # noqa: E402
from plumbline.agent.harness import Harness, RayOptions, RunOptions  # noqa: E402
from plumbline.agent.plan import Plan, make_plan  # noqa: E402
from plumbline.agent.profiles import resolve_agent  # noqa: E402
from plumbline.agent.suite import load_suite  # noqa: E402

SRC = str(Path(plumbline.__file__).resolve().parents[1])


def write_suite(directory: Path, repeats: int, sleep: float) -> Plan:
    (directory / "repo").mkdir(parents=True)
    (directory / "repo" / "README.md").write_text("A task with nothing to do.\n")
    suite = {
        "name": "scale",
        "control": "a",
        "repeats": repeats,
        "timeout_seconds": 60,
        "arms": [{"name": "a"}, {"name": "b", "prompt_suffix": " (b)"}],
        "tasks": [
            {"id": "sleep", "prompt": "Wait.", "source": {"dir": "repo"}, "acceptance": "true"}
        ],
    }
    path = directory / "suite.json"
    path.write_text(json.dumps(suite))
    agent = resolve_agent(f"sleep {sleep:g}", None)
    return make_plan(load_suite(path), agent, repeats=repeats, seed=0, order="random")


def _seconds(record: dict[str, Any]) -> float:
    return (_utc(record["ended_at_utc"]) - _utc(record["started_at_utc"])).total_seconds()


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def measure(plan: Plan, output: Path, slots: int, **options: Any) -> dict[str, float]:
    begun = datetime.now(UTC)
    started = time.perf_counter()
    result = Harness(plan, RunOptions(output=output, **options)).run()
    wall = time.perf_counter() - started
    records = [json.loads(line) for line in (output / "records.jsonl").read_text().splitlines()]
    if result.ran != len(plan.schedule) or any(not r["success"] for r in records):
        raise SystemExit(f"{output}: not every trial ran and succeeded")
    trials = len(records)
    in_trial = sum(_seconds(r) for r in records) / trials
    # Connecting, checking every node and starting the workers: paid once per run.
    startup = (min(_utc(r["started_at_utc"]) for r in records) - begun).total_seconds()
    return {
        "trials": trials,
        "slots": slots,
        "wall_seconds": wall,
        "trials_per_second": trials / wall,
        "trial_seconds": in_trial,
        "startup_seconds": startup,
        "steady_trials_per_second": trials / (wall - startup),
        "overhead_per_trial": (wall - startup) * slots / trials - in_trial,
    }


def bench_agents(repeats: int, sleep: float, work: Path) -> None:
    plan = write_suite(work / "suite", repeats, sleep)
    trials = work / "trials"
    trials.mkdir()
    local = measure(plan, work / "local", 2, concurrency=2, workdir=trials)
    print(f"starting a two-node Ray cluster on 127.0.0.1 ({len(plan.schedule)} trials)...")
    with LocalCluster(nodes=2, cpus=2, env={"PYTHONPATH": SRC}) as cluster:
        ray = measure(
            plan,
            work / "ray",
            4,
            executor="ray",
            ray=RayOptions(address=cluster.address, cpus_per_trial=1),
            workdir=trials,
        )
    print(
        f"{'executor':<24} {'slots':>5} {'wall s':>7} {'trials/s':>8} {'startup s':>9} "
        f"{'after startup':>13} {'trial s':>7} {'overhead s/trial':>16}"
    )
    for name, row in (("local (concurrency 2)", local), ("ray (2 nodes x 2 CPUs)", ray)):
        print(
            f"{name:<24} {row['slots']:>5.0f} {row['wall_seconds']:>7.1f} "
            f"{row['trials_per_second']:>8.3f} {row['startup_seconds']:>9.2f} "
            f"{row['steady_trials_per_second']:>13.3f} {row['trial_seconds']:>7.2f} "
            f"{row['overhead_per_trial']:>16.3f}"
        )
    ratio = ray["trials_per_second"] / local["trials_per_second"]
    steady = ray["steady_trials_per_second"] / local["steady_trials_per_second"]
    print(
        f"throughput ratio ray/local for 2x the slots: {ratio:.2f}x overall, "
        f"{steady:.2f}x after start-up"
    )
    # Both executors pay for cleaning up a trial and writing its record; Ray's own cost per
    # trial is what it adds to that.
    added = ray["overhead_per_trial"] - local["overhead_per_trial"]
    verdict = "meets" if added < 0.3 else "misses"
    print(
        f"ray overhead per trial (beyond the local executor's, after start-up): {added:.3f} s "
        f"({verdict} the < 0.3 s target); start-up {ray['startup_seconds']:.1f} s once per run"
    )


def bench_cdk(work: Path) -> bool:
    from plumbline.cdk.extract import extract_from_source
    from plumbline.cdk.outcomes import SynthReport
    from plumbline.cdk.synth import CdkSynthesizer, SynthOptions
    from plumbline.cluster.cdk import RaySynthesizer
    from plumbline.sandbox import ResourceLimits
    from plumbline.suites.sa_bench.datasets import load_cdk_synth

    prompts = load_cdk_synth()
    apps = [extract_from_source(p.solution_path.read_text(), "app.py") for p in prompts]
    options = SynthOptions(limits=ResourceLimits(wall_seconds=300, cpu_seconds=120), pool_size=1)

    def judged(report: SynthReport) -> dict[str, Any]:
        data = report.to_dict()
        for key in ("seconds", "engine", "log"):
            data.pop(key, None)
        return data

    started = time.perf_counter()
    with CdkSynthesizer(options) as local, ThreadPoolExecutor(2) as pool:
        expected = list(pool.map(local.check_app, apps))
    local_wall = time.perf_counter() - started
    with LocalCluster(nodes=2, cpus=2, env={"PYTHONPATH": SRC}) as cluster:
        started = time.perf_counter()
        with (
            RaySynthesizer(options, address=cluster.address, actors=2) as remote,
            ThreadPoolExecutor(2) as pool,
        ):
            found = list(pool.map(remote.check_app, apps))
        ray_wall = time.perf_counter() - started
    same = [judged(a) == judged(b) for a, b in zip(expected, found, strict=True)]
    for prompt, ok, a, b in zip(prompts, same, expected, found, strict=True):
        if not ok:
            print(f"  {prompt.id}: local {a.outcome.value} ({a.reason}); ray {b.outcome.value}")
    passed = sum(r.outcome.passed for r in found)
    print(
        f"CDK reference apps: {sum(same)}/{len(apps)} reports identical (local {local_wall:.0f} s, "
        f"ray {ray_wall:.0f} s); {passed}/{len(apps)} passed on Ray"
    )
    return all(same)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20, help="per arm (2 arms; default 20)")
    parser.add_argument("--sleep", type=float, default=2.0, help="agent seconds per trial")
    parser.add_argument("--cdk", action="store_true", help="also compare the 40 CDK apps")
    parser.add_argument("--no-agents", action="store_true", help="skip the agent suite")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="plumbline-bench-scale-"))
    try:
        if not args.no_agents:
            bench_agents(args.repeats, args.sleep, work)
        if args.cdk and not bench_cdk(work):
            sys.exit(1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
