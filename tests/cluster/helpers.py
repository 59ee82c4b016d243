"""Helpers of the Ray tests: the scripted agent's suite, runs, and record comparisons."""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.agent.helpers import fake_agent, gone, one_task, read_jsonl, write_suite
from tests.support.agent_server import Reply, Script, ScriptedAgentServer, Usage
from tests.support.ray_cluster import LocalCluster

import plumbline
from plumbline.agent.harness import Harness, RayOptions, RunOptions, RunResult
from plumbline.agent.plan import Plan, make_plan
from plumbline.agent.profiles import resolve_agent
from plumbline.agent.sandbox import SandboxOptions
from plumbline.agent.suite import load_suite

#: The code under test, for the cluster's workers.
SRC = str(Path(plumbline.__file__).resolve().parents[1])
SECRET_NAME = "PLUMBLINE_RAY_TEST_KEY"
SECRET = "sk-ray-test-0123456789abcdef"
#: What the scripted model reports for every answer.
MODEL_USAGE = Usage(input=1000, cached=800, output=20, cache_write=50)
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


def plan_of(suite: Path, repeats: int = 1) -> Plan:
    return make_plan(
        load_suite(suite),
        resolve_agent(fake_agent(), None),
        repeats=repeats,
        seed=3,
        order="random",
    )


@functools.cache
def model_server() -> ScriptedAgentServer:
    """The scripted model every metered trial here calls (started once, for the session): each
    answer reports the same usage, so local and Ray records compare like for like."""
    script = Script([Reply("done")], usage=lambda _k: MODEL_USAGE)
    return ScriptedAgentServer(script).__enter__()


def suite_with(directory: Path, sleep: float, signals: Path) -> Path:
    """The example suite (2 tasks, 2 arms); the agent sleeps, marks its start in `signals`,
    calls the scripted model once (through the metering proxy) and prints the passed-through
    key."""
    signals.mkdir(parents=True, exist_ok=True)
    env = {"FAKE_SLEEP": str(sleep), "FAKE_SIGNAL_DIR": str(signals), "FAKE_MODEL_CALL": "1"}
    env["ANTHROPIC_BASE_URL"] = model_server().origin
    return write_suite(directory, {"env": {**env, "FAKE_SECRET_NAME": SECRET_NAME}})


#: The executor tests' agents signal through host directories and are watched by host process
#: ids: their trials run unconfined (the sandbox on Ray: test_ray_sandbox.py).
UNCONFINED = SandboxOptions(kind="none")


def run(plan: Plan, output: Path, **options: Any) -> RunResult:
    options.setdefault("sandbox", UNCONFINED)
    # Metered on both executors: the scripted model's origin is an allowed upstream.
    options.setdefault("allow_hosts", (f"127.0.0.1:{model_server().port}",))
    return Harness(plan, RunOptions(output=output, pass_env={SECRET_NAME: SECRET}, **options)).run()


def on_ray(cluster: LocalCluster, workdir: Path) -> dict[str, Any]:
    workdir.mkdir(parents=True, exist_ok=True)
    return {"executor": "ray", "ray": RayOptions(address=cluster.address), "workdir": workdir}


def local_run(work: Path) -> tuple[Plan, Path]:
    plan = plan_of(suite_with(work / "local-suite", 0.5, work / "local-signals"))
    run(plan, work / "local", concurrency=2)
    return plan, work / "local"


def normal(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    kept = [{k: v for k, v in r.items() if k not in VOLATILE} for r in records]
    for record in kept:  # the proxy's clock, like the harness's, differs run to run
        if isinstance(record.get("metered_usage"), dict):
            record["metered_usage"] = {
                k: v for k, v in record["metered_usage"].items() if k != "latency_seconds"
            }
    return sorted(kept, key=lambda r: (r["task_id"], r["arm"], r["repeat"]))


def diffs(output: Path) -> dict[tuple[str, str, int], bytes]:
    return {
        (r["task_id"], r["arm"], r["repeat"]): (output / r["diff_file"]).read_bytes()
        for r in read_jsonl(output / "records.jsonl")
    }


def once_each(plan: Plan, records: list[dict[str, Any]]) -> None:
    """Every scheduled unit has exactly one record."""
    counts = Counter((r["task_id"], r["arm"], r["repeat"]) for r in records)
    assert set(counts) == {unit.key for unit in plan.schedule}
    assert set(counts.values()) == {1}


def wait_for(condition: Callable[[], bool], what: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def blocking_suite(work: Path, name: str, block_at: int) -> tuple[Path, Path]:
    """The example's first task alone, whose `block_at`-th agent to start never finishes: the
    suite, and the directory where each agent marks its start (`*.started`, `*.child`)."""
    signals = work / f"{name}-signals"
    signals.mkdir()
    env = {"FAKE_SIGNAL_DIR": str(signals), "FAKE_BLOCK_AT": str(block_at)}
    return write_suite(work / f"{name}-suite", {"tasks": one_task(), "env": env}), signals


def blocked_agent(signals: Path) -> list[int]:
    """The blocked agent's child and the agent itself (their process ids)."""
    child = next(signals.glob("*.child"))
    return [int(child.read_text()), int(child.with_suffix(".started").read_text())]


def ended(pids: list[int], timeout: float = 30) -> bool:
    """Whether every process ended within `timeout`; whatever still runs is then killed."""
    result = all(gone(pid, timeout) for pid in pids)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return result
