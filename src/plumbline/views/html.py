"""HTML rendering: one Jinja2 environment (autoescape always on), shared filters and pages.

    page = render_page("leaderboard.html.j2", path="sa-bench/index.html", title="SA Bench", ...)

Templates live in `plumbline/views/templates/` and extend `base.html.j2`, which inlines the
CSS and the few behaviours (sortable tables, filters) every page shares: no CDN, no external
file, so a page opened from `file://` works offline.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from functools import cache
from typing import Any

import jinja2
from markupsafe import Markup

from plumbline.core import present


@dataclass(frozen=True)
class Page:
    """A rendered page and where it goes, relative to the site root (`"compare/index.html"`)."""

    path: str
    title: str
    html: str


def pretty_json(obj: Any) -> str:
    """Indented JSON as plain text for display (escaped by the template like any text)."""
    return json.dumps(obj, indent=2, ensure_ascii=False, default=str)


def json_for_script(obj: Any) -> Markup:
    """JSON that is safe inside `<script type="application/json">`.

    `<`, `>` and `&` become `\\u003c`-style escapes so no `</script>` or `<!--` can close or
    confuse the element; U+2028/U+2029 are escaped too (valid in JSON, line breaks in JS).
    """
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False, sort_keys=False)
    for raw, escaped in (
        ("&", "\\u0026"),
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return Markup(text)


def root_prefix(path: str) -> str:
    """The relative prefix from a page to the site root: `"a/b/index.html"` → `"../../"`."""
    depth = posixpath.normpath(path).count("/")
    return "../" * depth


@cache
def environment() -> jinja2.Environment:
    """The shared environment: package templates, autoescape on for every template, filters."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("plumbline.views", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    # one formatting module for every view (`{{ present.percent(value) }}`)
    env.globals["present"] = present
    env.filters["json_for_script"] = json_for_script
    env.filters["pretty_json"] = pretty_json
    return env


def render_page(template: str, *, path: str, title: str, **context: Any) -> Page:
    """Render `template` (which extends `base.html.j2`) as the page at `path` in the site.

    The template receives `root` (e.g. `"../"`, for links to the site root), `title`, `path`
    and the given context.
    """
    normalised = posixpath.normpath(path)
    if normalised.startswith("../") or normalised.startswith("/") or normalised == "..":
        raise ValueError(f"page path {path!r} must stay inside the site")
    html = (
        environment()
        .get_template(template)
        .render(root=root_prefix(normalised), title=title, path=normalised, **context)
    )
    return Page(path=normalised, title=title, html=html)
