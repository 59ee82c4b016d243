"""A/B cost: each arm's cost per task and per success, the paired difference, their intervals
(tasks, then repeats resampled), the source of the tokens, and `--prices`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from click.testing import CliRunner

from plumbline.cli.main import main
from plumbline.compare.analysis import compare_runs
from plumbline.compare.cost import cluster_sums
from plumbline.compare.result import AS_RECORDED, CompareSettings
from plumbline.records.run_record import RunRecordTable

Load = Callable[[list[dict[str, Any]]], RunRecordTable]
FAST = CompareSettings(n_resamples=2000)


def _records(run: Any, *, tasks: int = 12, repeats: int = 5) -> list[dict[str, Any]]:
    rng = np.random.default_rng(3)
    records = []
    for task in range(tasks):
        for repeat in range(repeats):
            for arm, scale, rate in (("T", 0.05, 0.8), ("C", 0.2, 0.5)):
                records.append(
                    run(
                        f"task-{task:02d}",
                        arm,
                        repeat,
                        success=bool(rng.random() < rate),
                        total_cost_usd=float(scale * rng.lognormal(0, 0.5)),
                    )
                )
    return records


def test_arm_costs_are_the_mean_and_the_cost_of_each_success(load: Load, run: Any) -> None:
    records = _records(run)
    report = compare_runs(load(records), treatments=["T"], control="C", settings=FAST)
    cost = report.cost
    assert cost is not None and report.primary.cost == cost
    for arm, figures in (("T", cost.treatment), ("C", cost.control)):
        mine = [r for r in records if r["arm"] == arm]
        spent = sum(r["total_cost_usd"] for r in mine)
        solved = sum(r["success"] for r in mine)
        assert figures.per_task_usd.estimate is not None
        assert abs(figures.per_task_usd.estimate - spent / len(mine)) < 1e-12
        assert figures.per_success_usd.estimate is not None
        assert abs(figures.per_success_usd.estimate - spent / solved) < 1e-12
        for figure in (figures.per_task_usd, figures.per_success_usd):
            interval = figure.interval
            assert interval is not None and interval.low is not None and interval.high is not None
            assert interval.low < figure.estimate < interval.high  # type: ignore[operator]
            assert "tasks, then repeats" in interval.method
        assert figures.source == "unrecorded" and figures.price_table == AS_RECORDED
    difference = cost.difference
    assert difference.pairs == len(records) // 2
    t = cost.treatment.per_task_usd.estimate
    c = cost.control.per_task_usd.estimate
    assert t is not None and c is not None
    assert abs(difference.per_task_usd.estimate - (t - c)) < 1e-12  # type: ignore[operator]
    high = difference.per_task_usd.interval.high  # type: ignore[union-attr]
    assert high is not None and high < 0  # the treatment is 4 times cheaper
    assert (
        report.cost
        == compare_runs(load(records), treatments=["T"], control="C", settings=FAST).cost
    )


def test_intervals_resample_tasks_so_task_effects_widen_them(load: Load, run: Any) -> None:
    """Tasks that differ in cost make the interval wider than repeats alone would."""
    rng = np.random.default_rng(5)
    alike, unlike = [], []
    for task in range(10):
        level = float(rng.lognormal(0, 1.5))
        for repeat in range(6):
            noise = float(rng.lognormal(0, 0.1))
            for arm in ("T", "C"):
                alike.append(run(f"t{task}", arm, repeat, total_cost_usd=noise))
                unlike.append(run(f"t{task}", arm, repeat, total_cost_usd=noise * level))

    def width(records: list[dict[str, Any]]) -> float:
        report = compare_runs(load(records), treatments=["T"], control="C", settings=FAST)
        interval = report.cost.treatment.per_task_usd.interval  # type: ignore[union-attr]
        assert interval is not None and interval.low is not None and interval.high is not None
        return (interval.high - interval.low) / report.cost.treatment.per_task_usd.estimate  # type: ignore[union-attr,operator]

    assert width(unlike) > 5 * width(alike)


def test_cluster_sums_draw_tasks_then_rows() -> None:
    columns = np.array([[1.0], [1.0], [10.0], [10.0]])
    tasks = np.array([0, 0, 1, 1])
    sums = cluster_sums(columns, tasks, 4000, np.random.default_rng(0))
    # every resample draws 2 tasks of 2 rows: the sums are 4, 22 or 40 only
    assert set(np.unique(sums[:, 0])) <= {4.0, 22.0, 40.0}
    assert abs(float(np.mean(sums[:, 0])) - 22.0) < 0.5


def test_no_success_gives_no_cost_per_success_and_says_why(load: Load, run: Any) -> None:
    records = [
        run(f"t{task}", arm, repeat, success=arm == "T")
        for task in range(3)
        for repeat in range(5)
        for arm in ("T", "C")
    ]
    report = compare_runs(load(records), treatments=["T"], control="C", settings=FAST)
    assert report.cost is not None
    assert report.cost.control.per_success_usd.estimate is None
    assert "no run with a cost succeeded" in (report.cost.control.per_success_usd.note or "")
    assert report.cost.difference.per_success_usd.estimate is None


def test_an_arm_with_mixed_usage_sources_says_so(load: Load, run: Any) -> None:
    records = []
    for task in range(3):
        for repeat in range(5):
            source = "metered" if repeat % 2 else "agent-reported"
            records.append(run(f"t{task}", "T", repeat, usage_source=source))
            records.append(run(f"t{task}", "C", repeat, usage_source="metered"))
    report = compare_runs(load(records), treatments=["T"], control="C", settings=FAST)
    assert report.cost is not None
    assert report.cost.treatment.source == "mixed (agent-reported, metered)"
    assert report.cost.control.source == "metered"
    assert any(
        w.startswith("T: its cost comes from mixed sources (agent-reported, metered)")
        for w in report.warnings
    )


def _usage(model: str, tokens_in: int, tokens_out: int) -> list[dict[str, Any]]:
    return [
        {
            "model": model,
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
            "total_cost_usd": 99.0,
        }
    ]


def test_prices_reprice_every_run_from_its_per_model_usage(tmp_path: Path, run: Any) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text(
        'version = "test-1"\n[models."acme/m"]\ninput = 2.0\noutput = 10.0\n'
        'source = "a test"\ndate = "2025-01-01"\n'
    )
    records = []
    for task in range(3):
        for repeat in range(5):
            records.append(run(f"t{task}", "T", repeat, model_usage=_usage("acme/m", 1000, 100)))
            records.append(run(f"t{task}", "C", repeat, model_usage=_usage("acme/m", 2000, 100)))
    records.append(run("t9", "C", 0, model_usage=_usage("acme/unknown", 10, 10)))
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = CliRunner().invoke(
        main,
        [
            "compare",
            str(path),
            "-t",
            "T",
            "-c",
            "C",
            "--resamples",
            "500",
            "--prices",
            str(prices),
            "--json",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    cost = document["cost"]
    # 1000 × $2/M + 100 × $10/M = $0.003; the records' own $99 is not used
    assert abs(cost["treatment"]["per_task_usd"]["estimate"] - 0.003) < 1e-12
    assert abs(cost["control"]["per_task_usd"]["estimate"] - 0.005) < 1e-12
    assert cost["treatment"]["price_table"] == "test-1"
    assert document["settings"]["price_table"] == "test-1"
    assert abs(document["arm_summaries"]["T"]["avg_cost_usd"] - 0.003) < 1e-12
    assert any(
        "--prices: 1 runs have no cost: no price for model acme/unknown" in w
        for w in document["warnings"]
    )


def test_a_bad_price_file_is_a_one_line_usage_error(tmp_path: Path, example_path: Path) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text(
        'version = "x"\n[models."a/b"]\ninput = -1\noutput = 1\nsource = "s"\ndate = "2025-01-01"\n'
    )
    result = CliRunner().invoke(
        main,
        [
            "compare",
            str(example_path),
            "-t",
            "with_skelly",
            "-c",
            "without_skelly",
            "--prices",
            str(prices),
        ],
    )
    assert result.exit_code == 2
    assert f"{prices}:3: models.a/b.input" in result.output
    assert "Traceback" not in result.output


def test_terminal_markdown_and_page_show_the_cost_table(example_path: Path, tmp_path: Path) -> None:
    markdown = tmp_path / "report.md"
    result = CliRunner().invoke(
        main,
        [
            "compare",
            str(example_path),
            "-t",
            "with_skelly",
            "-c",
            "without_skelly",
            "--resamples",
            "500",
            "--markdown",
            str(markdown),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "Cost (95% intervals)" in result.output and "cost per success" in result.output
    text = markdown.read_text()
    assert "### Cost (95% intervals)" in text
    assert "| cost per task | $0.2400 " in text
    assert "costs as the records give them" in text
    from plumbline.compare.result import CompareReport
    from plumbline.views.compare_page import compare_view

    document = json.loads(
        CliRunner()
        .invoke(
            main,
            [
                "compare",
                str(example_path),
                "-t",
                "with_skelly",
                "-c",
                "without_skelly",
                "--resamples",
                "500",
                "--json",
            ],
        )
        .output
    )
    view = compare_view(CompareReport.model_validate(document))
    assert view.comparisons[0].cost_rows[0][0] == "cost per task"
    assert pl.Series(view.comparisons[0].cost_header).to_list()[-1] == "T − C (paired)"
