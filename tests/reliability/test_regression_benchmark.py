"""A small, seeded run of benchmarks/bench_reliability_regression.py (the full run: 200 runs).

The same simulation (simulated records → `analyze` → `compare_to_baseline`) at 10 prompts × 10
trials: identical models are rarely called regressed, a 50% latency increase is, and so is a 0.2
drop in CERT consistency (found by the test of no change).
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.slow

RUNS = 12


def _benchmark() -> ModuleType:
    path = Path(__file__).parents[2] / "benchmarks" / "bench_reliability_regression.py"
    spec = importlib.util.spec_from_file_location("bench_reliability_regression", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_false_regressions_are_rare_and_a_slower_update_is_caught() -> None:
    bench = _benchmark()
    sizes = {"runs": RUNS, "prompts": 10, "trials": 10, "seed": 5}
    identical = bench.simulate("identical", bench.BASELINE, (), **sizes)
    # ≤ 5% expected: 2 of 12 would already be a 2% chance at a true rate of 5%
    assert identical.regressed_any <= 1
    slower = replace(bench.BASELINE, latency_median=1.5 * bench.BASELINE.latency_median)
    latency = bench.simulate("latency+50%", slower, ("latency_p50", "latency_p95"), **sizes)
    assert latency.regressed_target >= 10


def test_a_consistency_drop_of_0_2_is_caught() -> None:
    bench = _benchmark()
    sizes = {"runs": RUNS, "prompts": 10, "trials": 10, "seed": 5}
    collapsed = replace(bench.BASELINE, collapse=bench.COLLAPSE)
    drop = bench.simulate("consistency-drop", collapsed, ("consistency",), **sizes)
    # 85% in the full run: 8 of 12 or more has a 97% chance at that rate
    assert drop.regressed_target >= 8
