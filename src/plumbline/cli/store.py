"""`plumbline store add FILES... [--label k=v]`: record result JSON files written earlier."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from plumbline.cli.output import EXIT_USAGE, Group, InputFile, emit, json_option
from plumbline.cli.storing import label_option, store_url_option
from plumbline.core.escape import terminal

if TYPE_CHECKING:
    from rich.console import Console


@click.group(cls=Group)
def store() -> None:
    """The results store: record result files written earlier (see `plumbline history`)."""


@store.command("add")
@click.argument("files", nargs=-1, required=True, type=InputFile())
@store_url_option("The results store: a path or sqlite:///PATH, or postgresql://...")
@label_option
@json_option
def add(
    files: tuple[Path, ...],
    store_url: str | None,
    labels: tuple[tuple[str, str], ...],
    json_path: str | None,
) -> None:
    """Record each result JSON file (leaderboard, compare, reliability, agent run) in the store.

    Every file is validated first: a file that is not a result is reported as
    `file:line: field: problem` and nothing is stored (exit 2). A result already in the store
    (same content) is not stored twice; it gets the labels it did not have. A result that
    records no time of its own is dated by its file's modification time.
    """
    from datetime import UTC, datetime

    from plumbline.cli.storing import input_digests, opened_store
    from plumbline.records.io import UnreadableFileError, read_json_file
    from plumbline.results.stored import ResultDocument, ResultDocumentError, read_result

    problems: list[str] = []
    results: list[tuple[Path, ResultDocument]] = []
    for path in files:
        try:
            results.append((path, read_result(read_json_file(path))))
        except UnreadableFileError as error:
            problems.append(str(error))
        except OSError as error:
            problems.append(f"{path}:1: {error.strerror or error}")
        except ResultDocumentError as error:
            problems += [f"{path}:1: {problem}" for problem in error.problems]
    if problems:
        for problem in problems:
            click.echo(f"error: {terminal(problem)}", err=True)
        raise SystemExit(EXIT_USAGE)
    stored = []
    with opened_store(store_url, create=True) as opened:
        for path, result in results:
            modified = datetime.fromtimestamp(path.stat().st_mtime, UTC)
            added = opened.add(
                result,
                labels=dict(labels),
                source=str(path),
                inputs=input_digests([path]),
                created_at=modified,
                as_file=True,
            )
            stored.append(
                {"file": str(path), "id": added.id, "kind": result.kind, "new": added.created}
            )
        shown = opened.shown
    summary = {"store": shown, "results": stored}

    def render(console: Console) -> None:
        for item in stored:
            what = "stored" if item["new"] else "already stored"
            console.print(
                f"{terminal(item['file'])}: {what} as {item['kind']} result {item['id']}",
                highlight=False,
                soft_wrap=True,
            )

    emit(summary, json_path, render)
