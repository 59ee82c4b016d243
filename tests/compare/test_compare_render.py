"""The terminal and Markdown views render the typed report and show no number it lacks."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from tests.support.rendered_numbers import unexplained_numbers

from plumbline.compare.analysis import compare_runs
from plumbline.compare.result import CompareReport, CompareSettings
from plumbline.records.run_record import RunRecordTable, read_run_records
from plumbline.views.compare import render_markdown, render_terminal


def _reports(example_path: Path, several: RunRecordTable) -> list[CompareReport]:
    example = read_run_records([example_path])
    return [
        compare_runs(
            example,
            treatments=["with_skelly"],
            control="without_skelly",
            settings=CompareSettings(n_resamples=300),
        ),
        compare_runs(
            example,
            treatments=["with_skelly"],
            control="without_skelly",
            settings=CompareSettings(n_resamples=300, rule="ci"),
        ),
        compare_runs(several, control="C", settings=CompareSettings(n_resamples=300)),
    ]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> list[CompareReport]:
    import json

    path = tmp_path_factory.mktemp("render") / "runs.jsonl"
    rows: list[dict[str, Any]] = [
        {
            "task_id": f"t{t}",
            "arm": arm,
            "repeat": k,
            "success": (t + k + i) % 3 != 0,
            "duration_seconds": 10.0 + 3 * i + k,
            "total_cost_usd": None if (t, k) == (0, 0) else 0.01 * (i + 1),
            "input_tokens": 1000 + 100 * i + k,
            "output_tokens": 100,
            "cache_read_tokens": 10,
            "cache_write_tokens": 1,
        }
        for t in range(3)
        for i, arm in enumerate(("A", "B", "C"))
        for k in range(4)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    example = Path(__file__).parents[2] / "src/plumbline/examples/agent_runs.jsonl"
    return _reports(example, read_run_records([path]))


def test_markdown_shows_only_numbers_of_the_report(reports: list[CompareReport]) -> None:
    for report in reports:
        text = render_markdown(report)
        assert "### Per task" in text
        assert unexplained_numbers(text, report.model_dump(mode="json")) == []


def test_terminal_shows_only_numbers_of_the_report(reports: list[CompareReport]) -> None:
    for report in reports:
        out = io.StringIO()
        render_terminal(report, Console(file=out, width=400, color_system=None))
        text = out.getvalue()
        assert "Arm summaries" in text
        assert unexplained_numbers(text, report.model_dump(mode="json")) == []
