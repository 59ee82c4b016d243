"""Probe throughput: plumbline's async trial runner vs sequential blocking calls.

Against the local OpenAI-compatible server (its own process, 200 ms per response), run
plumbline's runner through Inspect's `openai-api` provider at concurrency 32 (target: >= 90% of
the ideal 32 / 0.2 s = 160 trials/s) and at concurrency 256 (targets: >= 600 trials/s, and
<= 1.5 ms of client CPU per trial, every client process counted: at 256 the calls are shared
by one worker process per core, as `plumbline probe` shares them), and the sequential baseline
(one blocking SDK call after another) in the same run. Prints each figure beside its target,
the server's own CPU per request (so a server bottleneck would show), and the load average;
exits 1 on a miss.

    .venv/bin/python benchmarks/bench_probe.py [--quick] [--trials-32 2000] [--trials-256 6000]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.openai_server import serve_process  # noqa: E402

LATENCY = 0.2
KEY = "sk-bench-not-a-real-key-0000"
SHARE_32 = 0.90
RATE_256 = 600.0
CPU_MS_256 = 1.5


def _server_cpu(pid: int) -> float:
    """The server process's CPU seconds so far (user + system, from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_ours(trials: int, concurrency: int, journal: Path) -> tuple[float, float, int, str]:
    """Trials per second, client CPU seconds per trial (every client process counted), how
    many processes ran the calls, and the call path that sent them (`TrialRecord.call_path`:
    `PLUMBLINE_COMPAT=public` measures the public path)."""
    from plumbline.probe.caller import InspectCaller
    from plumbline.probe.runner import run_probe
    from plumbline.probe.settings import ProbeSettings, Prompt
    from plumbline.probe.shards import ProbeProcesses, process_count

    prompts = tuple(Prompt(f"p{i}", f"Benchmark prompt number {i}.") for i in range(10))
    settings = ProbeSettings(
        models=("openai-api/bench/model",),
        prompts=prompts,
        trials=trials // len(prompts),
        concurrency=concurrency,
        timeout=30,
    )
    processes = process_count(settings, trials)
    # set-up (imports, model info, worker processes) is not part of the run
    caller = InspectCaller(settings) if processes == 1 else None
    with contextlib.ExitStack() as stack:
        workers = (
            None if processes == 1 else stack.enter_context(ProbeProcesses(settings, processes))
        )
        cpu_before = time.process_time()
        summary = asyncio.run(run_probe(settings, journal, caller=caller, workers=workers))
        # this process's CPU (the journal, and the calls when it runs them) and the workers'
        cpu = time.process_time() - cpu_before + (workers.cpu_seconds if workers else 0.0)
    if summary.completed != trials or summary.errors:
        raise SystemExit(f"the benchmark run was not clean: {summary.to_dict()}")
    paths = {json.loads(line).get("call_path") for line in journal.read_text().splitlines()}
    path = ", ".join(sorted(str(p) for p in paths))
    return summary.trials_per_second, cpu / max(1, summary.completed), processes, path


def run_reference(base_url: str, trials: int) -> float:
    """The baseline: a blocking SDK call per trial, one after another."""
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


def _verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--trials-32", type=int, default=2000)
    parser.add_argument("--trials-256", type=int, default=6000)
    parser.add_argument("--reference-trials", type=int, default=50)
    parser.add_argument("--quick", action="store_true", help="640 and 2,560 trials, 20 baseline")
    args = parser.parse_args()
    if args.quick:
        args.trials_32, args.trials_256, args.reference_trials = 640, 2560, 20
    config = {"default": {"latency": {"kind": "constant", "a": LATENCY}}}
    with serve_process(config) as (base_url, pid), tempfile.TemporaryDirectory() as tmp:
        os.environ["BENCH_BASE_URL"] = base_url
        os.environ["BENCH_API_KEY"] = KEY
        reference = run_reference(base_url, args.reference_trials)
        rate_32, cpu_32, _, path = run_ours(args.trials_32, 32, Path(tmp) / "c32.jsonl")
        load_32 = os.getloadavg()[0]
        server_before = _server_cpu(pid)
        rate_256, cpu_256, processes_256, _ = run_ours(
            args.trials_256, 256, Path(tmp) / "c256.jsonl"
        )
        server_ms = (_server_cpu(pid) - server_before) / args.trials_256 * 1000
        load_256 = os.getloadavg()[0]
    share = rate_32 / (32 / LATENCY)
    checks = [share >= SHARE_32, rate_256 >= RATE_256, cpu_256 * 1000 <= CPU_MS_256]
    cpus = os.cpu_count()
    print(f"server latency {LATENCY * 1000:.0f} ms; {cpus} CPUs; call path {path}")
    print(f"baseline (sequential blocking, {args.reference_trials} trials): {reference:.1f} /s")
    print(
        f"probe c=32 ({args.trials_32} trials): {rate_32:.1f} trials/s, {share:.0%} of the "
        f"ideal 160 (target >= {SHARE_32:.0%}) {_verdict(checks[0])}; "
        f"{rate_32 / reference:.1f}x the baseline; client CPU {cpu_32 * 1000:.2f} ms/trial; "
        f"load {load_32:.1f}"
    )
    print(
        f"probe c=256 ({args.trials_256} trials, {processes_256} client processes): "
        f"{rate_256:.1f} trials/s "
        f"(target >= {RATE_256:.0f}) {_verdict(checks[1])}; load {load_256:.1f}"
    )
    print(
        f"client CPU per trial at c=256 (all client processes): {cpu_256 * 1000:.2f} ms "
        f"(target <= {CPU_MS_256}) {_verdict(checks[2])}"
    )
    print(
        f"server CPU per request at c=256: {server_ms:.2f} ms "
        f"(one core serves up to {1000 / server_ms:.0f} requests/s)"
    )
    if not all(checks):
        sys.exit(1)


if __name__ == "__main__":
    main()
