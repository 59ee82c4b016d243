"""The embedded model on a busy machine (issue 38, item 11): a batch runs on no more torch
threads than the cores other processes leave free, so a competing process does not stall every
decoding step (on 2 cores, 4 answers of 32 tokens on 2 threads did not finish in 300 s; on 1,
11 s). The speed itself is measured in `benchmarks/bench_local_contention.py` (no timings here).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from plumbline.models.batching import busy_elsewhere, threads_for, usable_cores
from plumbline.models.local import LocalEngine, shared_engine

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("smollm2")]


@pytest.mark.parametrize(
    ("cap", "cores", "others", "threads"),
    [
        (2, 2, 0, 2),  # an idle machine: torch's default
        (2, 2, 1, 1),  # one core taken: one thread, never a team that waits for it
        (2, 2, 5, 1),  # load 5 on 2 cores: still one thread, not zero
        (8, 16, 4, 8),  # a big machine: the cap
        (8, 8, 3, 5),
        (1, 2, 0, 1),  # `-M threads=1` stays 1
    ],
)
def test_threads_for_leaves_busy_cores_alone(
    cap: int, cores: int, others: int, threads: int
) -> None:
    assert threads_for(cap, cores, others) == threads


@pytest.fixture
def busy_cores() -> Iterator[int]:
    """One CPU-bound process per usable core, for the duration of the test (a competing load
    as another job on a shared machine makes it)."""
    count = usable_cores()
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        deadline = time.monotonic() + 30
        while busy_elsewhere() < count and time.monotonic() < deadline:
            time.sleep(0.05)
        yield count
    finally:
        for spinner in spinners:
            spinner.kill()
        for spinner in spinners:
            spinner.wait()


def test_busy_elsewhere_counts_competing_processes(busy_cores: int) -> None:
    assert busy_elsewhere() >= busy_cores


def test_a_batch_on_a_busy_machine_runs_on_one_thread(busy_cores: int) -> None:
    engine: LocalEngine = shared_engine()
    generation = engine.generate([{"role": "user", "content": "Hi"}], max_new_tokens=2)
    assert generation.output_tokens >= 1
    assert generation.threads == 1  # every core is taken by another process


def test_probe_loads_the_embedded_model_before_any_trial_is_timed() -> None:
    """With the default `--timeout 30`, the model's start-up (20 s on a busy 2-core machine)
    was charged to the first trials: `probe --model plumbline/smollm2`, 2 prompts × 2 trials,
    recorded 4 TimeoutErrors in 4. The probe's set-up now loads it (`warm_up`)."""
    from plumbline.probe.caller import InspectCaller
    from plumbline.probe.settings import ProbeSettings, Prompt

    settings = ProbeSettings(models=("plumbline/smollm2",), prompts=(Prompt("p", "hi"),))
    caller = InspectCaller(settings)
    for model in caller._models["plumbline/smollm2"]:
        assert model.api._engine is not None  # loaded before any call is timed
