"""Issue 15's compare case: 6 tasks × 3 repeats read through the real reader and the real CLI.

The decision must come with its small-sample caveat in the terminal, Markdown, HTML and JSON;
`--fail-unless` must say which gate failed; the JSON decision carries a role; null cache fields
are not "missing token counts"; a test that cannot run says why in words; a metric with no data
is not plotted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from plumbline.cli.main import main
from plumbline.compare.analysis import compare_runs
from plumbline.records.run_record import read_run_records

FAST = ["--resamples", "300"]
TASKS = [f"task-{i}" for i in range(6)]
FAIL_UNLESS = ["--fail-unless", "prefer-treatment"]


def _records(run: Any, **overrides: Any) -> list[dict[str, Any]]:
    rows = []
    for t, task in enumerate(TASKS):
        for arm in ("new-prompt", "old-prompt"):
            for k in range(3):
                fields: dict[str, Any] = {
                    "success": (t + k) % 3 != 0,  # same outcomes in both arms: a success tie
                    "duration_seconds": 8.0 if arm == "new-prompt" else 10.0,
                    "input_tokens": 900 if arm == "new-prompt" else 1000,
                    "cache_read_tokens": None,
                    "cache_write_tokens": None,
                }
                fields.update(overrides)
                rows.append(run(task_id=task, arm=arm, repeat=k, **fields))
    return rows


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, ["compare", *args], catch_exceptions=False)


def test_six_tasks_three_repeats_says_so_beside_the_decision(tmp_path: Path, run: Any) -> None:
    path = _write(tmp_path / "runs.jsonl", _records(run))
    md, js, html = tmp_path / "a.md", tmp_path / "a.json", tmp_path / "site"
    result = invoke(
        str(path),
        *FAST,
        "-t",
        "new-prompt",
        "-c",
        "old-prompt",
        "--markdown",
        str(md),
        "--json",
        str(js),
        "--html",
        str(html),
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("prefer new-prompt")
    assert lines[1].startswith("Too little data to rely on this decision:")
    data = json.loads(js.read_text())
    assert data["decision"] == "prefer new-prompt" and data["decision_role"] == "treatment"
    assert "3 repeats per task where the A/B schema asks for at least 5" in data["caveat"]
    flat = " ".join(result.output.split())  # the terminal wraps long lines
    assert data["caveat"] in flat
    assert flat.index(data["caveat"]) < flat.index("Gates")
    assert "6 paired tasks" in data["caveat"]
    markdown = md.read_text()
    decision_at = markdown.index("**Decision: prefer new-prompt**")
    assert markdown.index(f"**{data['caveat']}**") > decision_at
    page = next(html.rglob("*.html")).read_text()
    pages = "".join(p.read_text() for p in html.rglob("*.html"))
    assert "small sample" in pages and "Too little data to rely on this decision" in pages
    assert page  # the site was written
    # the pass-rate interval over 6 tasks is labelled approximate
    assert data["paired"]["pass_delta"]["ci"]["method"].endswith("approximate: 6 tasks)")
    assert "approximate" in flat


def test_null_cache_fields_are_not_missing_token_counts(tmp_path: Path, run: Any) -> None:
    table = read_run_records([_write(tmp_path / "runs.jsonl", _records(run))])
    report = compare_runs(table, treatments=["new-prompt"], control="old-prompt")
    text = " ".join(report.warnings)
    assert "lack input or output token counts" not in text
    assert "new-prompt: 18 of 18 runs have no cache token counts" in text
    assert "non-cache tokens are unaffected" in text


def test_missing_tokens_read_plainly_and_are_not_plotted(tmp_path: Path, run: Any) -> None:
    rows = _records(run, input_tokens=None, output_tokens=None)
    path = _write(tmp_path / "runs.jsonl", rows)
    html, md = tmp_path / "site", tmp_path / "a.md"
    result = invoke(
        str(path),
        *FAST,
        "-t",
        "new-prompt",
        "-c",
        "old-prompt",
        "--html",
        str(html),
        "--markdown",
        str(md),
    )
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    markdown = md.read_text()
    assert "needs at least" not in flat + markdown and " x " not in flat + markdown
    assert "not computed: 0 paired runs have a value here (2 needed)" in markdown
    assert "not computed: 0 paired runs have a value here (1 needed)" in markdown
    assert "18 of 18 runs lack input or output token counts" in flat
    pages = "".join(p.read_text() for p in html.rglob("*.html"))
    assert "omitted: no run has a non_cache_tokens value" in pages
    assert "omitted: no run has a total_tokens value" in pages


def test_fail_unless_names_the_failed_gate(tmp_path: Path, run: Any) -> None:
    rows = _records(run)
    for row in rows:
        if row["arm"] == "new-prompt":
            row["duration_seconds"] = 12.0  # slower: the duration gate fails for the treatment
    path = _write(tmp_path / "runs.jsonl", rows)
    result = CliRunner().invoke(
        main,
        ["compare", str(path), *FAST, "-t", "new-prompt", "-c", "old-prompt", *FAIL_UNLESS],
        catch_exceptions=False,
    )
    assert result.exit_code == 1
    flat = " ".join(result.output.split())
    assert "--fail-unless prefer-treatment: new-prompt vs old-prompt decided" in flat
    assert "failed gate: median_duration_seconds" in flat
    assert "treatment 12, control 10" in flat


def test_an_arm_named_treatment_cannot_be_misread(tmp_path: Path, run: Any) -> None:
    rows = _records(run)
    for row in rows:
        row["arm"] = "treatment" if row["arm"] == "old-prompt" else "baseline"
    table = read_run_records([_write(tmp_path / "runs.jsonl", rows)])
    # "treatment" is the control here, and it is slower and costlier than "baseline"
    report = compare_runs(table, treatments=["baseline"], control="treatment")
    document = report.model_dump(mode="json")
    assert document["decision"] == "prefer baseline"
    assert document["decision_role"] == "treatment"
    rows_swapped = compare_runs(table, treatments=["treatment"], control="baseline").model_dump(
        mode="json"
    )
    assert rows_swapped["decision"] == "prefer baseline"
    assert rows_swapped["decision_role"] == "control"
