"""The leaderboard pages: the ranking with intervals and tie groups, and one page per model.

`leaderboard_view` turns a leaderboard document into plain rows and columns (no HTML); the
templates draw them. A category a model never ran is shown as *missing* (it counts 0 in the
seed's overall, and the page says so), errored samples are counted in every cell they touch,
and the methodology section quotes the formula and weights recorded in the document itself.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from plumbline.report.html import Page, fmt_pct, render_page
from plumbline.report.leaderboard_samples import SampleSet, SampleView, read_leaderboard_samples
from plumbline.report.site import SiteInput
from plumbline.report.svg import IntervalRow, interval_chart

#: Outcomes that are not a failure of the model (shown in green / grey, not red).
GOOD_OUTCOMES = frozenset({"passed", "correct"})
NEUTRAL_OUTCOMES = frozenset({"partial", "infra_error", "unscored"})


@dataclass(frozen=True)
class CategoryColumn:
    key: str
    name: str
    description: str
    weight: float
    sample_count: int
    scoring: str
    margin: str | None
    confidence: str | None
    scorer: str
    tasks: tuple[str, ...]
    models_missing: tuple[str, ...]
    not_run: str | None = None

    @property
    def tooltip(self) -> str:
        margin = self.margin or "no margin (no interval could be computed)"
        return (
            f"{self.name} ({self.key}): {self.description}\n"
            f"weight {self.weight:g} · {self.sample_count} samples · {self.scoring} scoring · "
            f"margin {margin}"
            + (f" ({self.confidence} confidence)" if self.confidence else "")
            + (f"\nnot run: {self.not_run}" if self.not_run else "")
        )


@dataclass(frozen=True)
class Cell:
    """One model's score in one category (value None: the model has no score there)."""

    key: str
    value: float | None
    low: float | None
    high: float | None
    method: str | None
    n: int | None
    errors: int
    excluded: int
    missing: bool
    not_run: str | None = None

    @property
    def sort_key(self) -> str:
        return "" if self.value is None else repr(self.value)

    @property
    def tooltip(self) -> str:
        if self.not_run:
            return f"not run: {self.not_run} (counts 0 in overall)"
        if self.missing:
            return "missing: no scored samples for this category (counts 0 in overall)"
        text = fmt_pct(self.value) + (f" of n={self.n}" if self.n is not None else "")
        if self.low is not None and self.high is not None:
            text += f", 95% interval [{fmt_pct(self.low)}, {fmt_pct(self.high)}]"
        if self.method:
            text += f" ({self.method})"
        if self.errors:
            text += f"; {self.errors} errored or unscored sample(s)"
            text += " left out" if self.excluded else " counted as 0"
        return text


@dataclass(frozen=True)
class ModelRow:
    model: str
    slug: str
    rank: int | None
    overall: float
    overall_low: float | None
    overall_high: float | None
    overall_method: str | None
    tie_group: int | None
    seed_group: int | None
    errors: int | None
    missing: tuple[str, ...]
    cells: tuple[Cell, ...]

    def cell(self, key: str) -> Cell:
        for cell in self.cells:
            if cell.key == key:
                return cell
        raise KeyError(key)


@dataclass(frozen=True)
class ComparisonRow:
    higher: str
    lower: str
    difference: float | None
    low: float | None
    high: float | None
    pvalue_holm: float | None
    tied: bool
    seed_equivalent: bool
    method: str
    unpaired: tuple[str, ...] = ()


@dataclass(frozen=True)
class LeaderboardView:
    title: str
    suite_name: str
    generated_at: str
    run_id: str | None
    columns: tuple[CategoryColumn, ...]
    rows: tuple[ModelRow, ...]
    comparisons: tuple[ComparisonRow, ...]
    problems: tuple[Mapping[str, Any], ...]
    formula: str
    errors_policy: str | None
    level: float
    tie_rule: str | None
    seed_equivalence: float | None
    interval_methods: tuple[str, ...]
    log_count: int | None
    logs_used: int | None
    tie_groups: tuple[tuple[int, tuple[str, ...]], ...] = field(default_factory=tuple)
    formula_mismatches: tuple[Mapping[str, Any], ...] = field(default_factory=tuple)
    """Models whose stated overall the formula does not reproduce (the document disagrees with
    its own weights): the page then never calls the formula 'exactly as computed'."""


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _errors(entry: Mapping[str, Any], cells: Sequence[Cell], *, counted: bool) -> int | None:
    """The model's error count; None when the document does not say (a seed-only file)."""
    if isinstance(entry.get("errors"), int):
        return int(entry["errors"])
    return sum(cell.errors for cell in cells) if counted else None


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


