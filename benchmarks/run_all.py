"""`make bench`: every benchmarks/bench_*.py in turn, then each target line in one summary.

Each script runs ours and its baseline in the same run, prints its ratios beside their targets
(lines with "target") and exits 1 when one falls short. This runs them one after another (never
in parallel: they time wall clock on a shared machine), echoes their output as it comes, and
ends with the load average, every target line and which scripts missed. Exits 1 when any did.

    .venv/bin/python benchmarks/run_all.py [--only leaderboard,probe] [--skip cdk]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _name(path: Path) -> str:
    return path.stem.removeprefix("bench_")


def scripts(only: set[str], skip: set[str]) -> list[Path]:
    """The bench_*.py scripts, by name without `bench_`, filtered."""
    found = sorted(HERE.glob("bench_*.py"))
    return [p for p in found if (not only or _name(p) in only) and _name(p) not in skip]


def run(script: Path) -> tuple[int, list[str], float]:
    """Run one script, echoing its output; its exit code, its target lines and seconds."""
    start = time.perf_counter()
    targets: list[str] = []
    with subprocess.Popen(
        [sys.executable, str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=HERE.parent,
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            print(line, end="", flush=True)
            if "target" in line:
                targets.append(line.strip())
    return process.returncode, targets, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated names (bench_NAME.py)")
    parser.add_argument("--skip", default="", help="comma-separated names to leave out")
    args = parser.parse_args(argv)
    only = {n.strip() for n in args.only.split(",") if n.strip()}
    skip = {n.strip() for n in args.skip.split(",") if n.strip()}
    results = []
    for script in scripts(only, skip):
        print(f"\n=== {script.name} (load average {os.getloadavg()[0]:.2f})", flush=True)
        results.append((script.name, *run(script)))
    print(f"\n=== summary ({os.cpu_count()} CPUs, load average now {os.getloadavg()[0]:.2f})")
    for name, code, targets, seconds in results:
        status = "ok" if code == 0 else f"MISS (exit {code})"
        print(f"{name}: {status}, {seconds:.0f} s")
        for line in targets:
            print(f"    {line}")
    missed = [name for name, code, _, _ in results if code != 0]
    if missed:
        print(f"missed: {', '.join(missed)}", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
