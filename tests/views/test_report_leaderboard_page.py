"""The leaderboard view model and the samples read back from the logs, without a browser."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
from report_scenario import HOSTILE, HOSTILE_MODEL, HOSTILE_RESPONSE, Scenario
from tests.support.leaderboards import typed_leaderboard
from tests.support.rendered_numbers import PERCENT_AXIS_TICKS, page_text, unexplained_numbers

from plumbline.app.site import SAMPLES_FILE, read_site_input, write_site
from plumbline.core.schema_files import shipped
from plumbline.leaderboard import recompute_overall
from plumbline.leaderboard.result import LeaderboardSamples
from plumbline.leaderboard.samples import read_leaderboard_samples
from plumbline.views.leaderboard_page import (
    leaderboard_view,
    model_slugs,
    render_leaderboard_pages,
)


def test_rows_sorted_by_overall_with_missing_and_errors_marked(scenario: Scenario) -> None:
    view = leaderboard_view(*typed_leaderboard(scenario.document))
    assert [row.model for row in view.rows] == ["scripted/oracle", HOSTILE_MODEL]
    oracle, hostile = view.rows
    assert oracle.overall > hostile.overall
    cdk = oracle.cell("cdk_synth")
    assert cdk.missing and cdk.value is None and cdk.sort_key == ""
    assert "counts 0 in overall" in cdk.tooltip
    # The hostile model's first call failed: one errored practice-exam sample, counted as 0.
    errored = hostile.cell("practice_exam")
    assert errored.errors == 1 and not errored.missing
    assert "1 errored or unscored sample(s) counted as 0" in errored.tooltip
    assert hostile.errors == 1
    # A real 0 is a value, not a missing category.
    assert hostile.cell("architecture_design").value == 0.0
    assert not hostile.cell("architecture_design").missing
    assert [group for group, _ in view.tie_groups] == [1, 2]


def test_column_tooltips_and_methodology_come_from_the_document(scenario: Scenario) -> None:
    view = leaderboard_view(*typed_leaderboard(scenario.document))
    meta = scenario.document["_metadata"]
    assert [c.key for c in view.columns] == list(meta["categories"])
    for column in view.columns:
        category = meta["categories"][column.key]
        assert category["name"] in column.tooltip
        assert category["description"] in column.tooltip
        assert f"{category['sample_count']} samples" in column.tooltip
        assert f"{category['scoring']} scoring" in column.tooltip
        assert f"margin {category['margin']}" in column.tooltip
        assert column.weight == category["weight"]
    assert view.formula == meta["overall_formula"]
    # The formula shown is the one the overall values satisfy.
    for entry in view.document.models:
        assert abs(recompute_overall(view.document, entry) - entry.overall) < 1e-12
    assert "Wilson" in view.interval_methods


def test_samples_read_back_from_the_logs(scenario: Scenario) -> None:
    samples = read_leaderboard_samples(scenario.document, [scenario.logs])
    assert samples.problems == []
    oracle = samples.for_model("scripted/oracle")
    hostile = samples.for_model(HOSTILE_MODEL)
    assert len(oracle) == 6 and len(hostile) == 8
    assert {s.category for s in oracle} == {"practice_exam", "architecture_design"}
    errored = [s for s in hostile if s.outcome == "error"]
    assert len(errored) == 1 and errored[0].value is None
    assert errored[0].error is not None and "mock provider failure" in errored[0].error
    cdk = [s for s in hostile if s.category == "cdk_synth"]
    assert {s.outcome for s in cdk} == {"extraction_failed"}
    assert all(dict(s.highlights)["outcome"] == "extraction_failed" for s in cdk)
    assert all(s.response == HOSTILE_RESPONSE for s in hostile if s.outcome != "error")
    questions = [s for s in oracle if s.category == "practice_exam"]
    assert all("\nA) " in s.question and "\nB) " in s.question for s in questions)
    assert {s.outcome for s in questions} == {"correct"}


def test_failure_modes_per_model(scenario: Scenario) -> None:
    samples = read_leaderboard_samples(scenario.document, [scenario.logs])
    (table,) = samples.failure_modes
    assert table.category == "cdk_synth"
    assert table.outcomes == ["extraction_failed"]
    rows = {row.model: (row.total, row.counts, row.shares) for row in table.rows}
    assert rows == {"scripted/oracle": (0, [0], [None]), HOSTILE_MODEL: (2, [2], [1.0])}


def test_pages_escape_model_text(scenario: Scenario) -> None:
    pages = render_leaderboard_pages(
        read_site_input("leaderboard", "board", scenario.document, [scenario.logs]), "board"
    )
    slug = model_slugs([HOSTILE_MODEL])[HOSTILE_MODEL]
    assert [page.path for page in pages] == [
        "board/index.html",
        "board/models/scripted-oracle.html",
        f"board/models/{slug}.html",
    ]
    for page in pages:
        assert HOSTILE not in page.html
        assert "<img" not in page.html
    for page in (pages[0], pages[2]):
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.html


def test_pages_with_samples_show_only_the_numbers_of_their_documents(scenario: Scenario) -> None:
    """The model pages and failure-mode tables render the samples document, computing
    nothing: every number on them is a field of the leaderboard or of its samples."""
    given = read_site_input("leaderboard", "board", scenario.document, [scenario.logs])
    assert given.samples is not None and given.samples.failure_modes
    documents = [scenario.document, given.samples.model_dump(mode="json")]
    for page in render_leaderboard_pages(given, "board"):
        # A sample's <summary> is the first words of the question or response shown in full
        # beside it: text, cut short.
        text = page_text(page.html, skip=("summary",))
        assert unexplained_numbers(text, documents, allowed=PERCENT_AXIS_TICKS) == [], page.path
    # The check can fail here: a count neither document holds is reported.
    assert unexplained_numbers("extraction_failed 9,876", documents) != []


def test_the_site_ships_the_samples_document_it_rendered(
    scenario: Scenario, tmp_path: Path
) -> None:
    given = read_site_input("leaderboard", "board", scenario.document, [scenario.logs])
    site = write_site([given], tmp_path / "site")
    path = tmp_path / "site" / "data" / "board" / SAMPLES_FILE
    assert path in site.data
    written = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(shipped("leaderboard_samples.schema.json")).validate(written)
    assert LeaderboardSamples.model_validate(written) == given.samples
    assert written["schema_version"] == "plumbline.leaderboard_samples/1"
    # Rebuilt without the logs, the site no longer keeps samples no page shows.
    write_site([read_site_input("leaderboard", "board", scenario.document, ())], tmp_path / "site")
    assert not path.exists()


def test_pages_without_logs_say_how_to_get_samples(scenario: Scenario) -> None:
    pages = render_leaderboard_pages(
        read_site_input("leaderboard", "b", scenario.document, ()), "b"
    )
    assert "plumbline report" in pages[0].html
    assert "cannot be shown" in pages[1].html


def sa_bench_only(document: dict[str, Any]) -> dict[str, Any]:
    """The same leaderboard with only SA Bench's schema fields (as a published file has)."""
    required = ("name", "description", "weight", "sample_count", "scoring")
    meta = document["_metadata"]
    return {
        "_metadata": {
            "generated_at": meta["generated_at"],
            "model_count": meta["model_count"],
            "categories": {
                key: {field: value[field] for field in required}
                for key, value in meta["categories"].items()
            },
        },
        "models": [
            {
                k: v
                for k, v in entry.items()
                if k == "model" or k == "overall" or k in meta["categories"]
            }
            for entry in document["models"]
        ],
    }


def test_an_sa_bench_only_file_shows_unknowns_as_unknown(scenario: Scenario) -> None:
    document = sa_bench_only(scenario.document)
    view = leaderboard_view(*typed_leaderboard(document))
    oracle = view.rows[0]
    assert oracle.tie_group is None and oracle.errors is None
    assert oracle.cell("cdk_synth").missing  # absent from the entry: missing, not 0
    assert oracle.cell("practice_exam").n is None
    assert view.formula == (
        "overall = (practice_exam × 0.34) + (architecture_design × 0.33) + (cdk_synth × 0.33)"
    )
    html = render_leaderboard_pages(read_site_input("leaderboard", "old", document, ()), "old")[
        0
    ].html
    assert "group None" not in html and "n=0" not in html and "None" not in html
    assert "no interval" in html
    assert "this leaderboard file does not count errors" in html
