"""Probe throughput: plumbline's async trial runner vs the reference's sequential blocking calls.

Against the local OpenAI-compatible server (its own process, 200 ms per response), run
2,000 trials at concurrency 32 through Inspect's `openai-api` provider with plumbline's runner,
and 100 trials the reference's way (one blocking SDK call after another). Prints trials per
second for both, the ratio, the share of the ideal 32 / 0.2 s = 160 trials/s, and peak RSS.

    .venv/bin/python benchmarks/bench_probe.py [--trials 2000] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.openai_server import serve_in_subprocess  # noqa: E402

LATENCY = 0.2
KEY = "sk-bench-not-a-real-key-0000"


def run_ours(base_url: str, trials: int, concurrency: int, journal: Path) -> tuple[float, float]:
    """Trials per second, and client CPU seconds per trial."""
    from plumbline.reliability.runner import InspectCaller, ProbeSettings, Prompt, run_probe

    prompts = tuple(Prompt(f"p{i}", f"Benchmark prompt number {i}.") for i in range(10))
    settings = ProbeSettings(
        models=("openai-api/bench/model",),
        prompts=prompts,
        trials=trials // len(prompts),
        concurrency=concurrency,
        timeout=30,
    )
    caller = InspectCaller(settings)  # set-up (imports, model info) is not part of the run
    cpu_before = time.process_time()
    summary = asyncio.run(run_probe(settings, journal, caller=caller))
    cpu_per_trial = (time.process_time() - cpu_before) / max(1, summary.completed)
    if summary.completed != trials or summary.errors:
        raise SystemExit(f"the benchmark run was not clean: {summary.to_dict()}")
    return summary.trials_per_second, cpu_per_trial


def run_reference(base_url: str, trials: int) -> float:
    """The reference's approach: a blocking SDK call per trial, one after another."""
    from openai import OpenAI

    client = OpenAI(base_url=base_url, api_key=KEY, max_retries=0, timeout=30)
    client.chat.completions.create(model="model", messages=[{"role": "user", "content": "warm"}])
    started = time.monotonic()
    for trial in range(trials):
        client.chat.completions.create(
            model="model",
            messages=[{"role": "user", "content": f"Benchmark prompt number {trial % 10}."}],
            temperature=0.7,
            max_tokens=1024,
        )
    return trials / (time.monotonic() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--reference-trials", type=int, default=100)
    args = parser.parse_args()
    config = {"default": {"latency": {"kind": "constant", "a": LATENCY}}}
    with serve_in_subprocess(config) as base_url, tempfile.TemporaryDirectory() as tmp:
        os.environ["BENCH_BASE_URL"] = base_url
        os.environ["BENCH_API_KEY"] = KEY
        reference = run_reference(base_url, args.reference_trials)
        ours, cpu_per_trial = run_ours(
            base_url, args.trials, args.concurrency, Path(tmp) / "trials.jsonl"
        )
    ideal = args.concurrency / LATENCY
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"server latency {LATENCY * 1000:.0f} ms, concurrency {args.concurrency}")
    print(f"reference (sequential blocking, {args.reference_trials} trials): {reference:.1f} /s")
    print(f"plumbline probe ({args.trials} trials): {ours:.1f} trials/s")
    print(f"ratio plumbline / reference: {ours / reference:.1f}x")
    print(f"share of the ideal {ideal:.0f} trials/s: {100 * ours / ideal:.0f}% (target >= 70%)")
    print(
        f"client CPU per trial: {cpu_per_trial * 1000:.1f} ms "
        f"(one free core could drive {1 / cpu_per_trial:.0f} trials/s)"
    )
    print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"peak RSS: {peak_mb:.0f} MB")


if __name__ == "__main__":
    main()
