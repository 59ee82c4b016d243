"""Cost per trial in the regression check (`reliability NEW --baseline OLD --margin cost=...` or
`--test-metric cost`): asked for, it is measured, tested with the other metrics under one 5%,
rendered everywhere they are; not asked for, nothing changes; unpriced, a clear error.

Simulated runs come from `benchmarks/bench_regression_cost.py` (the figures in
docs/statistics.md); the end-to-end test probes a real local HTTP server and runs the CLI.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from click.testing import CliRunner
from tests.probe.helpers import FAKE_KEY
from tests.support.openai_server import Latency, ModelProfile, OpenAIServer

from plumbline.cli.reliability import reliability
from plumbline.reliability.analysis import analyze
from plumbline.reliability.embeddings import Embedder
from plumbline.reliability.regression import COST, CostPrices, compare_to_baseline
from plumbline.reliability.result import METRICS

pytestmark = pytest.mark.slow


def _benchmark() -> ModuleType:
    path = Path(__file__).parents[2] / "benchmarks" / "bench_regression_cost.py"
    spec = importlib.util.spec_from_file_location("bench_regression_cost", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return _benchmark()


def _cost_per_trial(records: list, price: tuple[float, float]) -> float:
    """Mean over prompts of each prompt's mean trial cost, by hand."""
    by_prompt: dict[str, list[float]] = defaultdict(list)
    for r in records:
        if r.ok and r.input_tokens is not None:
            by_prompt[r.prompt_id].append(
                (r.input_tokens * price[0] + r.output_tokens * price[1]) / 1e6
            )
    return float(np.mean([np.mean(v) for v in by_prompt.values()]))


def test_cost_joins_the_family_and_a_real_change_is_found(bench: ModuleType) -> None:
    old, new, embed = bench.priced_pair(8, 10, (5, 1), 1.0)
    same = bench.compare(old, new, embed)
    assert [e.metric for e in same.entries] == [*METRICS, COST]
    assert same.level == pytest.approx(1 - 0.05 / 7)
    assert same.tested_metrics == [*METRICS, COST] and same.margins[COST] == 0.10
    assert "Bonferroni over the 7 metrics" in same.multiplicity
    cost = same.entries[-1]
    assert cost.baseline == pytest.approx(_cost_per_trial(old, (1.0, 4.0)), rel=1e-12)
    assert cost.current == pytest.approx(_cost_per_trial(new, (1.0, 4.0)), rel=1e-12)
    assert cost.margin == pytest.approx(0.10 * cost.baseline)  # 10% of the baseline, in USD
    assert cost.test is not None and cost.test.metrics_tested == 7
    assert cost.verdict != "regressed" and cost.worse_when == "higher"

    old, new, embed = bench.priced_pair(20, 10, (5, 2), 2.0)
    costlier = bench.compare(old, new, embed)
    cost = costlier.entries[-1]
    assert cost.verdict == "regressed", cost
    assert cost.test is not None and cost.test.p_worse_adjusted <= 0.05
    interval = cost.difference.interval
    assert interval is not None and interval.low is not None and interval.low > 0
    assert interval.level == pytest.approx(1 - 0.05 / 7) and interval.coverage == "approximate"
    assert "REGRESSED" in costlier.pairs[0].summary and "cost" in costlier.pairs[0].summary


def test_without_cost_asked_prices_change_nothing(bench: ModuleType) -> None:
    old, new, embed = bench.priced_pair(6, 5, (6, 1), 1.0)
    current, baseline = analyze(new, embed), analyze(old, embed)
    plain = compare_to_baseline(baseline, old, current, new, embed, resamples=300)
    priced = compare_to_baseline(
        baseline, old, current, new, embed, resamples=300, prices=CostPrices(bench_prices(bench))
    )
    assert priced.model_dump(mode="json") == plain.model_dump(mode="json")
    assert [e.metric for e in plain.entries] == list(METRICS)
    assert plain.level == pytest.approx(1 - 0.05 / 6) and COST not in plain.margins
    # --test-metric cost alone: cost is the whole family, the six are measured only
    chosen = compare_to_baseline(
        baseline,
        old,
        current,
        new,
        embed,
        tested=(COST,),
        resamples=300,
        prices=CostPrices(bench_prices(bench)),
    )
    assert chosen.tested_metrics == [COST]
    assert all(e.test is None for e in chosen.entries if e.metric != COST)


