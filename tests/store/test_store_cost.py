"""Cost metrics in the store (issue 48, item 5): a priced reliability report and a compare
report, made by running plumbline, store their cost figures as metric rows (estimate, interval,
n) that `history` lists and `history check` tracks like any other metric."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from tests.support.store_results import Documents

from plumbline.cli.main import main
from plumbline.records.trial_record import read_trial_records
from plumbline.results.compare import COST_METRICS as COMPARE_COST
from plumbline.results.reliability import COST_METRICS as RELIABILITY_COST
from plumbline.store.store import Query, Store

EXAMPLE = Path(__file__).parents[2] / "src/plumbline/examples/trials.jsonl"
STEADY = "openai-api/example/steady"


def invoke(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.stdout, result.stderr


def _priced_reliability(root: Path) -> Path:
    """The example's steady model, its trials spread over 12 prompts (enough for the cost's
    interval), priced with `--price`."""
    records = [r for r in read_trial_records([EXAMPLE]).records if r.model == STEADY]
    spread = [r.model_copy(update={"prompt_id": f"{r.prompt_id}-{r.trial % 4}"}) for r in records]
    trials = root / "trials.jsonl"
    trials.write_text("".join(r.model_dump_json() + "\n" for r in spread), encoding="utf-8")
    output = root / "reliability.json"
    code, _, stderr = invoke(
        ["reliability", str(trials), "--price", f"{STEADY}=1:2", "--json", str(output)]
    )
    assert code == 0, stderr
    return output


def test_reliability_cost_is_stored_and_tracked(store_url: str, tmp_path: Path) -> None:
    report = _priced_reliability(tmp_path)
    document = json.loads(report.read_text(encoding="utf-8"))
    [model] = document["models"]
    cost = model["cost"]
    code, _, stderr = invoke(["store", "add", str(report), "--store", store_url])
    assert code == 0, stderr
    with Store.open(store_url) as opened:
        [entry] = opened.query(Query())
    rows = {row.metric: row for row in entry.metrics}
    assert set(RELIABILITY_COST) <= set(rows)
    per_trial = rows["cost.per_trial_usd"]
    assert per_trial.subject == STEADY and per_trial.n == cost["prompts_priced"] == 12
    assert per_trial.estimate == cost["per_trial_usd"]
    assert (per_trial.low, per_trial.high) == (
        cost["per_trial_interval"]["low"],
        cost["per_trial_interval"]["high"],
    )
    low, estimate, high = per_trial.low, per_trial.estimate, per_trial.high
    assert low is not None and estimate is not None and high is not None
    assert low < estimate < high
    assert rows["cost.per_prompt_usd"].estimate == cost["per_prompt_usd"]
    code, stdout, _ = invoke(["history", "--store", store_url, "--json"])
    assert code == 0
    listed = json.loads(stdout)["results"][0]["metrics"]
    assert {"cost.per_trial_usd", "cost.per_prompt_usd"} <= {m["metric"] for m in listed}
    metric = ["--metric", "cost.per_trial_usd"]
    code, stdout, _ = invoke(["history", "check", "--store", store_url, *metric, "--json"])
    assert code == 0
    [series] = json.loads(stdout)["series"]
    assert series["model"] == STEADY and series["metric"] == "cost.per_trial_usd"
    assert [run["estimate"] for run in series["runs"]] == [cost["per_trial_usd"]]


def test_an_unpriced_reliability_report_stores_no_cost_rows(
    store_url: str, documents: Documents
) -> None:
    code, _, stderr = invoke(["store", "add", str(documents.reliability), "--store", store_url])
    assert code == 0, stderr
    with Store.open(store_url) as opened:
        [entry] = opened.query(Query())
    assert entry.metrics and not any(row.metric.startswith("cost.") for row in entry.metrics)


def test_compare_cost_is_stored_and_tracked(store_url: str, documents: Documents) -> None:
    report = documents.json("compare")
    [comparison] = report["comparisons"]
    cost = comparison["cost"]
    code, _, stderr = invoke(["store", "add", str(documents.compare), "--store", store_url])
    assert code == 0, stderr
    with Store.open(store_url) as opened:
        [entry] = opened.query(Query())
    rows = {row.metric: row for row in entry.metrics}
    assert set(COMPARE_COST) <= set(rows)
    for name, figure in (
        ("cost.treatment.per_task_usd", cost["treatment"]["per_task_usd"]),
        ("cost.control.per_success_usd", cost["control"]["per_success_usd"]),
        ("cost.per_task_delta_usd", cost["difference"]["per_task_usd"]),
    ):
        row = rows[name]
        assert row.subject == "with_skelly vs without_skelly"
        assert row.estimate == figure["estimate"] and row.n == figure["n"] > 0
        interval = figure["interval"]
        assert interval is not None and (row.low, row.high) == (interval["low"], interval["high"])
    code, stdout, _ = invoke(
        ["history", "check", "--store", store_url, "--metric", "cost.per_task_delta_usd", "--json"]
    )
    assert code == 0
    [series] = json.loads(stdout)["series"]
    assert series["runs"][0]["estimate"] == cost["difference"]["per_task_usd"]["estimate"]
