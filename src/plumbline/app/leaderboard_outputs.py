"""Write a leaderboard's files in one call (JSON validated against the schema; all atomic)."""

from __future__ import annotations

from pathlib import Path

from plumbline.leaderboard.board import Leaderboard
from plumbline.leaderboard.document import write_leaderboard
from plumbline.records.io import write_atomic
from plumbline.views.leaderboard import render_csv, render_markdown


def write_outputs(
    board: Leaderboard,
    *,
    json_path: str | Path | None = None,
    csv_path: str | Path | None = None,
    markdown_path: str | Path | None = None,
) -> list[Path]:
    """Write whichever of the JSON, CSV and Markdown files are asked for; returns their paths.

    The JSON is validated (schema and self-consistency) before anything is written, so an
    invalid leaderboard leaves no file behind; `LeaderboardFileError` says why.
    """
    document = board.document()
    written: list[Path] = []
    if json_path is not None:
        write_leaderboard(json_path, document)
        written.append(Path(json_path))
    if csv_path is not None:
        write_atomic(csv_path, render_csv(document))
        written.append(Path(csv_path))
    if markdown_path is not None:
        write_atomic(markdown_path, render_markdown(document))
        written.append(Path(markdown_path))
    return written
