"""`plumbline run sa-bench --adaptive` offline, end to end: the demo's scripted models and the
embedded model (plumbline/smollm2, in process on the CPU), each run a new process as a person
runs it.

Three runs of the same models on the same questions:

1. the full run (every model, every question): its tie groups;
2. the adaptive run: its tie groups, `adaptive.calls_used` and `adaptive.calls_full`;
3. the adaptive run killed (SIGKILL) once its second round has started, then the same command
   again in a new process: it must end with the same `adaptive` block as run 2.

Printed: the tie groups of runs 1 and 2, the calls, and whether the resumed run matches.

    python benchmarks/bench_adaptive_offline.py                       # 3 models, --limit 10
    python benchmarks/bench_adaptive_offline.py --limit 5 --round-size 2 --no-real-model
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SCRIPTED = ("scripted/oracle", "scripted/weak")
REAL_MODEL = "plumbline/smollm2"
REAL_MAX_TOKENS = 32


def _command(args: argparse.Namespace, logs: Path, adaptive: bool) -> list[str]:
    models = [*SCRIPTED, *([] if args.no_real_model else [REAL_MODEL])]
    command = [sys.executable, "-m", "plumbline", "run", "sa-bench"]
    for model in models:
        command += ["--model", model]
    command += ["--limit", str(args.limit), "--max-tokens", str(REAL_MAX_TOKENS)]
    command += ["--timeout", "300", "--errors", "zero", "--log-dir", str(logs)]
    command += ["--display", "none", "--json", "--seed", str(args.seed)]
    if adaptive:
        command += ["--adaptive", "--round-size", str(args.round_size)]
    return command


def _run(command: list[str]) -> dict[str, Any]:
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=7200)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def _groups(document: dict[str, Any]) -> list[list[str]]:
    return [sorted(group["models"]) for group in document["tie_groups"]]


def _killed_then_resumed(command: list[str], logs: Path) -> dict[str, Any]:
    """Start the run, SIGKILL it once its second round's directory exists, run it again."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    second = logs / "adaptive" / "round-002"
    while process.poll() is None and not second.exists():
        time.sleep(0.2)
    killed = process.poll() is None
    if killed:
        time.sleep(1.0)  # into the second round
        process.kill()
    process.wait()
    print(f"killed during round 2: {'yes' if killed else 'no (it ended first)'}")
    return _run(command)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=10, help="samples per SA Bench task")
    parser.add_argument("--round-size", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-real-model", action="store_true", help="the scripted models only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-adaptive-offline-") as scratch:
        root = Path(scratch)
        start = time.perf_counter()
        full = _run(_command(args, root / "full", adaptive=False))
        print(f"full run: {time.perf_counter() - start:.0f} s; tie groups {_groups(full)}")
        start = time.perf_counter()
        adaptive = _run(_command(args, root / "adaptive", adaptive=True))
        block = adaptive["adaptive"]
        print(
            f"adaptive run: {time.perf_counter() - start:.0f} s; tie groups {_groups(adaptive)}; "
            f"calls {block['calls_used']} of {block['calls_full']} "
            f"({block['calls_used'] / block['calls_full']:.1%}); stop: {block['stop_reason']}"
        )
        print(f"  questions each model answered: {block['models']}")
        for pair in block["pairs"]:
            print(f"  {pair['first']} – {pair['second']}: {pair['status']}")
        resumed = _killed_then_resumed(
            _command(args, root / "killed", adaptive=True), root / "killed"
        )
        same_groups = _groups(full) == _groups(adaptive)
        fewer = block["calls_used"] < block["calls_full"]
        same_resumed = resumed["adaptive"] == block and _groups(resumed) == _groups(adaptive)
        print(f"same tie groups as the full run: {'yes' if same_groups else 'NO'}")
        print(f"fewer calls: {'yes' if fewer else 'NO'}")
        print(f"killed run resumed to the same result: {'yes' if same_resumed else 'NO'}")
    return 0 if same_groups and fewer and same_resumed else 1


if __name__ == "__main__":
    sys.exit(main())
