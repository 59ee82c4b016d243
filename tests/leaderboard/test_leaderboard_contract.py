"""The leaderboard document as a contract: SA Bench's own schema, plumbline's generated schema,
documents of the previous release, and views that show only the document's numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner
from rich.console import Console
from tests.support.rendered_numbers import PERCENT_AXIS_TICKS, page_text, unexplained_numbers

from plumbline.app.site import read_site_input
from plumbline.cli.main import main
from plumbline.core.result import document_kind, schema_version
from plumbline.core.schema_files import shipped
from plumbline.leaderboard import (
    LeaderboardDocument,
    build_leaderboard,
    read_leaderboard,
)
from plumbline.leaderboard.document import document_problems
from plumbline.leaderboard.result import SCHEMA_VERSION
from plumbline.views.leaderboard import render_markdown, render_terminal
from plumbline.views.leaderboard_page import render_leaderboard_pages

FIXTURES = Path(__file__).parent / "fixtures"
#: SA Bench's published leaderboard schema (draft-07), written down from its methodology.
SA_BENCH_SCHEMA = FIXTURES / "sa_bench_leaderboard.schema.json"
#: A leaderboard written by the previous release (schema_version 1), from this scenario's logs.
PREVIOUS_RELEASE = FIXTURES / "leaderboard_v1.json"


def cli(*args: Any) -> Any:
    return CliRunner().invoke(main, [*map(str, args)], catch_exceptions=False)


# one xdist group: the module's tests read its leaderboards (`written`, `document`), built once
pytestmark = pytest.mark.xdist_group("leaderboard_contract")


@pytest.fixture(scope="module")
def written(clean_logs: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("contract") / "leaderboard.json"
    result = cli("leaderboard", clean_logs, "-o", out, "--run-id", "contract")
    assert result.exit_code == 0, result.output
    loaded: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return loaded


@pytest.fixture(scope="module")
def document(clean_logs: Path) -> LeaderboardDocument:
    return build_leaderboard(clean_logs, run_id="views").document()


def test_a_written_document_is_valid_under_sa_bench_schema(written: dict[str, Any]) -> None:
    schema = json.loads(SA_BENCH_SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
    assert [error.message for error in validator.iter_errors(written)] == []
    assert written["_metadata"]["schema_version"] == SCHEMA_VERSION
    assert schema_version("leaderboard", 2) == SCHEMA_VERSION
    assert document_kind(written) == "leaderboard"
    # SA Bench's row order: the model, its category scores, then overall.
    for row in written["models"]:
        keys = list(row)
        scored = [key for key in written["_metadata"]["categories"] if key in row]
        assert keys[: len(scored) + 2] == ["model", *scored, "overall"]


def test_sa_bench_schema_refuses_what_it_should(written: dict[str, Any]) -> None:
    """The fixture is a real check: a margin in the wrong form fails it."""
    schema = json.loads(SA_BENCH_SCHEMA.read_text(encoding="utf-8"))
    broken = json.loads(json.dumps(written))
    next(iter(broken["_metadata"]["categories"].values()))["margin"] = "5 percent"
    assert not jsonschema.Draft7Validator(schema).is_valid(broken)


def test_a_written_document_is_valid_under_the_generated_schema(written: dict[str, Any]) -> None:
    schema = shipped("leaderboard.schema.json")
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert [error.message for error in validator.iter_errors(written)] == []
    assert LeaderboardDocument.model_validate(written).to_json() == written


def test_a_previous_release_document_is_read_and_upgraded() -> None:
    old = json.loads(PREVIOUS_RELEASE.read_text(encoding="utf-8"))
    assert old["_metadata"]["schema_version"] == 1
    document = read_leaderboard(PREVIOUS_RELEASE)
    assert document.metadata.schema_version == "plumbline.leaderboard/2"
    assert document.metadata.sa_bench_equivalence == old["_metadata"]["seed_equivalence"]
    for before, after in zip(old["models"], document.models, strict=True):
        assert after.model == before["model"] and after.overall == before["overall"]
        assert after.sa_bench_group == before["seed_group"]
        assert after.intervals is not None and after.standard_errors is not None
        for key, interval in before["intervals"].items():
            upgraded = after.intervals[key]
            if interval is None:
                assert upgraded is None
                continue
            assert upgraded is not None
            assert (upgraded.low, upgraded.high) == (interval["low"], interval["high"])
            assert after.standard_errors[key] == interval["standard_error"]
    for before, pair in zip(old["comparisons"], document.comparisons, strict=True):
        assert pair.sa_bench_equivalent == before["seed_equivalent"]
        assert (pair.interval.low, pair.interval.high) == (before["low"], before["high"])
        assert pair.interval.method == before["method"]


def test_check_and_report_read_a_previous_release_document(tmp_path: Path) -> None:
    result = cli("leaderboard", "check", PREVIOUS_RELEASE, "--against", PREVIOUS_RELEASE)
    assert result.exit_code == 0, result.output
    assert "Reproducible" in result.output
    site = tmp_path / "site"
    result = cli("report", PREVIOUS_RELEASE, "-o", site)
    assert result.exit_code == 0, result.output
    pages = list(site.rglob("index.html"))
    html = next(p for p in pages if p.parent != site).read_text(encoding="utf-8")
    assert "mockllm/alpha" in html and "Adjacent comparisons" in html


def test_the_terminal_view_shows_only_the_document_numbers(document: LeaderboardDocument) -> None:
    console = Console(record=True, width=240)
    render_terminal(document, console)
    assert unexplained_numbers(console.export_text(), document.to_json()) == []


def test_the_markdown_shows_only_the_document_numbers(document: LeaderboardDocument) -> None:
    assert unexplained_numbers(render_markdown(document), document.to_json()) == []


def test_the_pages_show_only_the_document_numbers(document: LeaderboardDocument) -> None:
    data = document.to_json()
    pages = render_leaderboard_pages(read_site_input("leaderboard", "board", data, ()), "board")
    for page in pages:
        found = unexplained_numbers(page_text(page.html), data, allowed=PERCENT_AXIS_TICKS)
        assert found == [], page.path


def test_the_check_finds_an_unexplained_number(document: LeaderboardDocument) -> None:
    """The helper the three tests above rely on does catch a number the document lacks."""
    text = render_markdown(document) + "\n| extra | 0.123457 |\n"
    assert len(unexplained_numbers(text, document.to_json())) == 1


def test_tie_groups_must_agree_with_the_rows(written: dict[str, Any]) -> None:
    broken = json.loads(json.dumps(written))
    broken["models"][0]["tie_group"] = 9
    assert any("models[0].tie_group: 9" in p for p in document_problems(broken))
    assert document_problems(written) == []


def test_tie_groups_of_a_previous_release_document_come_from_its_rows() -> None:
    old = json.loads(PREVIOUS_RELEASE.read_text(encoding="utf-8"))
    document = read_leaderboard(PREVIOUS_RELEASE)
    listed = {name: group.group for group in document.tie_groups for name in group.models}
    assert listed == {row["model"]: row["tie_group"] for row in old["models"]}
