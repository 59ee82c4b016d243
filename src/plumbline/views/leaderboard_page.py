"""The leaderboard pages: the ranking with intervals and tie groups, and one page per model.

`leaderboard_view` arranges a `LeaderboardDocument` as rows and columns for the templates (no
HTML, no arithmetic: every number shown is a field of the document); the templates format through
`plumbline.core.present`. A category a model never ran is shown as *missing* (it counts 0 in
SA Bench's overall, and the page says so), errored samples are counted in every cell they touch,
and the methodology section quotes the formula and weights recorded in the document itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from plumbline.core import present
from plumbline.core.result import Interval
from plumbline.leaderboard.result import (
    GOOD_OUTCOMES,
    NEUTRAL_OUTCOMES,
    AdjacentPair,
    CategoryCounts,
    CategoryMetadata,
    DocumentReview,
    Inconsistency,
    JudgeCorrection,
    LeaderboardDocument,
    LeaderboardMetadata,
    LeaderboardRow,
    LeaderboardSamples,
    Problem,
)
from plumbline.views.cost import usd as cost_usd
from plumbline.views.html import Page, render_page
from plumbline.views.leaderboard import (
    adaptive_summary,
    margin_heading,
    margin_pair_names,
    open_pair_names,
    selection_cell,
)
from plumbline.views.site import SiteInput
from plumbline.views.svg import IntervalRow, interval_chart
from plumbline.views.svg_cost import CostPoint, cost_score_chart
from plumbline.views.svg_distribution import agreement_chart


@dataclass(frozen=True)
class CategoryColumn:
    """One category of the document, as a column."""

    key: str
    meta: CategoryMetadata

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def weight(self) -> float:
        return self.meta.weight

    @property
    def not_run(self) -> str | None:
        return self.meta.not_run

    @property
    def tooltip(self) -> str:
        meta = self.meta
        margin = meta.margin or "no margin (no interval could be computed)"
        return (
            f"{meta.name} ({self.key}): {meta.description}\n"
            f"weight {present.shortest(meta.weight)} · {present.number(meta.sample_count)} "
            f"samples · {meta.scoring} scoring · margin {margin}"
            + (f" ({meta.confidence} confidence)" if meta.confidence else "")
            + (f"\nnot run: {meta.not_run}" if meta.not_run else "")
        )


@dataclass(frozen=True)
class ScoreCell:
    """One model's score in one category (value None: the model has no score there)."""

    key: str
    value: float | None
    interval: Interval | None
    counts: CategoryCounts | None
    not_run: str | None = None

    @property
    def missing(self) -> bool:
        return self.value is None

    @property
    def n(self) -> int | None:
        return None if self.counts is None else self.counts.n

    @property
    def errors(self) -> int:
        return 0 if self.counts is None else self.counts.errors

    @property
    def excluded(self) -> int:
        return 0 if self.counts is None else self.counts.excluded

    @property
    def sort_key(self) -> str:
        return "" if self.value is None else repr(self.value)

    @property
    def tooltip(self) -> str:
        if self.not_run:
            return f"not run: {self.not_run} (left out of the overall)"
        if self.missing:
            return "missing: no scored samples for this category (counts 0 in overall)"
        text = present.percent(self.value)
        if self.n is not None:
            text += f" of n={present.number(self.n)}"
        if self.interval is not None and self.interval.low is not None:
            text += (
                f", {present.level(self.interval.level)} interval "
                f"{present.interval(self.interval, as_percent=True)} ({self.interval.method})"
            )
        if self.errors:
            text += f"; {present.number(self.errors)} errored or unscored sample(s)"
            text += " left out" if self.excluded else " counted as 0"
        return text


@dataclass(frozen=True)
class ModelRow:
    """One row of the document with its page name and its cells in column order."""

    entry: LeaderboardRow
    slug: str
    cells: tuple[ScoreCell, ...]

    @property
    def model(self) -> str:
        return self.entry.model

    @property
    def rank(self) -> int | None:
        return self.entry.rank

    @property
    def overall(self) -> float:
        return self.entry.overall

    @property
    def overall_interval(self) -> Interval | None:
        return self.entry.interval("overall")

    @property
    def tie_group(self) -> int | None:
        return self.entry.tie_group

    @property
    def errors(self) -> int | None:
        return self.entry.errors

    def cell(self, key: str) -> ScoreCell:
        for cell in self.cells:
            if cell.key == key:
                return cell
        raise KeyError(key)


