"""Coverage, width and bias of the PPI interval (`plumbline.stats.ppi_mean`) against PPI++'s CLT
interval and Wilson on the human labels alone, in one run; exit 1 when a target fails.

Cells: judges useless, 15% flips, lenient (accepts 40% of failures), continuous (ρ ≈ 0.9);
n ∈ {20, 50, 200} labels; 1,000 judged; θ ∈ {0.1, 0.5, 0.9}. Targets (issue 29): coverage ≥ 93.5%
in every cell, bounds in [0, 1], |bias| ≤ 0.01 for n ≥ 50; at n ≥ 50 the mean width ≥ 22%
below Wilson where ρ ≈ 0.7 (flips at θ = 0.5), ≥ 38% below where ρ ≈ 0.9 (continuous), and
within 5% of Wilson for the useless judge. Paired differences of two models (same questions,
correlated answers) are printed too, held to a 92% floor. See `validation.ppi_coverage`.

    .venv/bin/python benchmarks/bench_ppi.py [--datasets 20000] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # validation/: the repo root
from validation.ppi_coverage import (
    DATASETS,
    difference_table,
    run_cells,
    run_difference_cells,
    table,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=DATASETS, help="datasets per cell")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.datasets < 4_000:
        parser.error("--datasets: the targets are stated for at least 4,000 datasets per cell")
    started = time.perf_counter()
    cells = run_cells(datasets=args.datasets, seed=args.seed)
    print(table(cells))
    differences = run_difference_cells(datasets=args.datasets, seed=args.seed)
    print("\nPaired differences (two models, same questions; floor 92%):\n")
    print(difference_table(differences))
    failures = [failure for cell in cells for failure in cell.failures()]
    failures += [failure for cell in differences for failure in cell.failures()]
    worst = min(cells, key=lambda cell: cell.coverage)
    worst_clt = min(cells, key=lambda cell: cell.clt_coverage)
    print(
        f"\n{len(cells)} cells × {args.datasets} datasets in {time.perf_counter() - started:.0f}s; "
        f"lowest coverage {worst.coverage:.1%} ({worst.judge} θ={worst.rate} n={worst.labels}), "
        f"PPI++ CLT lowest {worst_clt.clt_coverage:.1%}"
    )
    for failure in failures:
        print(f"FAIL {failure}")
    print("all targets met" if not failures else f"{len(failures)} target(s) missed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
