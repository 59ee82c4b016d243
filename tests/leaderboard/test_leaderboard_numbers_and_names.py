"""Numbers and names on the leaderboard (issue 27): a category not run is left out of the overall
(the others' weights renormalised, said in every view); CSV columns never collide; CSV cells are
never formulas."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.support.small_inputs import make_log_dir

from plumbline.cli.main import main
from plumbline.leaderboard import build_leaderboard, load_suite
from plumbline.leaderboard.result import LeaderboardDocument
from plumbline.views.leaderboard import render_csv, render_markdown, render_terminal

SUITE = """\
[suite]
name = "three"

[[category]]
key = "qa"
name = "QA"
description = "Answers a question."
weight = 0.5
scoring = "binary"
tasks = ["mini_qa"]
scorer = "match"

[[category]]
key = "qa_low"
name = "QA low"
description = "The same answers, as a second category."
weight = 0.3
scoring = "binary"
tasks = ["mini_qa"]
scorer = "match"

[[category]]
key = "skipped"
name = "Skipped"
description = "Never run here."
weight = 0.2
scoring = "binary"
tasks = ["not_here"]
scorer = "match"
"""


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_log_dir(tmp_path_factory.mktemp("numbers"))


@pytest.fixture(scope="module")
def suite_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("suite") / "three.toml"
    path.write_text(SUITE, encoding="utf-8")
    return path


def test_a_category_not_run_is_left_out_of_the_overall(logs: Path, suite_path: Path) -> None:
    suite = load_suite(suite_path)
    counted = build_leaderboard([logs], suite).document()
    # without --not-run the absent category counts 0: 0.5 × 0.5 + 0.3 × 0.5
    assert counted.models[0].overall == pytest.approx(0.4)
    document = build_leaderboard([logs], suite, not_run={"skipped": "no sandbox"}).document()
    (row,) = document.models
    # renormalised over what ran: (0.5 × 0.5 + 0.3 × 0.5) / 0.8
    assert row.overall == pytest.approx(0.5)
    categories = document.metadata.categories
    assert categories["skipped"].weight == 0 and categories["skipped"].suite_weight == 0.2
    assert categories["qa"].weight == pytest.approx(0.625)
    assert categories["qa"].suite_weight == 0.5
    note = document.metadata.overall_note
    assert note and "Not run: skipped" in note and "renormalised" in note
    from rich.console import Console

    console = Console(record=True, width=200)
    render_terminal(document, console)
    assert "renormalised" in console.export_text()
    assert "renormalised" in render_markdown(document)
    from plumbline.app.site import read_site_input
    from plumbline.views.leaderboard_page import render_leaderboard_pages

    pages = render_leaderboard_pages(
        read_site_input("leaderboard", "b", document.to_json(), ()), "b"
    )
    assert any("renormalised" in page.html for page in pages)
    # the document stays self-consistent: overall = Σ weight × category value
    from plumbline.leaderboard.document import document_problems

    assert document_problems(document.to_json()) == []


def test_the_cli_not_run_option_changes_the_overall(
    logs: Path, suite_path: Path, tmp_path: Path
) -> None:
    out = tmp_path / "board.json"
    args = ["leaderboard", str(logs), "--suite", str(suite_path), "-o", str(out)]
    result = CliRunner().invoke(main, [*args, "--not-run", "skipped=not here"])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["models"][0]["overall"] == pytest.approx(0.5)
    assert "renormalised" in result.output


def test_csv_columns_of_qa_and_qa_low_do_not_collide(logs: Path, suite_path: Path) -> None:
    document = build_leaderboard([logs], load_suite(suite_path)).document()
    text = render_csv(document)
    header = next(csv.reader(io.StringIO(text)))
    assert len(header) == len(set(header))
    (row,) = list(csv.DictReader(io.StringIO(text)))
    assert row["qa"] == row["qa_low"] == "0.5"
    assert row["qa.low"] != row["qa_low"]
    assert row["skipped.missing"] == "True"


def test_csv_cells_are_never_formulas(logs: Path, suite_path: Path) -> None:
    data = build_leaderboard([logs], load_suite(suite_path)).document().to_json()
    for name in ('=HYPERLINK("http://evil","x")', "+1+1", "-2+3", "@SUM(A1)", "\tx"):
        data["models"][0]["model"] = name
        data["tie_groups"][0]["models"] = [name]
        text = render_csv(LeaderboardDocument.model_validate(data))
        (row,) = list(csv.DictReader(io.StringIO(text)))
        assert row["model"] == "'" + name
        assert float(row["overall"]) == pytest.approx(0.4)  # numbers stay numbers


def test_a_scorer_that_matches_nothing_is_a_problem(
    tmp_path_factory: pytest.TempPathFactory, suite_path: Path
) -> None:
    unscored = make_log_dir(tmp_path_factory.mktemp("unscored"), scored=False)
    board = build_leaderboard([unscored], load_suite(suite_path))
    missing = [p for p in board.problems if p.kind == "scorer_missing"]
    assert {p.category for p in missing} == {"qa", "qa_low"}
    assert all("holds no scores at all" in p.message for p in missing)


def test_label_files_for_humans_are_never_formulas_and_read_back(tmp_path: Path) -> None:
    from plumbline.leaderboard.label_sampling import COLUMNS, write_label_rows
    from plumbline.leaderboard.labels import read_labels

    row = dict.fromkeys(COLUMNS, "")
    row |= {"model": "=cmd|' /C calc'!A0", "task": "t", "sample_id": "-1", "epoch": 1}
    row |= {"response": "@SUM(1+1)", "value": 0.5, "judge_score": 0.75}
    path = tmp_path / "labels.csv"
    write_label_rows(path, [row])
    (written,) = list(csv.DictReader(io.StringIO(path.read_text())))
    assert written["model"].startswith("'=") and written["response"] == "'@SUM(1+1)"
    assert written["sample_id"] == "'-1" and written["judge_score"] == "0.75"
    (label,) = read_labels(path)
    assert (label.model, label.sample_id, label.value) == ("=cmd|' /C calc'!A0", "-1", 0.5)