def _formula(metadata: Mapping[str, Any], columns: Sequence[CategoryColumn]) -> str:
    recorded = metadata.get("overall_formula")
    if isinstance(recorded, str) and recorded:
        return recorded
    terms = " + ".join(f"({column.key} × {column.weight:g})" for column in columns)
    return f"overall = {terms}"


def leaderboard_view(document: Mapping[str, Any]) -> LeaderboardView:
    """The leaderboard document as rows and columns for the page (models sorted by overall)."""
    metadata: Mapping[str, Any] = document.get("_metadata", {})
    columns = tuple(
        CategoryColumn(
            key=key,
            name=str(meta.get("name", key)),
            description=str(meta.get("description", "")),
            weight=float(meta.get("weight", 0.0)),
            sample_count=int(meta.get("sample_count", 0)),
            scoring=str(meta.get("scoring", "")),
            margin=meta.get("margin"),
            confidence=meta.get("confidence"),
            scorer=str(meta.get("scorer", "")),
            tasks=tuple(meta.get("tasks", ())),
            models_missing=tuple(meta.get("models_missing", ())),
            not_run=str(meta["not_run"]) if meta.get("not_run") else None,
        )
        for key, meta in metadata.get("categories", {}).items()
    )
    entries = sorted(
        document.get("models", []),
        key=lambda entry: (-float(entry.get("overall", 0.0)), str(entry.get("model"))),
    )
    slugs = model_slugs([str(entry["model"]) for entry in entries])
    rows: list[ModelRow] = []
    methods: list[str] = []
    for position, entry in enumerate(entries, start=1):
        intervals: Mapping[str, Any] = entry.get("intervals") or {}
        counts: Mapping[str, Any] = entry.get("counts") or {}
        missing = tuple(entry.get("missing", ()))
        cells: list[Cell] = []
        for column in columns:
            interval = intervals.get(column.key) or {}
            count = counts.get(column.key) or {}
            value = _float(entry.get(column.key))
            if interval.get("method"):
                methods.append(str(interval["method"]))
            cells.append(
                Cell(
                    key=column.key,
                    value=value,
                    low=_float(interval.get("low")),
                    high=_float(interval.get("high")),
                    method=interval.get("method"),
                    n=int(count["n"]) if "n" in count else None,
                    errors=int(count.get("errors", 0)),
                    excluded=int(count.get("excluded", 0)),
                    missing=value is None or column.key in missing,
                    not_run=column.not_run,
                )
            )
        overall = intervals.get("overall") or {}
        if overall.get("method"):
            methods.append(str(overall["method"]))
        rows.append(
            ModelRow(
                model=str(entry["model"]),
                slug=slugs[str(entry["model"])],
                rank=entry.get("rank", position),
                overall=float(entry["overall"]),
                overall_low=_float(overall.get("low")),
                overall_high=_float(overall.get("high")),
                overall_method=overall.get("method"),
                tie_group=entry.get("tie_group"),
                seed_group=entry.get("seed_group"),
                errors=_errors(entry, cells, counted=bool(counts)),
                missing=missing,
                cells=tuple(cells),
            )
        )
    groups: dict[int, list[str]] = {}
    for row in rows:
        if row.tie_group is not None:
            groups.setdefault(row.tie_group, []).append(row.model)
    comparisons = tuple(
        ComparisonRow(
            higher=str(item.get("higher")),
            lower=str(item.get("lower")),
            difference=_float(item.get("difference")),
            low=_float(item.get("low")),
            high=_float(item.get("high")),
            pvalue_holm=_float(item.get("pvalue_holm")),
            tied=bool(item.get("tied")),
            seed_equivalent=bool(item.get("seed_equivalent")),
            method=str(item.get("method", "")),
            unpaired=tuple(str(key) for key in item.get("unpaired") or ()),
        )
        for item in document.get("comparisons", [])
    )
    suite = metadata.get("suite") or {}
    return LeaderboardView(
        title=str(suite.get("title") or suite.get("name") or ""),
        suite_name=str(suite.get("name", "")),
        generated_at=str(metadata.get("generated_at", "")),
        run_id=metadata.get("run_id"),
        columns=columns,
        rows=tuple(rows),
        comparisons=comparisons,
        problems=tuple(document.get("problems", [])),
        formula=_formula(metadata, columns),
        errors_policy=metadata.get("errors_policy"),
        level=float(metadata.get("level", 0.95)),
        tie_rule=metadata.get("tie_rule"),
        seed_equivalence=_float(metadata.get("seed_equivalence")),
        interval_methods=tuple(dict.fromkeys(methods)),
        log_count=metadata.get("log_count"),
        logs_used=metadata.get("logs_used"),
        tie_groups=tuple((group, tuple(models)) for group, models in groups.items()),
        formula_mismatches=_formula_mismatches(document),
    )


