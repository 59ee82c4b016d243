"""The misspecification grid of the sequential A/B and the judge correction (issue 37): within-pair
correlations 0–0.8, tasks that differ with records grouped by task (compare's order, the harness's
order, and time order for reference), coverage at the stop away from 0, PPI at few labels and
hand-picked labels; every cell through the functions the commands call
(`validation.misspecification`). Prints the Markdown table of docs/statistics.md; exit 1 when a
claim fails.

    .venv/bin/python benchmarks/bench_misspecification.py [--replicates 2000] [--seed 37]
    .venv/bin/python benchmarks/bench_misspecification.py --quick   # 150 per cell, seconds
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # validation/: the repo root
from validation.misspecification import Cell, failures, run_grid, table

FULL = 2_000
QUICK = 150


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=FULL, help="datasets per cell")
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument(
        "--quick", action="store_true", help=f"{QUICK} datasets per cell (a smoke run)"
    )
    args = parser.parse_args()
    replicates = QUICK if args.quick else args.replicates
    if not args.quick and replicates < 1_000:
        parser.error("--replicates: the rates are stated for at least 1,000 datasets per cell")
    started = time.perf_counter()

    def progress(cell: Cell) -> None:
        print(
            f"{time.perf_counter() - started:7.1f}s {cell.group:13s} {cell.rate:8.4f} "
            f"{cell.order:22s} {cell.scenario}",
            file=sys.stderr,
            flush=True,
        )

    cells = run_grid(
        replicates, args.seed, bias_replicates=4_000 if args.quick else 20_000, progress=progress
    )
    print(table(cells))
    missed = failures(cells)
    print(
        f"\n{len(cells)} cells, {replicates:,} datasets per cell (PPI bias: "
        f"{4_000 if args.quick else 20_000:,}), seed {args.seed}, "
        f"{time.perf_counter() - started:.0f}s"
    )
    for cell in missed:
        print(f"FAIL {cell.group} {cell.scenario} ({cell.order}): {cell.rate} vs {cell.claim}")
    print("all claims hold" if not missed else f"{len(missed)} claim(s) missed")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