@dataclass(frozen=True)
class LeaderboardView:
    document: LeaderboardDocument
    title: str
    columns: tuple[CategoryColumn, ...]
    rows: tuple[ModelRow, ...]
    formula: str
    interval_methods: tuple[str, ...]
    formula_mismatches: tuple[Inconsistency, ...] = ()
    """Models whose stated overall the formula does not reproduce (the document disagrees with
    its own weights): the page then never calls the formula 'exactly as computed'."""

    @property
    def metadata(self) -> LeaderboardMetadata:
        return self.document.metadata

    @property
    def comparisons(self) -> list[AdjacentPair]:
        return self.document.comparisons

    @property
    def problems(self) -> list[Problem]:
        return self.document.problems

    @property
    def tie_groups(self) -> list[tuple[int, list[str]]]:
        return [(group.group, group.models) for group in self.document.tie_groups]

    @property
    def adaptive_summary(self) -> str | None:
        """ "ranked with N of M calls ..." for an adaptive run; None otherwise."""
        run = self.document.adaptive
        return None if run is None else adaptive_summary(run)

    @property
    def open_pairs(self) -> list[str]:
        run = self.document.adaptive
        return [] if run is None else open_pair_names(run)

    @property
    def margin_pairs(self) -> list[str]:
        """The pairs ordered only up to the tie margin (`a over b`)."""
        run = self.document.adaptive
        return [] if run is None else margin_pair_names(run)

    @property
    def margin_heading(self) -> str:
        run = self.document.adaptive
        return "" if run is None else margin_heading(run)


def model_slugs(models: Sequence[str]) -> dict[str, str]:
    """A distinct, file-safe page name per model (`scripted/oracle` → `scripted-oracle`)."""
    slugs: dict[str, str] = {}
    taken: set[str] = set()
    for model in models:
        base = re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-")[:60].strip("-") or "model"
        slug, number = base, 2
        while slug in taken:
            slug, number = f"{base}-{number}", number + 1
        taken.add(slug)
        slugs[model] = slug
    return slugs


def _formula(document: LeaderboardDocument) -> str:
    if document.metadata.overall_formula:
        return document.metadata.overall_formula
    terms = " + ".join(
        f"({key} × {present.shortest(meta.weight)})" for key, meta in document.categories.items()
    )
    return f"overall = {terms}"


def leaderboard_view(typed: LeaderboardDocument, review: DocumentReview) -> LeaderboardView:
    """The leaderboard document as rows and columns for the page (models sorted by overall),
    with the overalls its review found inconsistent with its own weights."""
    columns = tuple(CategoryColumn(key, meta) for key, meta in typed.categories.items())
    entries = sorted(typed.models, key=lambda entry: (-entry.overall, entry.model))
    slugs = model_slugs([entry.model for entry in entries])
    rows: list[ModelRow] = []
    methods: list[str] = []
    for entry in entries:
        cells = tuple(
            ScoreCell(
                key=column.key,
                value=entry.score(column.key),
                interval=entry.interval(column.key),
                counts=entry.count(column.key),
                not_run=column.not_run,
            )
            for column in columns
        )
        intervals = (entry.intervals or {}).values()
        methods += [interval.method for interval in intervals if interval is not None]
        rows.append(ModelRow(entry=entry, slug=slugs[entry.model], cells=cells))
    suite = typed.metadata.suite
    return LeaderboardView(
        document=typed,
        title="" if suite is None else suite.title or suite.name,
        columns=columns,
        rows=tuple(rows),
        formula=_formula(typed),
        interval_methods=tuple(dict.fromkeys(methods)),
        formula_mismatches=tuple(review.inconsistent_overall),
    )


def overall_chart(view: LeaderboardView) -> Markup:
    """Overall scores with their intervals, one row per model, labelled with the tie group."""
    rows = [
        IntervalRow(
            label=row.model,
            estimate=row.overall,
            low=None if row.overall_interval is None else row.overall_interval.low,
            high=None if row.overall_interval is None else row.overall_interval.high,
            note=f"group {row.tie_group}" if row.tie_group is not None else "",
            css_class=f"tie-group-{row.tie_group}" if row.tie_group is not None else "",
        )
        for row in view.rows
    ]
    level = present.level(view.document.metadata.level or 0.95)
    return interval_chart(
        rows, x_label=f"overall score ({level} interval)", domain=(0, 1), percent=True
    )


def cost_chart(view: LeaderboardView) -> Markup | None:
    """Overall score against cost per sample, with both intervals and the front; None when no
    model has a cost."""
    front = {entry.model: entry for entry in view.document.pareto}
    points: list[CostPoint] = []
    for row in view.rows:
        cost = row.entry.cost
        if cost is None or cost.per_sample_usd.estimate is None:
            continue
        entry = front.get(row.model)
        interval = row.overall_interval
        points.append(
            CostPoint(
                label=row.model,
                cost=cost.per_sample_usd.estimate,
                score=row.overall,
                cost_low=cost.per_sample_usd.low,
                cost_high=cost.per_sample_usd.high,
                score_low=None if interval is None else interval.low,
                score_high=None if interval is None else interval.high,
                on_front=entry is not None and entry.on_front,
                probability=None if entry is None else entry.probability_on_front,
            )
        )
    if not points:
        return None
    level = present.level(view.document.metadata.level or 0.95)
    return cost_score_chart(points, x_label=f"cost per sample, USD ({level} intervals)")


