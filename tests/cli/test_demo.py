"""`plumbline demo` runs every step offline and writes every result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from plumbline.cli.demo import JUDGE_ITEMS, demo_steps, example_path
from plumbline.cli.main import main


def test_demo_steps_use_bundled_examples_that_exist(tmp_path: Path) -> None:
    for name in ("agent_runs.jsonl", "trials.jsonl"):
        assert example_path(name).is_file()
    commands = {step.args[0] for step in demo_steps(tmp_path)}
    assert {"run", "interval", "power", "compare", "reliability", "report"} <= commands


def test_demo_steps_record_each_result_and_end_with_its_history(tmp_path: Path) -> None:
    from plumbline.cli.storing import StoreOptions

    store = StoreOptions(url=str(tmp_path / "history.db"), labels=(("run", "1"),))
    steps = demo_steps(tmp_path, store)
    stored = [step.args[0] for step in steps if "--store" in step.args]
    # the run steps' leaderboards are not stored: the combined one holds every model once
    assert set(stored) == {"leaderboard", "compare", "reliability", "history"}
    assert all(
        step.args[-4:] == ("--store", store.url, "--label", "run=1")
        for step in steps
        if step.args[0] in {"leaderboard", "compare", "reliability"}
    )
    assert all("none" in step.args for step in steps if step.args[0] == "run")
    assert steps[-1].args == ("history", "--store", store.url, "--html", str(tmp_path / "site"))
    assert "--store" not in {arg for step in demo_steps(tmp_path) for arg in step.args}


def test_demo_prices_its_leaderboard_with_the_labelled_demo_price_file(tmp_path: Path) -> None:
    from plumbline.core.prices import TokenCounts, load_prices

    table = load_prices(example_path("demo_prices.toml"))
    assert "not real" in table.version
    for model in ("scripted/oracle", "scripted/weak", "plumbline/smollm2"):
        assert table.cost(model, TokenCounts(1000, 100)).usd is not None
    priced = [step for step in demo_steps(tmp_path) if step.args[0] in {"run", "leaderboard"}]
    assert priced
    assert all(
        step.args[-2:] == ("--prices", str(example_path("demo_prices.toml"))) for step in priced
    )


@dataclass(frozen=True)
class Demo:
    output: Path
    text: str


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    output = tmp_path_factory.mktemp("demo")
    result = CliRunner().invoke(main, ["demo", "-o", str(output)])
    assert result.exit_code == 0, result.output
    return Demo(output, result.output)


@pytest.mark.xdist_group("demo")  # one demo run (`demo`) for both
def test_demo_writes_every_result(demo: Demo) -> None:
    tmp_path = demo.output
    result = demo
    assert "0.840 [0.715, 0.917] Wilson 95%, n=50" in result.text
    analysis = json.loads((tmp_path / "compare.json").read_text())
    assert analysis["decision"] == "mixed results - inspect paired deltas"
    leaderboard = json.loads((tmp_path / "leaderboard.json").read_text())
    # every result is in the demo's store, and its history is on the site
    from plumbline.store.store import Query, Store

    with Store.open(str(tmp_path / "history.db")) as store:
        kinds = sorted(entry.kind for entry in store.query(Query()))
    # two A/B decisions (the bundled records and the demo's own agent trials), two reports
    assert kinds.count("compare") == 2 and kinds.count("reliability") == 2
    assert kinds.count("leaderboard") == 1
    assert (tmp_path / "site" / "history" / "index.html").is_file()
    assert "History of" in result.text
    ranking = [entry["model"] for entry in leaderboard["models"]]
    assert ranking[:2] == ["scripted/oracle", "scripted/weak"]
    assert leaderboard["models"][0]["overall"] > 0.9 > leaderboard["models"][1]["overall"]
    # the real model is on the leaderboard, every number in range, its samples all accounted
    [real] = [entry for entry in leaderboard["models"] if entry["model"] == "plumbline/smollm2"]
    assert 0.0 <= real["overall"] <= 1.0
    for key, interval in real["intervals"].items():
        assert 0.0 <= interval["low"] <= real[key] <= interval["high"] <= 1.0, key
    assert all(real["counts"][key]["n"] == 2 for key in ("practice_exam", "cdk_synth"))
    judge = json.loads((tmp_path / "judge-smollm2.json").read_text())
    [calibration] = judge["judges"]
    for item in calibration["adversarial"]:
        assert item["fooled"] is (None if item["judged"] is None else item["fooled"])
    assert "FOOLED" not in result.text or any(a["fooled"] for a in calibration["adversarial"])
    trials = (tmp_path / "smollm2-trials.jsonl").read_text().splitlines()
    assert len(trials) == 6
    reliability = json.loads((tmp_path / "reliability.json").read_text())
    assert reliability
    # the regression check between the two probes of the real model, paired by name
    regression = json.loads((tmp_path / "regression.json").read_text())["baseline_comparison"]
    assert [p["paired_by"] for p in regression["pairs"]] == ["name"]
    assert len(regression["entries"]) == 6
    log = (tmp_path / "demo.log").read_text()
    assert "baseline: plumbline/smollm2" in " ".join(log.split())
    for name in ("leaderboard.md", "compare.md", "reliability.md"):
        assert (tmp_path / name).read_text().strip()
    assert "Demo finished" in result.text
    # the last screen is the answers, and no step's output runs past a screen
    answers = result.text.split("The answers", 1)[1]
    assert "Best model: scripted/oracle, overall" in answers
    assert "A/B (with_skelly vs without_skelly): mixed results" in answers
    # the agent trials the demo ran itself: sandboxed, every call metered
    assert "A/B on the demo's agent trials (with_hint vs without_hint):" in answers
    trials = [json.loads(line) for line in (tmp_path / "agent-trials" / "records.jsonl").open()]
    assert trials and all(r["usage_source"] == "metered" for r in trials)
    assert all(r["sandbox"] == "bubblewrap" and r["network"] == "isolated" for r in trials)
    assert "Reliability of plumbline/smollm2:" in answers and "Regression check" in answers
    assert "not enough runs to check yet" in answers
    assert (tmp_path / "demo.log").read_text().count("$ plumbline ") >= 10
    site = tmp_path / "site"
    for page in ("index.html", "leaderboard/index.html", "compare/index.html"):
        assert (site / page).is_file(), page
    assert (site / "reliability" / "index.html").is_file()
    assert len(list((site / "leaderboard" / "models").glob("*.html"))) == 3
    for name in ("leaderboard", "compare", "reliability"):
        assert json.loads((site / "data" / f"{name}.json").read_text())
    assert f"Open {(site / 'index.html').resolve().as_uri()}" in result.text.replace("\n", "")


def _normalised(path: Path) -> Any:
    from scripts.demo_diff import normalise

    return normalise(json.loads(path.read_text()))


@pytest.mark.xdist_group("demo")  # one demo run (`demo`) for both
def test_the_demos_results_are_the_plain_paths_results(demo: Demo) -> None:
    """The speed-ups change no result on the demo's data: its leaderboard read with the fast
    reader in a process pool is the one Inspect's reader gives in process, and its judge's
    verdicts decoded in a batch are the ones decoded one at a time. Both runs
    of the real judge are scored or unscored, never "fooled" when unscored (issue 20)."""
    from plumbline.leaderboard import build_leaderboard

    logs = [demo.output / "logs", demo.output / "logs-smollm2"]
    moment = datetime(2026, 11, 27, tzinfo=UTC)
    boards = [
        build_leaderboard(
            logs, "sa-bench", run_id="same", generated_at=moment, workers=workers, fast=fast
        ).document()
        for workers, fast in ((2, True), (1, False))
    ]
    assert boards[0].model_dump_json() == boards[1].model_dump_json()
    assert len(boards[0].models) == 3
    [judge_step] = [
        step for step in demo_steps(demo.output) if step.args[:2] == ("judge", "calibrate")
    ]
    args = list(judge_step.args)
    args[args.index("--concurrency") + 1] = "1"
    one_at_a_time = demo.output / "judge-one-at-a-time.json"
    args[args.index("--json") + 1] = str(one_at_a_time)
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 1), result.output  # 1: the calibration's findings
    assert "Traceback" not in result.output
    for path in (demo.output / "judge-smollm2.json", one_at_a_time):
        _assert_scored_or_unscored(json.loads(path.read_text()), items=JUDGE_ITEMS)
    batched = _normalised(demo.output / "judge-smollm2.json")
    assert batched == _normalised(one_at_a_time)
    assert json.dumps(batched).count('"judged"') >= 3


def _assert_scored_or_unscored(document: dict[str, Any], items: int) -> None:
    """A real judge's calibration (issue 20): each verdict a score in range or unscored (and
    counted so), an unscored adversarial item never "fooled", no traceback as an error."""
    [judge] = document["judges"]
    assert judge["items"] == items
    judged = [item["judged"] for item in judge["per_item"]]
    assert judge["unscored"] == sum(value is None for value in judged)
    assert all(value is None or 0.0 <= value <= 1.0 for value in judged)
    for item in judge["adversarial"]:
        if item["judged"] is None:
            assert item["fooled"] is None
    for item in judge["per_item"]:
        for error in item.get("errors", []):
            assert "Traceback" not in error


@pytest.mark.slow
def test_demo_without_bubblewrap_runs_the_rest_and_says_cdk_was_not_run(tmp_path: Path) -> None:
    """A fresh machine without bubblewrap (hidden here through PLUMBLINE_BWRAP): no traceback,
    every other step runs, and the leaderboard, its Markdown and its page say why CDK did not."""
    env = {**os.environ, "PLUMBLINE_BWRAP": str(tmp_path / "no-bwrap-here"), "COLUMNS": "200"}
    result = subprocess.run(
        [sys.executable, "-m", "plumbline", "demo", "-o", str(tmp_path / "out")],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Traceback" not in output
    assert "category cdk_synth is not run" in output and "bubblewrap is not installed" in output
    # the agent trials need the sandbox too: shown, with the reason, never run unconfined
    assert "Not run: the agent trials need a sandbox: bubblewrap is not installed" in output
    assert not (tmp_path / "out" / "agent-trials").exists()
    assert "A/B on the demo's agent trials: not run" in output
    out = tmp_path / "out"
    board = json.loads((out / "leaderboard.json").read_text())
    cdk = board["_metadata"]["categories"]["cdk_synth"]
    assert "bubblewrap is not installed" in cdk["not_run"]
    assert cdk["models_scored"] == 0
    assert [p["kind"] for p in board["problems"]][:1] == ["category_not_run"]
    assert all("cdk_synth" not in model for model in board["models"])  # no value, not a 0
    # the rest ran: every model has a practice-exam score (the real model's may well be 0)
    assert all("practice_exam" not in model.get("missing", []) for model in board["models"])
    scripted = [m for m in board["models"] if m["model"].startswith("scripted/")]
    assert len(scripted) == 2 and all(m["practice_exam"] > 0 for m in scripted)
    assert "*not run*" in (out / "leaderboard.md").read_text()
    page = (out / "site" / "leaderboard" / "index.html").read_text()
    assert ">not run</span>" in page and "not run: task cdk_synth runs model-written code" in page
    for name in ("compare.json", "reliability.json"):
        assert json.loads((out / name).read_text())
