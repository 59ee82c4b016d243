"""The store on the command line: `--store` on a result command (an unreachable store costs
nothing but a warning), `store add`, `history` (terminal, JSON, the site's page) and `history
check` on a series that changes."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.support.store_results import EXAMPLES, Documents, mini_leaderboard

from plumbline.cli.main import main
from plumbline.store.store import Query, Store

# one xdist group: the module's tests read one set of nightly leaderboards (`nights`, real
# Inspect runs), made once, not once per worker
pytestmark = pytest.mark.xdist_group("history_cli")

#: The mini suite's correct answers out of 40, night after night: stable, then a jump.
NIGHTS = (20, 22, 19, 21, 20, 38, 39, 38)
STABLE = 5


def invoke(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.stdout, result.stderr


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _compare_args(output: Path) -> list[str]:
    return [
        "compare",
        str(EXAMPLES / "agent_runs.jsonl"),
        "--treatment",
        "with_skelly",
        "--control",
        "without_skelly",
        "--resamples",
        "200",
        "--json",
        str(output),
    ]


def test_a_result_command_stores_its_result_with_labels(tmp_path: Path) -> None:
    store = tmp_path / "history.db"
    code, _, stderr = invoke(
        [*_compare_args(tmp_path / "c.json"), "--store", str(store), "--label", "commit=abc"]
    )
    assert code == 0, stderr
    assert "stored as result 1 in" in stderr
    with Store.open(str(store)) as opened:
        [entry] = opened.query(Query())
    assert entry.kind == "compare" and entry.labels == {"commit": "abc"}
    assert entry.source == "plumbline compare"
    [digest] = json.loads(
        Store.open(str(store))
        .engine.connect()
        .exec_driver_sql("SELECT inputs FROM results")
        .scalar_one()
    )
    assert digest["path"].endswith("agent_runs.jsonl") and len(digest["sha256"]) == 64


def test_an_unreachable_store_is_one_warning_and_the_result_file_is_written(
    tmp_path: Path,
) -> None:
    url = f"postgresql://ci:hunter2@127.0.0.1:{_closed_port()}/results"
    code, _, stderr = invoke([*_compare_args(tmp_path / "c.json"), "--store", url])
    assert code == 0
    warnings = [line for line in stderr.splitlines() if "result not stored" in line]
    assert len(warnings) == 1 and "cannot reach the store" in warnings[0]
    assert "hunter2" not in stderr
    assert json.loads((tmp_path / "c.json").read_text())["schema_version"] == "plumbline.compare/2"
    (tmp_path / "c.json").unlink()
    code, _, _ = invoke([*_compare_args(tmp_path / "c.json"), "--store", url, "--store-required"])
    assert code == 3
    assert (tmp_path / "c.json").is_file()


def test_store_options_need_a_store_and_well_formed_labels(tmp_path: Path) -> None:
    code, _, stderr = invoke([*_compare_args(tmp_path / "c.json"), "--label", "commit=abc"])
    assert code == 2 and "add --store URL" in stderr
    code, _, stderr = invoke(
        [*_compare_args(tmp_path / "c.json"), "--store", "x.db", "--label", "no-equals"]
    )
    assert code == 2 and "expected KEY=VALUE" in stderr


def test_store_add_refuses_bad_files_naming_file_line_and_field(
    tmp_path: Path, documents: Documents
) -> None:
    store = str(tmp_path / "s.db")
    broken = tmp_path / "broken.json"
    report = documents.json("compare")
    report["decision_role"] = "someone"
    broken.write_text(json.dumps(report), encoding="utf-8")
    not_json = tmp_path / "notjson.json"
    not_json.write_text('{"a": 1,\n  oops}', encoding="utf-8")
    code, _, stderr = invoke(
        ["store", "add", str(documents.compare), str(broken), str(not_json), "--store", store]
    )
    assert code == 2
    assert re.search(rf"{re.escape(str(broken))}:1: decision_role: Input should be", stderr)
    assert f"{not_json}:2: " in stderr
    with Store.open(store) as opened:
        assert opened.count() == 0  # nothing stored when a file is bad
    code, stdout, _ = invoke(
        [
            "store",
            "add",
            str(documents.compare),
            str(documents.reliability),
            "--store",
            store,
            "--label",
            "source=ci",
            "--json",
        ]
    )
    assert code == 0
    added = json.loads(stdout)["results"]
    assert [(a["kind"], a["new"]) for a in added] == [("compare", True), ("reliability", True)]
    code, stdout, _ = invoke(["store", "add", str(documents.compare), "--store", store])
    assert code == 0 and "already stored as compare result 1" in stdout


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """One leaderboard per night (see NIGHTS), built from real Inspect logs in time order."""
    root = tmp_path_factory.mktemp("nights")
    return [mini_leaderboard(root / f"night-{i}", correct) for i, correct in enumerate(NIGHTS)]


def _store_nights(url: str, nights: list[Path]) -> None:
    for night, board in enumerate(nights):
        labels = ["--label", f"night={night}"]
        if night < STABLE:
            labels += ["--label", "phase=stable"]
        code, _, stderr = invoke(["store", "add", str(board), "--store", url, *labels])
        assert code == 0, stderr


def test_history_check_finds_the_jump_and_fails_on_change(
    store_url: str, nights: list[Path]
) -> None:
    _store_nights(store_url, nights)
    qa = ["--store", store_url, "--metric", "qa"]
    code, stdout, _ = invoke(["history", "check", *qa, "--json", "--fail-on-change"])
    assert code == 1
    report = json.loads(stdout)
    assert report["schema_version"] == "plumbline.history_check/2"
    assert report["within"] == 365 and report["family"] == 1 and report["alpha"] == 0.05
    assert "within 365 runs" in report["guarantee"] and report["average_run_length"] > 5000
    [series] = report["series"]
    assert series["model"] == "mockllm/model" and series["metric"] == "qa"
    assert [run["estimate"] for run in series["runs"]] == [c / 40 for c in NIGHTS]
    assert series["first_alarm"] is not None and series["first_alarm"] >= STABLE
    assert series["changed_at"] == series["runs"][STABLE]["id"]
    assert series["runs"][series["first_alarm"]]["alarm"] is True
    assert not any(run["alarm"] for run in series["runs"][:STABLE])
    assert series["runs"][0]["labels"] == {"night": "0", "phase": "stable"}
    assert series["runs"][0]["n"] == 40 and series["alpha"] == 0.05
    assert series["extra_variance_source"] == "estimated"
    # both metrics checked together: one family, alpha split between its two series
    code, stdout, _ = invoke(["history", "check", "--store", store_url, "--json"])
    both = json.loads(stdout)
    assert both["family"] == 2 and {s["alpha"] for s in both["series"]} == {0.025}
    code, stdout, _ = invoke(["history", "check", *qa])
    assert code == 0 and "guarantee: with nothing changing" in stdout.replace("\n", " ")
    assert "estimated from each series" in stdout.replace("\n", " ")
    code, stdout, _ = invoke(
        ["history", "check", "--store", store_url, "--label", "phase=stable", "--json"]
    )
    assert code == 0
    assert all(s["first_alarm"] is None for s in json.loads(stdout)["series"])
    # the change accepted: the series restarts where it changed and the job is green again
    code, stdout, stderr = invoke(
        ["history", "ack", "--store", store_url, "--model", "mockllm/model", "--metric", "qa"]
    )
    assert code == 0, stderr
    assert f"restarts at result {series['changed_at']}" in stdout
    code, stdout, _ = invoke(
        ["history", "check", *qa, "--json", "--fail-on-change", "--extra-variance", "0"]
    )
    assert code == 0
    [restarted] = json.loads(stdout)["series"]
    assert restarted["restarted_at"] == series["changed_at"]
    assert restarted["before_restart"] == STABLE and len(restarted["runs"]) == len(NIGHTS) - STABLE
    assert restarted["first_alarm"] is None and restarted["extra_variance_source"] == "given"
    code, _, stderr = invoke(["history", "ack", *qa, "--model", "mockllm/model", "--at", "99999"])
    assert code == 2 and "has no value of 'qa'" in stderr
    for bad in (["--alpha", "0.0005"], ["--alpha", "0.9"], ["--extra-variance", "-1"]):
        code, _, stderr = invoke(["history", "check", *qa, *bad])
        assert code == 2, bad
        assert "alpha must be between 0.001 and 0.5" in stderr or "auto" in stderr


def test_history_lists_results_in_time_order_and_adds_a_page_to_the_site(
    tmp_path: Path, nights: list[Path], documents: Documents
) -> None:
    store = str(tmp_path / "s.db")
    _store_nights(store, nights)
    invoke(
        [
            "store",
            "add",
            str(documents.compare),
            "--store",
            store,
            "--label",
            "x=<b>y</b>",
            "--label",
            "z=[red]w[/red]",
        ]
    )
    code, stdout, _ = invoke(["history", "--store", store, "--model", "mockllm/model", "--json"])
    assert code == 0
    document = json.loads(stdout)
    assert document["schema_version"] == "plumbline.history/1"
    assert [e["labels"]["night"] for e in document["results"]] == [str(i) for i in range(8)]
    assert {m["metric"] for m in document["results"][0]["metrics"]} == {"overall", "qa"}
    site = tmp_path / "site"
    code, stdout, stderr = invoke(["history", "--store", store, "--html", str(site)])
    assert code == 0, stderr
    assert "overall" in stdout and "[0.3" in stdout  # a metric with its interval
    assert "[interval]" in stdout  # a column title, not rich markup
    assert "z=[red]w[/red]" in stdout.replace("\n", "").replace("│", "").replace(" ", "")
    page = (site / "history" / "index.html").read_text(encoding="utf-8")
    # the leaderboard's 2 metrics, the compare's 5 deltas and its 6 cost figures
    assert page.count('<svg xmlns="http://www.w3.org/2000/svg" class="chart"') == 2 + 5 + 6
    assert "<b>y</b>" not in page and "x=&lt;b&gt;y&lt;/b&gt;" in page
    links = re.findall(r'<a href="\.\./(result-\d+/index\.html)">', page)
    assert links and all((site / link).is_file() for link in links)
    assert 'class="band"' in page and "<title>result 1 · " in page
    # the jump is marked where `history check` has its alarm up: from night 5 or 6 on, both
    # metrics (the 13 series of the store are one family, so the threshold is higher)
    assert 2 * (len(NIGHTS) - STABLE - 1) <= page.count('class="alarm"')
    assert page.count('class="alarm"') <= 2 * (len(NIGHTS) - STABLE)
    assert "over the 13 series checked together at most 5%" in page
    assert page.count("changed beyond noise") == 2
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "history/index.html" in index


def test_history_needs_a_store_and_a_date_it_can_read(tmp_path: Path) -> None:
    code, _, stderr = invoke(["history"])
    assert code == 2 and "--store URL" in stderr
    code, _, stderr = invoke(["history", "--store", str(tmp_path / "s.db"), "--since", "soon"])
    assert code == 2 and "ISO 8601" in stderr


def test_a_command_keys_its_result_by_its_inputs(tmp_path: Path, nights: list[Path]) -> None:
    """Nights 0 and 4 scored alike from different logs: two entries; night 0 rebuilt from its
    own logs: the same entry."""
    store = str(tmp_path / "s.db")
    assert NIGHTS[0] == NIGHTS[4]
    for night in (0, 4, 0):
        root = nights[night].parent
        code, _, stderr = invoke(
            [
                "leaderboard",
                str(root / "logs"),
                "--suite",
                str(root / "mini.toml"),
                "-o",
                str(tmp_path / f"board-{night}.json"),
                "--store",
                store,
            ]
        )
        assert code == 0, stderr
    assert "already stored as result 1" in stderr
    with Store.open(store) as opened:
        entries = opened.query(Query(metric="qa"))
    assert len(entries) == 2
    assert [e.metrics[0].estimate for e in entries] == [NIGHTS[0] / 40] * 2


def test_agent_run_stores_each_arms_success_rate_and_its_comparison(tmp_path: Path) -> None:
    from tests.agent.helpers import fake_agent, write_suite

    suite = write_suite(tmp_path / "suite")
    store = str(tmp_path / "s.db")
    result = CliRunner().invoke(
        main,
        [
            "agent",
            "run",
            str(suite),
            "--agent",
            fake_agent(),
            "--profile",
            "claude-code",
            "-o",
            str(tmp_path / "results"),
            "--repeats",
            "2",
            "--collect-analyze",
            "--store",
            store,
            "--label",
            "pr=17",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["schema_version"] == "plumbline.agent_run/1"
    with Store.open(store) as opened:
        [entry] = opened.query(Query(kind="agent_run"))
    assert entry.labels == {"pr": "17"}
    rates = {row.subject: row for row in entry.metrics if row.metric == "success_rate"}
    assert set(rates) == set(document["arms"])
    for arm, tally in document["arms"].items():
        kept = tally["runs"] - sum(tally["infra_failures"].values())
        assert rates[arm].n == kept
        assert rates[arm].estimate == pytest.approx(tally["successes"] / kept)
        assert rates[arm].low <= rates[arm].estimate <= rates[arm].high
        assert rates[arm].method.startswith("Wilson")
    deltas = {row.metric for row in entry.metrics if " vs " in row.subject}
    assert "pass_delta" in deltas
