"""Cost on the leaderboard, from real Inspect logs (mockllm with usage): tokens equal Inspect's,
costs follow the price table, an unpriced model has null costs and a note, and the front."""

from __future__ import annotations

import json
import math
import zipfile
from pathlib import Path

import pytest
from tests.support.cost_logs import N, make_cost_logs, usage

from plumbline.core.prices import load_prices
from plumbline.leaderboard import build_leaderboard
from plumbline.views.leaderboard import csv_rows, render_markdown

# one xdist group: the module's tests read one set of Inspect runs (`scenario`), made once
pytestmark = pytest.mark.xdist_group("leaderboard_cost")


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    return make_cost_logs(tmp_path_factory.mktemp("cost"))


def _log_usage(logs: Path) -> dict[str, dict[str, int]]:
    """Each model's usage as the logs state it (the header's `stats.model_usage`)."""
    found: dict[str, dict[str, int]] = {}
    for log in logs.glob("*.eval"):
        header = json.loads(zipfile.ZipFile(log).read("header.json"))
        for model, stated in header["stats"]["model_usage"].items():
            found[model] = stated
    return found


def test_tokens_equal_inspect_samples_df_and_the_log_model_usage(
    scenario: tuple[Path, Path, Path],
) -> None:
    from inspect_ai.analysis import samples_df

    logs, suite, prices = scenario
    board = build_leaderboard(logs, suite, prices=load_prices(prices))
    frame = samples_df(str(logs))
    header_usage = _log_usage(logs)
    for row in board.document().models:
        assert row.cost is not None
        tokens = row.cost.tokens
        usages = [
            json.loads(text) if isinstance(text, str) else text for text in frame["model_usage"]
        ]
        mine = [usage[row.model] for usage in usages if row.model in usage]
        assert tokens["input"] == sum(u["input_tokens"] for u in mine)
        assert tokens["output"] == sum(u["output_tokens"] for u in mine)
        assert tokens["cache_read"] == sum(u["input_tokens_cache_read"] for u in mine)
        assert tokens["reasoning"] == sum(u["reasoning_tokens"] for u in mine)
        log = header_usage[row.model]
        assert tokens["input"] == log["input_tokens"]
        assert tokens["output"] == log["output_tokens"]
        assert tokens["input"] + tokens["output"] == sum(u["total_tokens"] for u in mine)


def test_costs_follow_the_price_table_and_an_unpriced_model_is_null(
    scenario: tuple[Path, Path, Path],
) -> None:
    logs, suite, prices = scenario
    document = build_leaderboard(logs, suite, prices=load_prices(prices)).document()
    rows = {row.model: row for row in document.models}
    cheap = rows["mockllm/cheap"].cost
    assert cheap is not None
    per_sample = [
        (u["input_tokens"] * 1.0 + u["output_tokens"] * 2.0 + u["input_tokens_cache_read"] * 0.5)
        / 1e6
        for u in (usage(0, i) for i in range(N))
    ]
    assert cheap.total_usd == pytest.approx(sum(per_sample))
    estimate = cheap.per_sample_usd
    assert estimate.estimate == pytest.approx(sum(per_sample) / N)
    assert estimate.low is not None and estimate.high is not None
    assert estimate.low < estimate.estimate < estimate.high
    assert cheap.provenance == "provider-reported"
    assert cheap.price_table == "test-prices-1"
    free = rows["mockllm/free"].cost
    assert free is not None
    assert free.per_sample_usd.estimate is None and free.total_usd is None
    assert free.note is not None and "mockllm/free" in free.note
    assert free.tokens["input"] > 0
    front = {entry.model: entry for entry in document.pareto}
    assert set(front) == {"mockllm/cheap", "mockllm/dear"}
    # cheap is cheapest, dear scores best: both on the front of the estimates
    assert front["mockllm/cheap"].on_front and front["mockllm/dear"].on_front
    assert all(0.0 <= e.probability_on_front <= 1.0 for e in front.values())
    data = document.to_json()
    cheap_json = next(m for m in data["models"] if m["model"] == "mockllm/cheap")["cost"]
    assert set(cheap_json["per_sample_usd"]) >= {"estimate", "low", "high"}
    assert data["pareto"][0].keys() >= {"model", "probability_on_front"}


