"""The reliability page: a `plumbline reliability` report as HTML.

    pages = render_reliability_pages(read_site_input("reliability", "probe", document), "rel")

The report comes typed (`app.site` reads a document once) and is only rendered: every number on
the page is a field of the report, formatted through `plumbline.core.present`; the page reads
no trial records (failed trials, sample responses and per-trial latencies are in the report).
`reliability_view` turns the report into plain dataclasses (pure, unit-tested without a
browser); `render_reliability_pages` renders them with `reliability.html.j2`. Per model: CERT's
consistency score beside semantic agreement (they can disagree, and the page shows both),
latency percentiles, error classes with rates and Wilson intervals, output quality and
performance, failed trials and sample responses; then a model comparison (a sortable table,
charts, Cohen's d).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from plumbline.core import present
from plumbline.reliability.result import (
    ReliabilityReport,
)
from plumbline.views.html import Page, render_page
from plumbline.views.reliability import (
    BASELINE_HEADER,
    baseline_notes,
    baseline_rows,
)
from plumbline.views.reliability_charts import (
    ChartView,
    comparison_charts,
    comparison_table,
    effects,
)
from plumbline.views.reliability_model import Metric, ModelView, model_view
from plumbline.views.site import SiteInput
from plumbline.views.table import Cell, text_cell


@dataclass(frozen=True)
class ReliabilityView:
    title: str
    name: str
    models: list[ModelView]
    verdicts: list[str]
    table_header: list[tuple[str, bool]]
    table_rows: list[list[Cell]]
    charts: list[ChartView]
    effect_rows: list[list[Cell]]
    effect_charts: list[ChartView]
    config: list[tuple[str, str]]
    warnings: list[str]
    record_errors: list[str]
    sources: list[str]
    baseline: BaselineView | None = None


@dataclass(frozen=True)
class BaselineView:
    """The regression check against a baseline run: one line per pair, every metric's change."""

    summaries: list[tuple[str, str]]
    header: list[str]
    rows: list[list[Cell]]
    notes: list[str]


_VERDICT_TONE = {"regressed": "bad", "improved": "ok", "unchanged": "ok", "inconclusive": "warn"}


def baseline_view(report: ReliabilityReport) -> BaselineView | None:
    """The baseline comparison of the report, or None without one (rendered, not computed)."""
    comparison = report.baseline_comparison
    if comparison is None:
        return None
    rows = []
    for entry, cells in zip(comparison.entries, baseline_rows(comparison), strict=True):
        row = [text_cell(text) for text in cells]
        row[-1] = Cell(cells[-1], entry.verdict, _VERDICT_TONE[entry.verdict], "")
        rows.append(row)
    return BaselineView(
        summaries=[(pair.summary, _VERDICT_TONE[pair.verdict]) for pair in comparison.pairs],
        header=list(BASELINE_HEADER),
        rows=rows,
        notes=baseline_notes(comparison),
    )


def _config(report: ReliabilityReport) -> list[tuple[str, str]]:
    config = report.config
    return [
        ("embedding model", config.embedding_model_name),
        ("random seed", str(config.random_seed)),
        ("bootstrap resamples", present.number(config.bootstrap_resamples)),
        ("temperature", present.number(config.temperature)),
        ("max tokens", present.number(config.max_tokens)),
        ("timeout (s)", present.number(config.timeout)),
    ]


def reliability_view(
    report: ReliabilityReport, *, name: str = "", sources: Sequence[str] = ()
) -> ReliabilityView:
    """Everything the reliability page shows, from the typed report alone."""
    views = [model_view(report, m, index) for index, m in enumerate(report.models, start=1)]
    header, rows = comparison_table(report.models)
    effect_rows, effect_charts = effects(report.comparisons)
    names = [m.model for m in report.models]
    return ReliabilityView(
        title="Reliability: "
        + (", ".join(names[:3]) + (" …" if len(names) > 3 else "") if names else "no models"),
        name=name,
        models=views,
        verdicts=[m.verdict for m in report.models],
        table_header=header,
        table_rows=rows,
        charts=comparison_charts(report.models) if report.models else [],
        effect_rows=effect_rows,
        effect_charts=effect_charts,
        config=_config(report),
        warnings=report.warnings_for(None),
        record_errors=list(report.record_errors),
        sources=list(sources),
        baseline=baseline_view(report),
    )


#: The kind's name on the site's index.
TITLE = "Reliability"
#: The index card's headline for an earlier site's report this version cannot read.
UNREADABLE = "a reliability report this version cannot read: regenerate it"


def render_reliability_pages(site_input: SiteInput[ReliabilityReport], slug: str) -> list[Page]:
    """The reliability report of one document: `<slug>/index.html` (from the JSON alone)."""
    report = site_input.typed()
    view = reliability_view(
        report, name=site_input.name, sources=[str(p) for p in site_input.sources]
    )
    page = render_page(
        "reliability.html.j2",
        path=f"{slug}/index.html",
        title=view.title,
        view=view,
        data_path=f"data/{slug}.json",
    )
    if view.baseline is None:
        return [page]
    regression = render_page(
        "reliability_baseline.html.j2",
        path=f"{slug}/baseline.html",
        title=f"Regression check: {view.title}",
        view=view,
        data_path=f"data/{slug}.json",
    )
    return [page, regression]


render = render_reliability_pages


def card(site_input: SiteInput[ReliabilityReport]) -> dict[str, Any]:
    """The index card of a reliability report: its models and its warnings."""
    model_names = [model.model for model in site_input.typed().models]
    return {
        "title": ", ".join(model_names[:3]) + (" …" if len(model_names) > 3 else "")
        or site_input.name,
        "headline": f"{len(model_names)} model(s) over repeated trials",
        # the one warning list the reliability page shows, in full
        "facts": [f"{len(site_input.typed().warnings)} warning(s)"],
    }


__all__ = [
    "TITLE",
    "UNREADABLE",
    "BaselineView",
    "Metric",
    "ModelView",
    "ReliabilityView",
    "baseline_view",
    "card",
    "comparison_charts",
    "comparison_table",
    "effects",
    "model_view",
    "reliability_view",
    "render",
    "render_reliability_pages",
]
