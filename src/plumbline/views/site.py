"""The site's pages from typed inputs: one `SiteInput` per report, the index, page names.

Renders only: `plumbline.app.site` reads the files, builds each `SiteInput` (typing a
leaderboard and reviewing it once) and writes what these functions return.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from plumbline.leaderboard.result import DocumentReview, LeaderboardDocument, LeaderboardSamples
from plumbline.views.html import Page, render_page

Kind = Literal["leaderboard", "compare", "reliability", "history"]


KINDS: tuple[Kind, ...] = ("leaderboard", "compare", "reliability", "history")


#: The page renderer of each kind, as "module:function" (imported when that kind is rendered).
RENDERERS: dict[str, str] = {
    "compare": "plumbline.views.compare_page:render_compare_pages",
    "reliability": "plumbline.views.reliability_page:render_reliability_pages",
    "leaderboard": "plumbline.views.leaderboard_page:render_leaderboard_pages",
    "history": "plumbline.views.history_page:render_history_pages",
}


KIND_TITLES: dict[str, str] = {
    "leaderboard": "Leaderboard",
    "compare": "A/B comparison",
    "reliability": "Reliability",
    "history": "History",
}


@dataclass(frozen=True)
class SiteInput:
    """One report of the site: a result document, the sources behind it, and for a leaderboard
    its typed document, what reviewing it found (a stated overall that disagrees with its own
    weights) and, given its logs, the samples read from them for the drill-down pages.

    Build it with `plumbline.app.site.site_input`, which fills the leaderboard's fields."""

    kind: Kind
    name: str
    document: dict[str, Any]
    sources: tuple[Path, ...] = ()
    samples: LeaderboardSamples | None = None
    leaderboard: LeaderboardDocument | None = None
    review: DocumentReview | None = None

    def typed_leaderboard(self) -> tuple[LeaderboardDocument, DocumentReview]:
        """The leaderboard and its review; a `ValueError` when the input was not built with
        `app.site.site_input` (a leaderboard document is typed before it is rendered)."""
        if self.leaderboard is None or self.review is None:
            raise ValueError(f"{self.name}: a leaderboard input without its typed document")
        return self.leaderboard, self.review


def slugify(text: str) -> str:
    """A file-system- and URL-safe folder name: lowercase ASCII letters, digits and dashes."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:60].strip("-") or "report"


def assign_slugs(
    inputs: Sequence[SiteInput], existing: Mapping[str, str | None] | None = None
) -> list[str]:
    """One distinct slug per input, from its name (`-2`, `-3` ... on collisions).

    `existing` maps the slugs of reports already in the site to their identity
    (`report_identity`; None when an older site did not record it): an input with the same
    identity takes its slug again (it is the same report, rewritten), any other never does,
    so two reports whose names slug alike never overwrite each other's pages.
    """
    existing = existing or {}
    taken: set[str] = {"data", "index"}
    slugs: list[str] = []
    for site_input in inputs:
        identity = report_identity(site_input)
        base = slugify(site_input.name or site_input.kind)
        slug, number = base, 2
        while slug in taken or (slug in existing and existing[slug] not in (None, identity)):
            slug, number = f"{base}-{number}", number + 1
        taken.add(slug)
        slugs.append(slug)
    return slugs


def report_identity(site_input: SiteInput) -> str:
    """What makes two reports the same report: kind, name and (resolved) sources."""
    import json

    sources = sorted(str(Path(source).resolve()) for source in site_input.sources)
    return json.dumps([site_input.kind, site_input.name, sources], ensure_ascii=False)


Renderer = Callable[[SiteInput, str], list[Page]]


def renderer_for(kind: str) -> Renderer:
    """The page renderer registered for a kind of document."""
    module_name, attribute = RENDERERS[kind].split(":")
    renderer: Renderer = getattr(importlib.import_module(module_name), attribute)
    return renderer


def _summary(site_input: SiteInput) -> dict[str, Any]:
    """What the index says about one report (a headline and a few facts)."""
    document = site_input.document
    if site_input.kind == "leaderboard":
        return _leaderboard_summary(site_input)
    if site_input.kind == "compare":
        from plumbline.compare.result import document_problems, read_report
        from plumbline.core import present

        problems = document_problems(document)
        if problems:
            # An earlier site's report of an older version: say why it is not shown.
            return {"title": site_input.name, "headline": problems[0], "facts": []}
        report = read_report(document)
        return {
            "title": f"{', '.join(report.treatments)} vs {report.control}",
            "headline": report.decision,
            "facts": [
                f"{present.number(report.paired.pairs)} paired runs",
                f"{present.number(report.input.records_read)} records read",
                f"{'a warning' if len(report.warnings) == 1 else 'warnings'}"
                if report.warnings
                else "no warnings",
            ],
        }
    if site_input.kind == "history":
        return _history_summary(site_input)
    from pydantic import ValidationError

    from plumbline.reliability.result import ReliabilityReport

    try:
        reliability = ReliabilityReport.model_validate(document)
    except ValidationError:
        # An earlier site's report of an older version: say why it is not shown.
        return {
            "title": site_input.name,
            "headline": "a reliability report this version cannot read: regenerate it",
            "facts": [],
        }
    model_names = [model.model for model in reliability.models]
    return {
        "title": ", ".join(model_names[:3]) + (" …" if len(model_names) > 3 else "")
        or site_input.name,
        "headline": f"{len(model_names)} model(s) over repeated trials",
        # the one warning list the reliability page shows, in full
        "facts": [f"{len(reliability.warnings)} warning(s)"],
    }


def _history_summary(site_input: SiteInput) -> dict[str, Any]:
    """The index card of a history: how many results, from when to when."""
    from pydantic import ValidationError

    from plumbline.store.result import HistoryDocument

    try:
        history = HistoryDocument.model_validate(site_input.document)
    except ValidationError:
        return {
            "title": site_input.name,
            "headline": "a history this version cannot read: regenerate it",
            "facts": [],
        }
    results = history.results
    span = f"{results[0].created_at} to {results[-1].created_at}" if results else "no results"
    return {
        "title": "History of the results store",
        "headline": f"{len(results)} stored result(s), a trend plot per model and metric",
        "facts": [span],
    }


def _leaderboard_summary(site_input: SiteInput) -> dict[str, Any]:
    """The index card of a leaderboard: its numbers from the typed document."""
    from plumbline.core import present

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


def render_index(inputs: Sequence[SiteInput], slugs: Sequence[str]) -> Page:
    """The site's front page: every report with its kind, headline and data file."""
    reports = [
        {
            "kind": site_input.kind,
            "kind_title": KIND_TITLES[site_input.kind],
            "name": site_input.name,
            "slug": slug,
            "sources": len(site_input.sources),
            **_summary(site_input),
        }
        for site_input, slug in zip(inputs, slugs, strict=True)
    ]
    return render_page(
        "index.html.j2", path="index.html", title="plumbline reports", reports=reports
    )
