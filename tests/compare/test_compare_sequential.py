"""`plumbline compare --sequential`: stops early on a clear win whatever the records' order,
declares no winner on identical arms nor on a suite whose tasks differ but whose mean
difference is 0 (records grouped by task), and shows the verdict in every view."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from plumbline.cli.main import main

FAST = ["--resamples", "200"]


START = datetime(2026, 1, 1, tzinfo=UTC)


def _record(task: int, arm: str, repeat: int, success: bool, minute: int) -> dict[str, Any]:
    """One trial's record, begun `minute` minutes after `START`."""
    return {
        "task_id": f"task{task:03d}",
        "arm": arm,
        "repeat": repeat,
        "success": success,
        "duration_seconds": 10.0,
        "total_cost_usd": 0.1,
        "input_tokens": 1000,
        "output_tokens": 100,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "started_at_utc": (START + timedelta(minutes=minute)).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def _records(p_new: float, p_old: float, *, seed: int, tasks: int = 60) -> list[dict[str, Any]]:
    """Five repeats of `tasks` tasks per arm, run in time order, then shuffled in the file."""
    rng = random.Random(seed)
    records: list[dict[str, Any]] = []
    for repeat in range(1, 6):
        for task in range(tasks):
            for arm, rate in (("new", p_new), ("old", p_old)):
                records.append(_record(task, arm, repeat, rng.random() < rate, len(records)))
    rng.shuffle(records)
    return records


def _write(path: Path, records: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, ["compare", *args], catch_exceptions=False)


def test_a_clear_win_stops_early_whatever_the_records_order(tmp_path: Path) -> None:
    records = _records(0.9, 0.4, seed=1)
    path = _write(tmp_path / "runs.jsonl", records)
    result = invoke(path, "-t", "new", "-c", "old", "--sequential", *FAST, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    sequential = report["sequential"]
    assert sequential["verdict"] == "better"
    assert sequential["order"].startswith("complete rounds")
    assert "random order (seed 42)" in sequential["order"]
    assert sequential["settings"]["correlation"] == 0.0
    assert "approximate" in sequential["interval_guarantee"]
    assert sequential["pairs_used"] < sequential["fixed_pairs"] / 3
    assert sequential["pairs_available"] == 300
    assert sequential["interval"]["low"] > 0
    assert set(sequential) >= {"verdict", "pairs_used", "max_pairs", "interval", "method"}
    assert len(sequential["path"]) == sequential["pairs_used"]
    assert report["gates"][0]["holds_for_treatment"] is True
    assert report["decision"] == "prefer new"  # the other gates are ties
    assert report["settings"]["sequential"]["effect"] == 0.10
    # the same records in time order, or grouped by task, give the same stop: neither the
    # file order nor the times are used
    ordered = sorted(records, key=lambda r: r["started_at_utc"])
    grouped = sorted(records, key=lambda r: (r["task_id"], r["repeat"]))
    for name, variant in (("ordered", ordered), ("grouped", grouped)):
        again = invoke(
            _write(tmp_path / f"{name}.jsonl", variant), "-t", "new", "-c", "old", "--sequential"
        )
        text = " ".join(again.output.split())
        assert f"better after {sequential['pairs_used']} pairs" in text
        assert "assuming a within-pair correlation of 0 (independent arms" in text


def test_tasks_that_differ_with_a_mean_of_zero_decide_nothing(tmp_path: Path) -> None:
    """Half the tasks favour each arm by 0.4 and the records come grouped by task, as a harness
    that runs a task's repeats back to back writes them: the suite's mean difference is 0.
    Pairs taken in time order called this `better` in every simulated run (issue 37)."""
    rng = random.Random(11)
    records: list[dict[str, Any]] = []
    for task in range(40):
        favoured = task < 20  # the tasks run first favour the treatment
        for repeat in range(1, 11):
            for arm in ("new", "old"):
                rate = 0.7 if (arm == "new") == favoured else 0.3
                records.append(_record(task, arm, repeat, rng.random() < rate, len(records)))
    path = _write(tmp_path / "grouped.jsonl", records)
    result = invoke(path, "-t", "new", "-c", "old", "--sequential", *FAST, "--json")
    assert result.exit_code == 0, result.output
    sequential = json.loads(result.output)["sequential"]
    assert sequential["verdict"] == "undecided"
    assert sequential["pairs_used"] == sequential["pairs_available"] == 400


def test_identical_arms_declare_no_winner(tmp_path: Path) -> None:
    records = _records(0.6, 0.6, seed=2)
    path = _write(tmp_path / "runs.jsonl", records)
    result = invoke(path, "-t", "new", "-c", "old", "--sequential", *FAST, "--json")
    sequential = json.loads(result.output)["sequential"]
    assert sequential["verdict"] == "undecided"
    # the plan at correlation 0 caps beyond the 300 pairs at hand: more pairs may decide
    assert sequential["reason"] == "data" and sequential["complete"] is False
    assert sequential["pairs_used"] == sequential["pairs_available"] < sequential["max_pairs"]
    capped = invoke(
        path, "-t", "new", "-c", "old", "--sequential", "--correlation", "0.5", *FAST, "--json"
    )
    at_cap = json.loads(capped.output)["sequential"]
    assert at_cap["verdict"] == "undecided" and at_cap["reason"] == "cap"
    assert at_cap["pairs_used"] == at_cap["max_pairs"]
    report = json.loads(result.output)
    assert report["decision"] == "mixed results - inspect paired deltas"
    assert report["gates"][0]["verdict"] == "neither"
    # with a margin and the data at hand, equivalence is the verdict once the band is narrow
    wide = invoke(
        path, "-t", "new", "-c", "old", "--sequential", "--margin", "0.25", *FAST, "--json"
    )
    assert json.loads(wide.output)["sequential"]["verdict"] == "equivalent"


def test_every_view_shows_the_verdict(tmp_path: Path) -> None:
    path = _write(tmp_path / "runs.jsonl", _records(0.9, 0.4, seed=3))
    markdown = tmp_path / "report.md"
    site = tmp_path / "site"
    result = invoke(
        path,
        "-t",
        "new",
        "-c",
        "old",
        "--sequential",
        "--effect",
        "0.2",
        *FAST,
        "--markdown",
        str(markdown),
        "--html",
        str(site),
    )
    assert result.exit_code == 0, result.output
    terminal = " ".join(result.output.split())
    assert "Sequential verdict: better after" in terminal
    assert "+20% pass-rate difference from a 50% baseline" in terminal
    text = markdown.read_text()
    assert "### Sequential" in text and "confidence sequence" in text
    page = next(site.glob("compare-*/index.html")).read_text()
    assert 'data-sequential="new"' in page
    assert '<polygon class="band"' in page and "Sequential verdict" in page


def test_records_without_times_and_bad_options(tmp_path: Path) -> None:
    records = _records(0.9, 0.4, seed=4)
    for record in records:
        del record["started_at_utc"]
    path = _write(tmp_path / "runs.jsonl", records)
    result = invoke(path, "-t", "new", "-c", "old", "--sequential", *FAST, "--json")
    assert json.loads(result.output)["sequential"]["verdict"] == "better"
    misuse = CliRunner().invoke(
        main, ["compare", path, "-t", "new", "-c", "old", "--effect", "0.1"]
    )
    assert misuse.exit_code == 2 and "only apply with --sequential" in misuse.output
    misuse = CliRunner().invoke(
        main, ["compare", path, "-t", "new", "-c", "old", "--correlation", "0.5"]
    )
    assert misuse.exit_code == 2 and "--correlation only apply with --sequential" in (misuse.output)
    too_big = CliRunner().invoke(
        main,
        ["compare", path, "-t", "new", "-c", "old", "--sequential", "--baseline", "0.95"],
    )
    assert too_big.exit_code == 2 and "must be below 1" in too_big.output
    stray = CliRunner().invoke(main, ["compare", path, "-t", "new", "-c", "old", "--margin", "0.1"])
    assert stray.exit_code == 2 and "--margin applies only to --rule ci or --sequential" in (
        stray.output
    )


def test_an_impossible_design_is_a_usage_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "runs.jsonl", _records(0.9, 0.4, seed=5, tasks=5))
    result = CliRunner().invoke(
        main,
        [
            "compare",
            path,
            "-t",
            "new",
            "-c",
            "old",
            "--sequential",
            "--effect",
            "0.45",
            "--correlation",
            "0.9",
        ],
    )
    assert result.exit_code == 2
    assert "no design for --effect 0.45 from --baseline 0.5" in result.output
    assert "correlation 0.9 is impossible" in result.output


def test_a_stated_correlation_plans_fewer_pairs_and_is_shown(tmp_path: Path) -> None:
    path = _write(tmp_path / "runs.jsonl", _records(0.6, 0.6, seed=8, tasks=20))
    reports = {}
    for correlation in ("0", "0.5"):
        result = invoke(
            path,
            "-t",
            "new",
            "-c",
            "old",
            "--sequential",
            "--correlation",
            correlation,
            *FAST,
            "--json",
        )
        assert result.exit_code == 0, result.output
        reports[correlation] = json.loads(result.output)["sequential"]
    assert reports["0.5"]["settings"]["correlation"] == 0.5
    assert reports["0.5"]["fixed_pairs"] < reports["0"]["fixed_pairs"]
    assert reports["0.5"]["max_pairs"] < reports["0"]["max_pairs"]
    assert "within-pair correlation of 0.5;" in reports["0.5"]["summary"]


def test_several_treatments_share_alpha(tmp_path: Path) -> None:
    records = _records(0.9, 0.4, seed=6, tasks=30)
    third = [dict(r, arm="other") for r in records if r["arm"] == "new"]
    path = _write(tmp_path / "runs.jsonl", records + third)
    result = invoke(path, "-c", "old", "--sequential", *FAST, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    alphas = [c["sequential"]["settings"]["alpha"] for c in report["comparisons"]]
    assert alphas == [0.025, 0.025]
    assert any("alpha 0.025 (Bonferroni)" in w for w in report["warnings"])


def test_no_pairs_no_verdict(tmp_path: Path) -> None:
    records = _records(0.9, 0.4, seed=7, tasks=4)
    for record in records:
        if record["arm"] == "old":
            record["task_id"] = "other-" + record["task_id"]
    path = _write(tmp_path / "runs.jsonl", records)
    result = invoke(path, "-t", "new", "-c", "old", "--sequential", *FAST, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["sequential"] is None
    assert "new vs old: no pairs, so no sequential verdict" in report["warnings"]
    assert report["gates"][0]["verdict"] == "neither"


def _path(records: list[dict[str, Any]], tmp_path: Path, name: str) -> dict[str, Any]:
    path = _write(tmp_path / f"{name}.jsonl", records)
    result = invoke(path, "-t", "new", "-c", "old", "--sequential", *FAST, "--json")
    assert result.exit_code == 0, result.output
    sequential: dict[str, Any] = json.loads(result.output)["sequential"]
    return sequential


def test_a_rerun_on_more_records_continues_the_earlier_path(tmp_path: Path) -> None:
    """Issue 45: re-running after every round must continue, not reshuffle. Each look's path
    starts with the previous look's, exactly, whatever the file order; an incomplete last round
    is held back (the tasks are those seen, so from the second round on); a lost trial in an
    earlier round does not hold back the later ones."""
    rng = random.Random(7)
    rounds = [
        [
            _record(task, arm, repeat, rng.random() < 0.6, 0)
            for task in range(20)
            for arm in ("new", "old")
        ]
        for repeat in range(4)
    ]
    lost = rounds[1].pop(5)  # a lost trial in round 1
    seen: list[dict[str, Any]] = []
    previous: list[Any] = []
    for number, records in enumerate(rounds):
        if number:  # the tasks are known from round 0 on: a half round is incomplete
            half = records[: len(records) // 2]
            partial = _path([*seen, *half][::-1], tmp_path, f"partial{number}")
            assert partial["path"] == previous  # the incomplete round waits
            assert partial["pairs_held_back"] > 0 and "held back" in partial["order"]
        seen += records
        rng.shuffle(seen)
        current = _path(seen, tmp_path, f"round{number}")
        assert current["path"][: len(previous)] == previous
        if number == 1:  # the lost trial: round 1 waits until a later round completes
            assert current["path"] == previous and current["pairs_held_back"] == 19
        else:
            assert len(current["path"]) > len(previous) and current["pairs_held_back"] == 0
        previous = current["path"]
    # round 1 is analysed without its lost pair once round 2 is complete
    assert len(previous) == 4 * 20 - 1
    # the lost trial recorded late is the one record that may reorder an analysed round
    assert lost["arm"] in ("new", "old")


def test_an_infrastructure_failure_completes_its_round(tmp_path: Path) -> None:
    rng = random.Random(8)
    records = [
        _record(task, arm, 0, rng.random() < 0.6, 0) for task in range(10) for arm in ("new", "old")
    ]
    records[3]["infra_failure"] = True
    sequential = _path(records, tmp_path, "infra")
    assert sequential["pairs_held_back"] == 0 and sequential["pairs_used"] == 9
    del records[3]  # the trial never recorded: the round waits for it
    waiting = _path(records, tmp_path, "missing")
    assert waiting["pairs_used"] == 0 and waiting["verdict"] == "undecided"
    assert "task001 has no old record at repeat 0" in waiting["order"]
    assert "no round is complete yet" in waiting["summary"]
