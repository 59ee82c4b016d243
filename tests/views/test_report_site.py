"""Site inputs and writing: kinds detected, sources attached, problems said, self-contained."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from report_scenario import Scenario

from plumbline.app.site import (
    SITE_MARKER,
    SiteInputError,
    document_kind,
    load_site_inputs,
    read_site_input,
    write_site,
)
from plumbline.cli.main import main
from plumbline.views.site import SiteInput, assign_slugs, slugify


def test_leaderboard_document_and_its_logs_are_paired(scenario: Scenario) -> None:
    inputs = load_site_inputs([scenario.leaderboard, scenario.logs])
    assert len(inputs) == 1
    (board,) = inputs
    assert board.kind == "leaderboard"
    assert board.name == "leaderboard"
    assert board.data == scenario.document  # copied to the site as it came in
    assert board.result is not None and board.result.to_json() == scenario.document
    assert len(board.sources) == 5 and all(path.suffix == ".eval" for path in board.sources)


def test_document_kind_tells_the_three_results_apart(scenario: Scenario) -> None:
    assert document_kind(scenario.document) == "leaderboard"
    assert document_kind({"schema_version": "plumbline.compare/2"}) == "compare"
    assert document_kind({"schema_version": "plumbline.reliability/1"}) == "reliability"
    assert document_kind({"_metadata": {"schema_version": 1}, "models": []}) == "leaderboard"
    # SA Bench's own files have no schema_version: older leaderboards, upgraded when read
    assert document_kind({"_metadata": {"model_count": 0}, "models": []}) == "leaderboard"
    assert document_kind({"_metadata": {"schema_version": 7}, "models": []}) is None
    # the kind comes from schema_version alone, never from a document's shape
    assert document_kind({"decision": "x", "gates": [], "arm_summaries": {}}) is None
    assert document_kind({"config": {}, "models": [], "record_errors": []}) is None
    assert document_kind({"schema_version": "plumbline.unknown/1"}) is None
    assert document_kind({"models": []}) is None
    assert document_kind([1, 2]) is None


def test_unusable_inputs_are_each_reported_with_their_file(
    scenario: Scenario, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# hello\n")
    broken = tmp_path / "broken.json"
    broken.write_text('{"models": [\n')
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}')
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SiteInputError) as caught:
        load_site_inputs([notes, broken, other, empty, tmp_path / "absent.json"])
    problems = caught.value.problems
    assert problems[0].startswith(f"{notes}: not a JSON document")
    assert problems[1] == f"{broken}: line 2: invalid JSON: Expecting value"
    assert problems[2].startswith(f"{other}: not a plumbline leaderboard, compare or reliability")
    assert problems[3] == f"{empty}: a directory without Inspect logs (.eval or .json)"
    assert problems[4] == f"{tmp_path / 'absent.json'}: no such file or directory"


def test_sources_without_their_document_are_refused(scenario: Scenario) -> None:
    with pytest.raises(SiteInputError, match="without its JSON document"):
        load_site_inputs([scenario.logs])


def test_slugs_are_safe_and_distinct() -> None:
    assert slugify('My "Board" <script>') == "my-board-script"
    assert slugify("///") == "report"
    inputs = [SiteInput("leaderboard", name, {}) for name in ("a b", "A-B", "data", "index")]
    assert assign_slugs(inputs) == ["a-b", "a-b-2", "data-2", "index-2"]


def test_write_site_copies_every_document_and_links_it(scenario: Scenario, tmp_path: Path) -> None:
    inputs = load_site_inputs([scenario.leaderboard, scenario.logs])
    result = write_site(inputs, tmp_path / "site")
    assert result.index == tmp_path / "site" / "index.html"
    copied = json.loads((tmp_path / "site" / "data" / "leaderboard.json").read_text())
    assert copied == scenario.document
    index = result.index.read_text()
    assert 'href="leaderboard/index.html"' in index
    assert 'href="data/leaderboard.json"' in index
    assert sorted(p.relative_to(tmp_path / "site").as_posix() for p in result.pages) == [
        "index.html",
        "leaderboard/index.html",
        "leaderboard/models/mockllm-script-alert-1-script-img-src-x-onerror-alert-1.html",
        "leaderboard/models/scripted-oracle.html",
    ]
    # Self-contained: the site still has every page and its data after the inputs are gone.
    moved = tmp_path / "moved"
    shutil.copytree(tmp_path / "site", moved)
    shutil.rmtree(tmp_path / "site")
    assert (moved / "data" / "leaderboard.json").is_file()
    for page in moved.rglob("*.html"):
        assert "file://" not in page.read_text()


def test_report_command_prints_where_to_open_the_site(scenario: Scenario, tmp_path: Path) -> None:
    out = tmp_path / "site"
    result = CliRunner().invoke(
        main, ["report", str(scenario.leaderboard), str(scenario.logs), "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert f"Open {(out / 'index.html').resolve().as_uri()}" in result.output
    assert (out / "leaderboard" / "index.html").is_file()


def test_report_command_exits_2_on_bad_input(tmp_path: Path) -> None:
    missing = tmp_path / "nothing.json"
    result = CliRunner().invoke(main, ["report", str(missing), "-o", str(tmp_path / "s")])
    assert result.exit_code == 2
    assert f"error: {missing}: no such file or directory" in result.output
    assert not (tmp_path / "s").exists()


def test_index_headline_names_a_tie_at_the_top(scenario: Scenario, tmp_path: Path) -> None:
    document = json.loads(json.dumps(scenario.document))
    for entry in document["models"]:
        entry["tie_group"] = 1
    names = [entry["model"] for entry in document["models"]]
    document["tie_groups"] = [{"group": 1, "size": len(names), "models": names}]
    result = write_site([read_site_input("leaderboard", "tied", document, ())], tmp_path)
    assert "2 models tied at the top: scripted/oracle, mockllm/" in result.index.read_text()
    alone = write_site([read_site_input("leaderboard", "b", scenario.document, ())], tmp_path / "b")
    assert "scripted/oracle leads with overall 66.2%" in alone.index.read_text()


def test_rewriting_a_site_removes_pages_it_no_longer_has(
    scenario: Scenario, tmp_path: Path
) -> None:
    write_site(load_site_inputs([scenario.leaderboard, scenario.logs]), tmp_path)
    models = tmp_path / "leaderboard" / "models"
    assert len(list(models.glob("*.html"))) == 2
    notes = models / "notes.html"
    notes.write_text("<p>mine</p>")
    document = json.loads(json.dumps(scenario.document))
    document["models"] = document["models"][:1]  # still self-consistent: count and groups
    kept = document["models"][0]
    document["_metadata"]["model_count"] = 1
    document["tie_groups"] = [{"group": kept["tie_group"], "size": 1, "models": [kept["model"]]}]
    write_site([read_site_input("leaderboard", "leaderboard", document, ())], tmp_path)
    assert sorted(p.name for p in models.glob("*.html")) == ["notes.html", "scripted-oracle.html"]


def test_html_option_sites_grow_instead_of_forgetting_earlier_reports(tmp_path: Path) -> None:
    from pages_support import (
        compare_document,
        example_trials,
        reliability_document,
        write_run_records,
    )
    from tests.support.site_pages import write_html

    runs = write_run_records(tmp_path / "runs.jsonl", ["control", "treatment"], ["t1", "t2"], 3)
    site = tmp_path / "site"
    write_html(
        "compare",
        "compare",
        compare_document([runs], treatments=["treatment"], control="control"),
        [runs],
        site,
    )
    result = write_html(
        "reliability", "reliability", reliability_document(example_trials()[:40]), [], site
    )
    index = result.index.read_text(encoding="utf-8")
    assert 'href="compare/index.html"' in index and 'href="reliability/index.html"' in index
    assert (site / "compare" / "index.html").is_file()
    # Rewriting one report replaces it under the same slug; the other stays listed.
    again = write_html(
        "compare",
        "compare",
        compare_document([runs], treatments=["treatment"], control="control"),
        [runs],
        site,
    )
    assert sorted(p.name for p in (site / "data").glob("*.json")) == [
        "compare.json",
        "reliability.json",
    ]
    assert 'href="reliability/index.html"' in again.index.read_text(encoding="utf-8")


def test_report_command_builds_a_fresh_site_from_its_inputs_only(
    scenario: Scenario, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    (site / "data").mkdir(parents=True)
    (site / SITE_MARKER).write_text("{}", encoding="utf-8")  # an earlier plumbline site
    (site / "old").mkdir()
    (site / "old" / "index.html").write_text("<p>old</p>", encoding="utf-8")
    shutil.copy(scenario.leaderboard, site / "data" / "old.json")
    result = write_site(load_site_inputs([scenario.leaderboard]), site)
    assert 'href="old/index.html"' not in result.index.read_text(encoding="utf-8")


def test_each_comparison_gets_only_the_run_records_it_was_computed_from(tmp_path: Path) -> None:
    from pages_support import compare_document, write_run_records

    arms = ["control", "treatment"]
    first = write_run_records(tmp_path / "first.jsonl", arms, ["t1", "t2"], 3)
    second = write_run_records(tmp_path / "second.jsonl", arms, ["u1", "u2", "u3"], 2)
    documents = []
    for records in (first, second):
        document = compare_document([records], treatments=["treatment"], control="control")
        target = tmp_path / f"{records.stem}-compare.json"
        target.write_text(json.dumps(document), encoding="utf-8")
        documents.append(target)
    inputs = load_site_inputs([*documents, first, second])
    assert [(i.name, i.sources) for i in inputs] == [
        ("first-compare", (first,)),
        ("second-compare", (second,)),
    ]