def category_chart(view: LeaderboardView, column: CategoryColumn) -> Markup:
    """One category's scores with intervals; a model without the category is marked missing."""
    rows: list[IntervalRow] = []
    for row in view.rows:
        cell = row.cell(column.key)
        note = ""
        if cell.missing:
            note = "missing (counts 0 in overall)"
        elif cell.errors:
            note = f"{present.number(cell.errors)} error(s)"
        rows.append(
            IntervalRow(
                label=row.model,
                estimate=None if cell.missing else cell.value,
                low=None if cell.interval is None else cell.interval.low,
                high=None if cell.interval is None else cell.interval.high,
                note=note,
                tooltip=f"{row.model} · {column.name}: {cell.tooltip}",
            )
        )
    level = present.level(view.document.metadata.level or 0.95)
    return interval_chart(
        rows, x_label=f"{column.name} ({level} interval)", domain=(0, 1), percent=True, width=480
    )


@dataclass(frozen=True)
class CorrectionView:
    """One corrected category: every model's judge-only and corrected score, and the
    judge-against-human plot of its labelled samples."""

    column: CategoryColumn
    rows: tuple[tuple[str, JudgeCorrection], ...]
    chart: Markup


def correction_views(view: LeaderboardView) -> list[CorrectionView]:
    """The categories that human labels corrected, in column order."""
    found: list[CorrectionView] = []
    for column in view.columns:
        rows = tuple(
            (row.model, fix)
            for row in view.rows
            if (fix := (row.entry.corrections or {}).get(column.key)) is not None
        )
        if rows:
            chart = agreement_chart({model: fix.labelled for model, fix in rows})
            found.append(CorrectionView(column=column, rows=rows, chart=chart))
    return found


def outcome_class(outcome: str) -> str:
    """The badge class of an outcome: ok, warn (neither success nor the model's fault), bad."""
    if outcome in GOOD_OUTCOMES:
        return "ok"
    if outcome in NEUTRAL_OUTCOMES:
        return "warn"
    return "bad"


#: The kind's name on the site's index.
TITLE = "Leaderboard"
#: The index card's headline for an earlier site's leaderboard this version cannot read.
UNREADABLE = "a leaderboard this version cannot read: regenerate it"


def render_leaderboard_pages(site_input: SiteInput[LeaderboardDocument], slug: str) -> list[Page]:
    """The leaderboard page (`<slug>/index.html`) and one page per model (`<slug>/models/…`),
    with the samples of `site_input.samples` when the site was given the logs."""
    view = leaderboard_view(*site_input.typed_leaderboard())
    samples = site_input.samples or LeaderboardSamples()
    names = {column.key: column.name for column in view.columns}
    common: dict[str, Any] = {
        "view": view,
        "slug": slug,
        "has_samples": site_input.samples is not None,
        "sample_problems": samples.problems,
        "failure_tables": samples.failure_modes,
        "outcome_class": outcome_class,
    }
    pages = [
        render_page(
            "leaderboard.html.j2",
            path=f"{slug}/index.html",
            title=f"{view.title} leaderboard" if view.title else "Leaderboard",
            overall_chart=overall_chart(view),
            cost_chart=cost_chart(view),
            front={entry.model: entry for entry in view.document.pareto},
            cost_usd=cost_usd,
            category_charts=[(column, category_chart(view, column)) for column in view.columns],
            corrections=correction_views(view),
            selection_cell=selection_cell,
            failure_rows=view.rows,
            **common,
        )
    ]
    for row in view.rows:
        model_samples = samples.for_model(row.model)
        pages.append(
            render_page(
                "leaderboard_model.html.j2",
                path=f"{slug}/models/{row.slug}.html",
                title=f"{row.model} · {view.title or 'leaderboard'}",
                row=row,
                samples=model_samples,
                category_names=names,
                categories=[
                    c for c in view.columns if any(s.category == c.key for s in model_samples)
                ],
                outcomes=sorted({s.outcome for s in model_samples}),
                failure_rows=[row],
                **common,
            )
        )
    return pages


render = render_leaderboard_pages


def card(site_input: SiteInput[LeaderboardDocument]) -> dict[str, Any]:
    """The index card of a leaderboard: its numbers from the typed document."""
    board, _ = site_input.typed_leaderboard()
    metadata = board.metadata
    ranked = sorted(board.models, key=lambda entry: (-entry.overall, entry.model))
    top = board.tie_groups[0] if board.tie_groups else None
    if not ranked:
        headline = "no models scored"
    elif top is not None and top.size > 1:
        listed = ", ".join(top.models[:3])
        headline = f"{present.number(top.size)} models tied at the top: {listed}" + (
            " …" if top.size > 3 else ""
        )
    else:
        leader = ranked[0]
        headline = f"{leader.model} leads with overall {present.percent(leader.overall)}"
    suite = metadata.suite
    return {
        "title": (suite.title or suite.name) if suite is not None else site_input.name,
        "headline": headline,
        "facts": [
            f"{present.number(metadata.model_count)} model(s)",
            f"{present.number(len(metadata.categories))} categories",
            f"generated {metadata.generated_at}",
        ],
    }
