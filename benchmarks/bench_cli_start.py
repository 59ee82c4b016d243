"""How fast the command line starts: `plumbline --help` and every `plumbline CMD --help`
against the baseline `python -c "import click, rich"`, in one run (issue 17: at most 1.5x).

Each command runs N times in a fresh interpreter (a subprocess, as a user types it); the
median wall time is reported with its ratio to the baseline's median. The runs are
interleaved (baseline, then each command, N rounds), so a busy machine slows all alike.

    .venv/bin/python benchmarks/bench_cli_start.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

BASELINE = "import click, rich"
TARGET = 1.5


def plumbline_argv() -> list[str]:
    """The installed `plumbline` script beside this interpreter, as users run it (else
    `python -m plumbline`)."""
    script = Path(sys.executable).with_name("plumbline")
    if script.exists():
        return [str(script)]
    found = shutil.which("plumbline")
    return [found] if found else [sys.executable, "-m", "plumbline"]


def command_paths() -> list[tuple[str, ...]]:
    """`()`, every command, and every subcommand of a group (imports them all: done here, in
    the benchmark's own process, never in the timed ones)."""
    import click

    from plumbline.cli.main import COMMANDS, main

    paths: list[tuple[str, ...]] = [()]
    ctx = click.Context(main)
    for name in sorted(COMMANDS):
        paths.append((name,))
        command = main.get_command(ctx, name)
        if isinstance(command, click.Group):
            paths.extend((name, sub) for sub in sorted(command.commands))
    return paths


#: As a user runs it: bytecode cached (the warm-up run writes it, as a first run would).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def time_once(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=ENV)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="Runs per command (median).")
    args = parser.parse_args()
    script = plumbline_argv()
    cases: dict[str, list[str]] = {f'python -c "{BASELINE}"': [sys.executable, "-c", BASELINE]}
    for path in command_paths():
        cases[" ".join(["plumbline", *path, "--help"])] = [*script, *path, "--help"]
    times: dict[str, list[float]] = {label: [] for label in cases}
    for argv in cases.values():  # warm the file cache and write bytecode once
        time_once(argv)
    for _ in range(args.runs):
        for label, argv in cases.items():
            times[label].append(time_once(argv))
    medians = {label: statistics.median(values) for label, values in times.items()}
    fastest = {label: min(values) for label, values in times.items()}
    first = next(iter(cases))
    width = max(map(len, cases))
    print(
        f"{args.runs} runs each; median (and fastest run) with their ratio to the baseline's; "
        f"target: at most {TARGET}x"
    )
    worst = 0.0
    for label in cases:
        ratio = medians[label] / medians[first]
        worst = max(worst, ratio)
        print(
            f"{label:<{width}}  {medians[label] * 1000:7.1f} ms  {ratio:5.2f}x   "
            f"({fastest[label] * 1000:6.1f} ms  {fastest[label] / fastest[first]:5.2f}x)"
        )
    verdict = "within" if worst <= TARGET else "over"
    print(f"slowest median: {worst:.2f}x the baseline ({verdict} the target)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
