"""The small seeded run of benchmarks/bench_reliability_regression.py, and the CLI-equals-API check
that makes the benchmark's figures the command's.

The full grid (300 pairs per cell) is in docs/statistics.md; here, 12 pairs per cell: identical
models on prompts from deterministic to erratic with heavy-tailed latencies are rarely called
regressed, and answers made erratic are caught as an agreement regression.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner

from plumbline.cli.reliability import reliability
from plumbline.reliability.embeddings import Embedder

pytestmark = pytest.mark.slow


def _benchmark() -> ModuleType:
    path = Path(__file__).parents[2] / "benchmarks" / "bench_reliability_regression.py"
    spec = importlib.util.spec_from_file_location("bench_reliability_regression", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_quick_grid_holds_its_level_and_finds_erratic_answers() -> None:
    bench = _benchmark()
    cells = bench.run_grid(quick=True, runs=bench.QUICK_RUNS, seed=3)
    null = [c for c in cells if c.scenario.startswith("no change")]
    power = [c for c in cells if not c.scenario.startswith("no change")]
    assert [(c.prompts, c.trials) for c in null] == [(5, 3), (8, 10)]
    # ≤ 5% expected: 3 or more of 24 has a chance of about 3% at a true rate of 5%
    assert sum(c.regressed_any for c in null) <= 2
    (erratic,) = power
    # about 70% in the full run (docs/statistics.md); 4 or fewer of 12 has a chance under 1%
    assert erratic.hits >= 5 and set(erratic.regressed_by_metric) >= {"agreement"}
    table = bench.table(cells)
    assert "| no change, mixed prompts, σ 1.5 |" in table and "8 × 10" in table


def _write(records: list, path: Path) -> Path:
    path.write_text("".join(r.model_dump_json() + "\n" for r in records))
    return path


def test_the_cli_computes_what_the_benchmark_measures(tmp_path: Path) -> None:
    """`plumbline reliability NEW --baseline OLD --json -` gives the comparison the benchmark's
    `compare` computes from the same records (with the CLI's embedding model)."""
    bench = _benchmark()
    scenario = bench.Scenario("erratic", bench.MIXED, replace(bench.MIXED, erratic=0.6))
    old, new, _ = bench.simulated_pair(scenario, 5, 4, (1, 2, 3))
    old_path, new_path = _write(old, tmp_path / "old.jsonl"), _write(new, tmp_path / "new.jsonl")
    result = CliRunner().invoke(
        reliability, [str(new_path), "--baseline", str(old_path), "--json", "-"]
    )
    assert result.exit_code == 0, result.output
    from_cli = json.loads(result.stdout)["baseline_comparison"]
    from_api = bench.compare(old, new, Embedder(bench.CONFIG.embedding_model_name))
    assert from_cli == from_api.model_dump(mode="json")
    assert {e["metric"] for e in from_cli["entries"]} == set(bench.METRICS)
    assert all(e["test"] is not None for e in from_cli["entries"])
