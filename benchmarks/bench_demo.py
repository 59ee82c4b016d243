"""`plumbline demo` end to end: seconds in a fresh output directory, against the ≤ 90 s target.

Runs the installed command (`plumbline demo -o DIR`, a new process, as `make demo` does after
install; the embedded model's converted copy is cached by then) and prints its wall time with
the load average (a shared machine). Exits 1 when the demo fails or takes longer than the
target. `--keep DIR` keeps its output there (for `scripts/demo_diff.py`); `--steps` instead
runs the demo's steps in this process and prints where the time goes, step by step.

    .venv/bin/python benchmarks/bench_demo.py [--keep DIR] [--steps]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_SECONDS = 90.0


def steps(output: Path) -> None:
    """Each demo step's wall and CPU seconds (this process's CPU: not the sandbox's)."""
    from plumbline.cli.demo import demo_steps
    from plumbline.cli.main import main as cli

    output.mkdir(parents=True, exist_ok=True)
    for step in demo_steps(output):
        started, cpu = time.perf_counter(), time.process_time()
        try:
            cli.main(list(step.args), prog_name="plumbline", standalone_mode=False)
        except SystemExit as stop:
            if not (step.findings_exit and stop.code == 1):
                raise
        print(
            f"{time.perf_counter() - started:7.1f} s wall {time.process_time() - cpu:7.1f} s CPU "
            f"load {os.getloadavg()[0]:5.2f}  plumbline {' '.join(step.args[:2])}",
            file=sys.stderr,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="write the demo's output here (kept)")
    parser.add_argument("--steps", action="store_true", help="time each step in process")
    args = parser.parse_args()
    if args.steps:
        with tempfile.TemporaryDirectory() as scratch:
            steps(args.keep if args.keep is not None else Path(scratch) / "demo")
        return 0
    plumbline = Path(sys.executable).with_name("plumbline")
    command = [str(plumbline)] if plumbline.exists() else [sys.executable, "-m", "plumbline"]
    with tempfile.TemporaryDirectory() as scratch:
        output = args.keep if args.keep is not None else Path(scratch) / "demo"
        if output.exists():
            shutil.rmtree(output)
        started = time.perf_counter()
        finished = subprocess.run(
            [*command, "demo", "-o", str(output)], capture_output=True, text=True, check=False
        )
        seconds = time.perf_counter() - started
    load = os.getloadavg()
    if finished.returncode != 0:
        print(finished.stdout[-2000:], finished.stderr[-2000:], sep="\n")
        print(f"plumbline demo failed (exit {finished.returncode})")
        return 1
    verdict = "ok" if seconds <= TARGET_SECONDS else "MISSED"
    print(
        f"plumbline demo: {seconds:.1f} s (target ≤ {TARGET_SECONDS:.0f} s) {verdict}; "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores"
    )
    return 0 if seconds <= TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