def bench_prices(bench: ModuleType) -> dict:
    return {bench.MIXED.name: bench.PRICE}


def test_an_unpriced_model_is_a_clear_error_never_a_zero(bench: ModuleType) -> None:
    old, new, embed = bench.priced_pair(6, 5, (7, 1), 1.0)
    current, baseline = analyze(new, embed), analyze(old, embed)
    with pytest.raises(ValueError, match=r"'sim/model' cannot be priced: no price: give --price"):
        compare_to_baseline(baseline, old, current, new, embed, margins={COST: 0.2})
    untokened = [r.model_copy(update={"input_tokens": None, "output_tokens": None}) for r in old]
    with pytest.raises(ValueError, match="no successful trial reports token counts"):
        compare_to_baseline(
            baseline,
            untokened,
            current,
            new,
            embed,
            tested=(COST,),
            prices=CostPrices(bench_prices(bench)),
        )


def test_the_quick_simulation_holds_the_level_and_finds_the_cost_change(bench: ModuleType) -> None:
    null = bench.run_cell("no change", 1.0, 8, 10, runs=12, seed=3)
    # ≤ 5% expected over the seven metrics: 3 or more of 12 has a chance of about 2%
    assert null.regressed_any <= 2 and null.cost_intervals == 12
    costlier = bench.run_cell("cost +100%", 2.0, 20, 10, runs=4, seed=3)
    assert costlier.cost_regressed >= 3  # every one of 60 in the full run (docs/statistics.md)


def _write(records: list, path: Path) -> Path:
    path.write_text("".join(r.model_dump_json() + "\n" for r in records))
    return path


def test_the_cli_computes_what_the_benchmark_measures(bench: ModuleType, tmp_path: Path) -> None:
    old, new, _ = bench.priced_pair(5, 4, (8, 1), 1.0)
    old_path, new_path = _write(old, tmp_path / "old.jsonl"), _write(new, tmp_path / "new.jsonl")
    result = CliRunner().invoke(
        reliability,
        [
            *(str(new_path), "--baseline", str(old_path), "--margin", "cost=0.1"),
            *("--price", bench.PRICE_OPTION, "--json", "-"),
        ],
    )
    assert result.exit_code == 0, result.output
    from_cli = json.loads(result.stdout)["baseline_comparison"]
    from_api = bench.compare(old, new, Embedder(bench.CONFIG.embedding_model_name))
    assert from_cli == from_api.model_dump(mode="json")


# --- end to end: a real probe of a real local HTTP server, then the CLI -------------------------

