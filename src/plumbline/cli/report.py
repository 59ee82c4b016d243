"""`plumbline report INPUT... -o DIR`: a static HTML site from plumbline's JSON results.

    plumbline report leaderboard.json logs/ compare.json agent_runs.jsonl -o site/

Inputs are any mix of result documents with pages (`views.site.PAGES`), plus the sources
behind them for drill-down: Inspect logs (files or directories) for leaderboards, run records
for comparisons, trial records for reliability. The producing commands' `--html DIR` and every
other output go through `publish_result` (`app.publish`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
    from pydantic import BaseModel
    from rich.console import Console

    from plumbline.app.publish import Outputs, Published
    from plumbline.app.site import SiteResult
    from plumbline.results.stored import ResultDocument
    from plumbline.views.site import Kind


def site_url(index: Path) -> str:
    """The `file://` URL of a site's index page."""
    return index.resolve().as_uri()


def print_site_written(console: Console, html_dir: Path | None, index: Path) -> None:
    """The line that says where a command's `--html` site went and the URL to open it at."""
    console.print(
        f"HTML site written to {terminal(html_dir)}: open {terminal(site_url(index))}",
        soft_wrap=True,
    )


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


def publish_result(result: BaseModel, sources: Sequence[Path], outputs: Outputs) -> Published:
    """`app.publish.publish`, a site that cannot be written (a directory of other files) a
    usage error: every output of a producing command, in one call."""
    from plumbline.app.publish import publish
    from plumbline.app.site import SiteInputError

    try:
        return publish(result, sources, outputs)
    except SiteInputError as error:
        raise click.UsageError("; ".join(error.problems)) from None


def report_outputs(
    result: BaseModel,
    sources: Sequence[Path],
    *,
    json_path: str | None,
    terminal_view: Callable[[Console], None],
    markdown: tuple[str | Path | None, Callable[[Any], str]],
    html_dir: Path | None,
    store: Callable[[Callable[[], ResultDocument]], Any],
    shown: Any = None,
) -> Outputs:
    """The outputs of a report command (`compare`, `reliability`): its Markdown (path and
    renderer), its page (named by `report_name`), the report shown by the `--json [PATH]`
    convention (`shown`, or its JSON when None) with where its page is, and the stored result."""
    from plumbline.app.publish import Outputs
    from plumbline.cli.output import dumps, emit
    from plumbline.results.kinds import kind_of

    def show(data: dict[str, Any], site: SiteResult | None) -> None:
        emit(data if shown is None else shown, json_path, terminal_view)
        announce_page(site, quiet=json_path == "-")

    return Outputs(
        dumps=dumps,
        markdown_path=markdown[0],
        markdown=markdown[1],
        html_dir=html_dir,
        page_name=report_name(kind_of(result).name, sources),
        show=show,
        store=store,
    )


def announce_page(site: SiteResult | None, *, quiet: bool) -> None:
    """Say where the report's page is (with JSON on stdout, on stderr: stdout stays one JSON
    document)."""
    if site is None:
        return
    page = site.pages[0] if site.pages else site.index
    (error_console if quiet else console).print(
        f"HTML report: {terminal(page.resolve().as_uri())}", soft_wrap=True
    )
