"""The embedded model on a loaded machine: a batch against the same calls one at a time.

`--load N` CPU-bound processes (default: one per usable core) compete with the model, as other
jobs on a shared machine do. Then, per round, the same requests are answered one after another
(`LocalEngine.generate` from one thread: a batch of one each) and all at once (from
`--concurrency` threads: decoded together). Prints the torch threads the batches ran on, the
load average, and the ratio batch / one-at-a-time of each round; the requirement is that a
batch is never slower (ratio ≤ 1 in every round). Exits 1 otherwise.

Before `batching.threads_for`, a batch ran on torch's default of one thread per core: with
every core taken by another process, each of a step's two hundred parallel regions waited for
a descheduled thread, and on 2 cores at load 17 four answers of 32 tokens did not finish in
300 s; one thread per free core (at least one) takes 11–14 s for the batch and 28–38 s for the
same calls one at a time.

    .venv/bin/python benchmarks/bench_local_contention.py [--quick] [--load N] [--rounds R]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from plumbline.models.batching import busy_elsewhere, usable_cores
from plumbline.models.local import Generation, LocalEngine, shared_engine

PROMPTS = (
    "Name one AWS service for object storage.",
    "What does Amazon SQS do? One sentence.",
    "Which AWS database is serverless and key-value?",
    "Give one reason to use a load balancer.",
    "What is an AWS Region?",
    "What is Amazon S3 Glacier for?",
    "Name one AWS compute service.",
    "What does AWS IAM manage?",
)


def answer(engine: LocalEngine, prompt: str, tokens: int) -> Generation:
    return engine.generate([{"role": "user", "content": prompt}], max_new_tokens=tokens)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--load", type=int, default=usable_cores(), help="competing processes")
    parser.add_argument("--concurrency", type=int, default=4, help="requests per batch")
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="2 requests of 16 tokens, 1 round")
    args = parser.parse_args()
    if args.quick:
        args.concurrency, args.max_tokens, args.rounds = 2, 16, 1
    prompts = PROMPTS[: args.concurrency]
    engine = shared_engine()
    answer(engine, prompts[0], 4)  # load and warm up before the load starts
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)
    ]
    worst = 0.0
    try:
        time.sleep(0.5)
        print(
            f"{args.load} competing processes; {busy_elsewhere()} tasks busy besides this one; "
            f"{usable_cores()} cores; {len(prompts)} requests × {args.max_tokens} tokens"
        )
        for number in range(1, args.rounds + 1):
            started = time.perf_counter()
            alone = [answer(engine, prompt, args.max_tokens) for prompt in prompts]
            serial = time.perf_counter() - started
            started = time.perf_counter()
            with ThreadPoolExecutor(len(prompts)) as pool:
                together = list(pool.map(lambda p: answer(engine, p, args.max_tokens), prompts))
            batch = time.perf_counter() - started
            ratio = batch / serial
            worst = max(worst, ratio)
            print(
                f"round {number}: one at a time {serial:.2f} s (threads "
                f"{sorted({g.threads for g in alone})}), batch {batch:.2f} s (threads "
                f"{sorted({g.threads for g in together})}); batch / one at a time = {ratio:.2f}; "
                f"load average {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    finally:
        for spinner in spinners:
            spinner.kill()
        for spinner in spinners:
            spinner.wait()
    print(f"worst ratio {worst:.2f} (a batch must never be slower: ≤ 1)")
    return 0 if worst <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