SHORT = "Caching keeps answers."
LONG = " ".join(["Caching keeps the results of slow work so repeated requests are fast."] * 8)
PROBE = """
import asyncio, sys
from plumbline.probe.runner import run_probe
from plumbline.probe.settings import ProbeSettings, Prompt

settings = ProbeSettings(
    models=("openai-api/local/old", "openai-api/local/new"),
    prompts=tuple(Prompt(f"p{i}", f"Explain caching, take {i}.") for i in range(8)),
    trials=4,
    concurrency=8,
    timeout=8,
    stream=True,
)
summary = asyncio.run(run_probe(settings, sys.argv[1]))
print(summary.completed)
"""
PRICES = """version = "test-regression-cost"
[models."openai-api/local/old"]
input = 1.0
output = 2.0
source = "a test"
date = "2025-01-01"
[models."openai-api/local/new"]
input = 1.0
output = 2.0
source = "a test"
date = "2025-01-01"
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """The old model's trials (short answers) and the new one's (long answers: more output
    tokens in the provider's usage), probed from a real local server."""
    profiles = {
        "old": ModelProfile(latency=Latency("normal", 0.02, 0.005), responses=[SHORT]),
        "new": ModelProfile(latency=Latency("normal", 0.02, 0.005), responses=[LONG]),
    }
    folder = tmp_path_factory.mktemp("cost-runs")
    journal = folder / "trials.jsonl"
    with OpenAIServer(profiles, seed=3) as server:
        env = {**os.environ, "LOCAL_BASE_URL": server.base_url, "LOCAL_API_KEY": FAKE_KEY}
        done = subprocess.run(
            [sys.executable, "-c", PROBE, str(journal)],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = journal.read_text().splitlines()
    old = [line for line in lines if '"openai-api/local/old"' in line]
    new = [line for line in lines if '"openai-api/local/new"' in line]
    assert len(old) == len(new) == 32
    (folder / "old.jsonl").write_text("\n".join(old) + "\n")
    (folder / "new.jsonl").write_text("\n".join(new) + "\n")
    yield folder / "old.jsonl", folder / "new.jsonl"


@pytest.mark.xdist_group("regression_cost_runs")  # one probed `runs` for both
def test_the_cli_finds_a_probed_cost_regression_in_every_output(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    old, new = runs
    prices = tmp_path / "prices.toml"
    prices.write_text(PRICES)
    markdown, site = tmp_path / "report.md", tmp_path / "site"
    result = CliRunner().invoke(
        reliability,
        [
            *(str(new), "--baseline", str(old), "--prices", str(prices), "--margin", "cost=0.2"),
            *("--markdown", str(markdown), "--html", str(site), "--json", str(tmp_path / "r.json")),
            *("--pair", "openai-api/local/old=openai-api/local/new", "--fail-on-regression"),
        ],
        terminal_width=200,
    )
    assert result.exit_code == 1, result.output  # regressed
    document = json.loads((tmp_path / "r.json").read_text())["baseline_comparison"]
    (cost,) = [e for e in document["entries"] if e["metric"] == COST]
    assert cost["verdict"] == "regressed" and cost["label"] == "cost per trial (USD)"
    assert cost["current"] > 5 * cost["baseline"] > 0
    assert document["margins"][COST] == 0.2 and cost["margin"] == pytest.approx(
        0.2 * cost["baseline"]
    )
    row = next(line for line in markdown.read_text().splitlines() if "| cost |" in line)
    assert "regressed" in row and "$" in row and "all six and cost" in markdown.read_text()
    assert "cost" in result.output and "REGRESSED" in result.output
    page = (site / "baseline.html").read_text() if (site / "baseline.html").exists() else ""
    pages = page or "".join(p.read_text() for p in site.rglob("baseline.html"))
    assert "cost per trial" in pages or ">cost<" in pages


@pytest.mark.xdist_group("regression_cost_runs")  # one probed `runs` for both
def test_the_cli_refuses_cost_without_a_price_in_one_line(runs: tuple[Path, Path]) -> None:
    old, new = runs
    result = CliRunner().invoke(
        reliability,
        [
            *(str(new), "--baseline", str(old), "--test-metric", "cost"),
            *("--pair", "openai-api/local/old=openai-api/local/new"),
        ],
    )
    assert result.exit_code == 2, result.output
    assert "cannot be priced: no price: give --price" in result.output
    assert "Traceback" not in result.output
    # --price may name the baseline's model (it prices cost's change only), not a stranger
    priced = [
        *(str(new), "--baseline", str(old), "--test-metric", "cost", "--json", "-"),
        *("--price", "openai-api/local/old=1:2", "--price", "openai-api/local/new=1:2"),
    ]
    result = CliRunner().invoke(reliability, priced)
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    (cost,) = [e for e in document["baseline_comparison"]["entries"] if e["metric"] == COST]
    assert cost["verdict"] == "regressed"
    assert not any("without trials" in w["message"] for w in document["warnings"])
    stranger = CliRunner().invoke(reliability, [*priced, "--price", "x/y=1:1"])
    assert stranger.exit_code == 2 and "no trial records of 'x/y'" in stranger.output