def test_markdown_and_csv_carry_the_cost_columns(scenario: tuple[Path, Path, Path]) -> None:
    logs, suite, prices = scenario
    document = build_leaderboard(logs, suite, prices=load_prices(prices)).document()
    text = render_markdown(document)
    assert "cost/sample" in text and "## Cost" in text and "test-prices-1" in text
    rows = {row["model"]: row for row in csv_rows(document)}
    assert rows["mockllm/free"]["cost.per_sample_usd"] is None
    assert rows["mockllm/free"]["cost.note"]
    assert math.isclose(
        rows["mockllm/cheap"]["cost.total_usd"],
        document.models[[m.model for m in document.models].index("mockllm/cheap")].cost.total_usd,  # type: ignore[union-attr]
    )
    assert rows["mockllm/dear"]["cost.probability_on_front"] is not None


def test_without_a_price_table_the_document_has_no_cost(
    scenario: tuple[Path, Path, Path],
) -> None:
    logs, suite, _ = scenario
    document = build_leaderboard(logs, suite).document()
    assert all(row.cost is None for row in document.models)
    assert document.pareto == []
    assert "cost" not in document.to_json()["models"][0]


def test_cli_prices_option_prices_the_board_and_rejects_a_bad_file(
    scenario: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from plumbline.cli.main import main

    logs, suite, prices = scenario
    output = tmp_path / "board.json"
    args = ["leaderboard", str(logs), "--suite", str(suite), "-o", str(output)]
    result = CliRunner().invoke(main, [*args, "--prices", str(prices)])
    assert result.exit_code == 0, result.output
    document = json.loads(output.read_text())
    rows = {row["model"]: row for row in document["models"]}
    assert rows["mockllm/cheap"]["cost"]["price_table"] == "test-prices-1"
    assert rows["mockllm/free"]["cost"]["per_sample_usd"]["estimate"] is None
    assert {entry["model"] for entry in document["pareto"]} == {"mockllm/cheap", "mockllm/dear"}
    # without --prices the shipped table prices: none of these models is in it, so no cost
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    shipped = json.loads(output.read_text())
    assert all(row["cost"]["total_usd"] is None for row in shipped["models"])
    assert all("no price for model" in row["cost"]["note"] for row in shipped["models"])
    bad = tmp_path / "bad.toml"
    bad.write_text('version = "v"\n[models."m/a"]\nsource = "s"\ndate = "2026-01-01"\ninput = -1\n')
    result = CliRunner().invoke(main, [*args, "--prices", str(bad)])
    assert result.exit_code == 2
    assert f"{bad}:5: models.m/a.input: Input should be greater than or equal to 0" in result.output
    assert "Traceback" not in result.output


def test_cost_metrics_are_stored_like_any_metric(scenario: tuple[Path, Path, Path]) -> None:
    from plumbline.results.leaderboard import leaderboard_metrics

    logs, suite, prices = scenario
    document = build_leaderboard(logs, suite, prices=load_prices(prices)).document()
    rows = {(row.subject, row.metric): row for row in leaderboard_metrics(document)}
    cheap = next(m for m in document.models if m.model == "mockllm/cheap").cost
    assert cheap is not None
    stored = rows[("mockllm/cheap", "cost.per_sample_usd")]
    assert stored.estimate == cheap.per_sample_usd.estimate
    assert (stored.low, stored.high) == (cheap.per_sample_usd.low, cheap.per_sample_usd.high)
    assert stored.n == N
    assert rows[("mockllm/cheap", "cost.total_usd")].estimate == cheap.total_usd
    # an unpriced model stores no cost metric (never $0)
    assert ("mockllm/free", "cost.per_sample_usd") not in rows