def _formula_mismatches(document: Mapping[str, Any]) -> tuple[Mapping[str, Any], ...]:
    from plumbline.leaderboard.check import review_document

    if not isinstance(document.get("models"), list):
        return ()
    review = review_document(dict(document), "document")
    return tuple(entry.to_dict() for entry in review.inconsistent)


def overall_chart(view: LeaderboardView) -> Markup:
    """Overall scores with their intervals, one row per model, labelled with the tie group."""
    rows = [
        IntervalRow(
            label=row.model,
            estimate=row.overall,
            low=row.overall_low,
            high=row.overall_high,
            note=f"group {row.tie_group}" if row.tie_group is not None else "",
            css_class=f"tie-group-{row.tie_group}" if row.tie_group is not None else "",
        )
        for row in view.rows
    ]
    return interval_chart(rows, x_label="overall score (95% interval)", domain=(0, 1), percent=True)


def category_chart(view: LeaderboardView, column: CategoryColumn) -> Markup:
    """One category's scores with intervals; a model without the category is marked missing."""
    rows: list[IntervalRow] = []
    for row in view.rows:
        cell = row.cell(column.key)
        note = ""
        if cell.missing:
            note = "missing (counts 0 in overall)"
        elif cell.errors:
            note = f"{cell.errors} error(s)"
        rows.append(
            IntervalRow(
                label=row.model,
                estimate=None if cell.missing else cell.value,
                low=cell.low,
                high=cell.high,
                note=note,
                tooltip=f"{row.model} · {column.name}: {cell.tooltip}",
            )
        )
    return interval_chart(
        rows, x_label=f"{column.name} (95% interval)", domain=(0, 1), percent=True, width=480
    )


@dataclass(frozen=True)
class FailureModes:
    """Per model, how many samples of one category ended in each outcome."""

    category: str
    name: str
    outcomes: tuple[str, ...]
    rows: tuple[tuple[str, str, int, tuple[int, ...]], ...]  # model, slug, total, counts


def failure_modes(
    view: LeaderboardView, samples: SampleSet, *, models: Sequence[str] | None = None
) -> list[FailureModes]:
    """Outcome counts per model for every category whose scorer reports outcomes (CDK)."""
    tables: list[FailureModes] = []
    wanted = set(models) if models is not None else None
    for column in view.columns:
        in_category = [s for s in samples.samples if s.category == column.key]
        if not any("outcome" in s.metadata for s in in_category):
            continue
        outcomes = Counter(s.outcome for s in in_category)
        order = sorted(outcomes, key=lambda o: (o not in GOOD_OUTCOMES, -outcomes[o], o))
        rows = []
        for row in view.rows:
            if wanted is not None and row.model not in wanted:
                continue
            counts = samples.outcome_counts(row.model, column.key)
            total = sum(counts.values())
            rows.append((row.model, row.slug, total, tuple(counts.get(o, 0) for o in order)))
        tables.append(FailureModes(column.key, column.name, tuple(order), tuple(rows)))
    return tables


def outcome_class(outcome: str) -> str:
    """The badge class of an outcome: ok, warn (neither success nor the model's fault), bad."""
    if outcome in GOOD_OUTCOMES:
        return "ok"
    if outcome in NEUTRAL_OUTCOMES:
        return "warn"
    return "bad"


def render_leaderboard_pages(site_input: SiteInput, slug: str) -> list[Page]:
    """The leaderboard page (`<slug>/index.html`) and one page per model (`<slug>/models/…`)."""
    view = leaderboard_view(site_input.document)
    samples = (
        read_leaderboard_samples(site_input.document, site_input.sources)
        if site_input.sources
        else SampleSet()
    )
    has_samples = bool(site_input.sources)
    names = {column.key: column.name for column in view.columns}
    common: dict[str, Any] = {
        "view": view,
        "slug": slug,
        "has_samples": has_samples,
        "sample_problems": samples.problems,
        "outcome_class": outcome_class,
        "fmt_pct": fmt_pct,
    }
    pages = [
        render_page(
            "leaderboard.html.j2",
            path=f"{slug}/index.html",
            title=f"{view.title} leaderboard" if view.title else "Leaderboard",
            overall_chart=overall_chart(view),
            category_charts=[(column, category_chart(view, column)) for column in view.columns],
            failure_tables=failure_modes(view, samples),
            **common,
        )
    ]
    for row in view.rows:
        model_samples: list[SampleView] = samples.for_model(row.model)
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
                failure_tables=failure_modes(view, samples, models=[row.model]),
                **common,
            )
        )
    return pages
