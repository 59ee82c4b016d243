"""The site's pages from typed inputs: one `SiteInput` per report, the index, page names.

Renders only: `plumbline.app.site` reads the files, builds each `SiteInput` (typing its result
once, through `plumbline.results`) and writes what these functions return.

`PAGES` is the one table of pages: a kind of result has a page when it has a row here, naming
its page module. A page module has `TITLE` (the kind's name on the index), `render(site_input,
slug)` (its pages, under `slug/`), `card(site_input)` (its index card: a title, a headline and a
few facts) and `UNREADABLE` (the card's headline for an earlier site's report this version
cannot read; None: the first problem found).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from plumbline.leaderboard.result import DocumentReview, LeaderboardDocument, LeaderboardSamples
from plumbline.views.html import Page, render_page

#: The page module of each kind of result that has pages.
PAGES: dict[str, str] = {
    "leaderboard": "plumbline.views.leaderboard_page",
    "compare": "plumbline.views.compare_page",
    "reliability": "plumbline.views.reliability_page",
    "history": "plumbline.views.history_page",
    "agent_run": "plumbline.views.agent_run_page",
}

#: A kind of result with a page (a key of `PAGES`).
Kind = str

R = TypeVar("R", bound=BaseModel, covariant=True)


@dataclass(frozen=True)
class SiteInput(Generic[R]):
    """One report of the site: its typed result, the sources behind it and, for a leaderboard,
    what reviewing it found (a stated overall that disagrees with its own weights) and, given
    its logs, the samples read from them for the drill-down pages.

    `result` is None only for an earlier site's report this version cannot read (`problems`
    say why; the index lists it, no page is rendered). Build inputs with
    `plumbline.app.site.site_input`."""

    kind: Kind
    name: str
    result: R | None
    sources: tuple[Path, ...] = ()
    samples: LeaderboardSamples | None = None
    review: DocumentReview | None = None
    problems: tuple[str, ...] = ()
    #: The JSON the result was read from, copied to the site's data as it came in (None: the
    #: result's own JSON). Never rendered: pages render `result`.
    data: dict[str, Any] | None = None

    def typed(self) -> R:
        """The result; a `ValueError` for a report this version cannot read."""
        if self.result is None:
            raise ValueError(f"{self.name}: a {self.kind} report this version cannot read")
        return self.result

    def typed_leaderboard(self) -> tuple[LeaderboardDocument, DocumentReview]:
        """The leaderboard and its review; a `ValueError` when the input was not built with
        `app.site.site_input` (a leaderboard is reviewed before it is rendered)."""
        board = self.result
        if not isinstance(board, LeaderboardDocument) or self.review is None:
            raise ValueError(f"{self.name}: a leaderboard input without its typed document")
        return board, self.review


def page_module(kind: str) -> ModuleType:
    """The page module of a kind (`KeyError` for a kind without pages)."""
    return importlib.import_module(PAGES[kind])


def slugify(text: str) -> str:
    """A file-system- and URL-safe folder name: lowercase ASCII letters, digits and dashes."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:60].strip("-") or "report"


def assign_slugs(
    inputs: Sequence[SiteInput[Any]], existing: Mapping[str, str | None] | None = None
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


def report_identity(site_input: SiteInput[Any]) -> str:
    """What makes two reports the same report: kind, name and (resolved) sources."""
    import json

    sources = sorted(str(Path(source).resolve()) for source in site_input.sources)
    return json.dumps([site_input.kind, site_input.name, sources], ensure_ascii=False)


def render_pages(site_input: SiteInput[Any], slug: str) -> list[Page]:
    """The pages of one report, by its kind's page module."""
    pages: list[Page] = page_module(site_input.kind).render(site_input, slug)
    return pages


def _card(site_input: SiteInput[Any]) -> dict[str, Any]:
    """What the index says about one report (a headline and a few facts)."""
    module = page_module(site_input.kind)
    if site_input.result is None:
        # An earlier site's report of an older version: say why it is not shown.
        headline = module.UNREADABLE or (site_input.problems or ("unreadable",))[0]
        return {"title": site_input.name, "headline": headline, "facts": []}
    card: dict[str, Any] = module.card(site_input)
    return card


def render_index(inputs: Sequence[SiteInput[Any]], slugs: Sequence[str]) -> Page:
    """The site's front page: every report with its kind, headline and data file."""
    reports = [
        {
            "kind": site_input.kind,
            "kind_title": page_module(site_input.kind).TITLE,
            "name": site_input.name,
            "slug": slug,
            "sources": len(site_input.sources),
            **_card(site_input),
        }
        for site_input, slug in zip(inputs, slugs, strict=True)
    ]
    return render_page(
        "index.html.j2", path="index.html", title="plumbline reports", reports=reports
    )
