"""`plumbline report INPUT... -o DIR`: a static HTML site from plumbline's JSON results.

    plumbline report leaderboard.json logs/ compare.json agent_runs.jsonl -o site/

Inputs are any mix of leaderboard, compare and reliability JSON documents, plus the sources
behind them for drill-down: Inspect logs (files or directories) for leaderboards, run records
for comparisons, trial records for reliability.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from plumbline.cli.output import (
    EXIT_USAGE,
    Command,
    OutputSite,
    console,
    emit,
    error_console,
    json_option,
    log_inputs,
)
from plumbline.core.escape import terminal, visible_controls

if TYPE_CHECKING:
    from rich.console import Console

    from plumbline.app.site import SiteResult
    from plumbline.views.site import Kind


def site_url(index: Path) -> str:
    """The `file://` URL of a site's index page."""
    return index.resolve().as_uri()


@click.command(cls=Command, directory_inputs=log_inputs)
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=OutputSite(path_type=Path),
    default=Path("site"),
    show_default=True,
    help="The site's directory: new, empty, or a site plumbline wrote (its pages are "
    "replaced); a directory of other files is refused.",
)
@json_option
def report(inputs: tuple[Path, ...], output: Path, json_path: str | None) -> None:
    """Render a static site from INPUTS: leaderboard, compare and reliability JSON, and the
    Inspect logs, run records or trial records behind them (for drill-down pages).

    The pages need no network and work from file://; every input document is copied to
    DIR/data/ so the site is self-contained.
    """
    from rich.text import Text

    from plumbline.app.site import SiteInputError, load_site_inputs, write_site

    try:
        site_inputs = load_site_inputs(list(inputs))
        result = write_site(site_inputs, output)
    except SiteInputError as error:
        for problem in error.problems:
            error_console.print(
                Text("error: ", style="red") + Text(visible_controls(problem)), soft_wrap=True
            )
        raise SystemExit(EXIT_USAGE) from None
    summary = {
        "index": str(result.index),
        "url": site_url(result.index),
        "pages": [str(page) for page in result.pages],
        "data": [str(path) for path in result.data],
        "reports": [
            {"kind": site_input.kind, "name": site_input.name, "sources": len(site_input.sources)}
            for site_input in site_inputs
        ],
    }

    def render(console: Console) -> None:
        kinds = ", ".join(f"{item.kind} ({item.name})" for item in site_inputs)
        console.print(
            f"Wrote {len(result.pages)} page(s) for {terminal(kinds)} to {terminal(output)}"
        )
        console.print(f"Open {terminal(site_url(result.index))}", soft_wrap=True)

    emit(summary, json_path, render)


#: `--html DIR`: shared by the commands that produce results (run, leaderboard, compare, ...).
html_option = click.option(
    "--html",
    "html_dir",
    type=OutputSite(path_type=Path),
    metavar="DIR",
    help="Also write the result as a page of the static HTML site in DIR (works offline; "
    "reports already in DIR stay and are listed on its index).",
)


def report_name(kind: Kind, sources: Sequence[Path]) -> str:
    """A report's name in a shared site: its kind and what it was computed from, so that
    results of different inputs get pages of their own (`compare-agent_runs`)."""
    return "-".join([kind, *(Path(source).stem for source in sources)])[:80]


def write_html(
    kind: Kind, name: str, document: dict[str, Any], sources: Sequence[Path], directory: Path
) -> SiteResult:
    """Write an in-memory result document's report into the site at `directory`.

    Reports other commands wrote there stay and are listed on the index, so `compare --html
    site/` and `reliability --html site/` build one site.
    """
    from plumbline.app.site import SiteInputError, site_input, write_site

    try:
        return write_site(
            [site_input(kind, name, document, sources)], directory, keep_other_reports=True
        )
    except SiteInputError as error:
        raise click.UsageError("; ".join(error.problems)) from None


def announce_html(
    kind: Kind, document: dict[str, Any], sources: tuple[Path, ...], directory: Path, *, quiet: bool
) -> None:
    """Write the report into the static site at `directory` and say where its page is.

    With JSON on stdout the message goes to stderr, so stdout stays one JSON document.
    """
    result = write_html(kind, report_name(kind, sources), document, sources, directory)
    page = result.pages[0] if result.pages else result.index
    (error_console if quiet else console).print(
        f"HTML report: {terminal(page.resolve().as_uri())}", soft_wrap=True
    )
