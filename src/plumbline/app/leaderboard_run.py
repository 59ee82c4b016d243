"""`plumbline leaderboard LOGDIR`: the leaderboard of Inspect logs, read under a progress
display, with the local log files behind it (their digests are stored with it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from plumbline.app.reliability_run import ProgressBar
    from plumbline.core.prices import PriceTable
    from plumbline.leaderboard.board import Leaderboard
    from plumbline.leaderboard.labels import HumanLabel
    from plumbline.leaderboard.suite import Suite
    from plumbline.records.log_pool import LogReader


@dataclass(frozen=True)
class BoardSettings:
    """How a leaderboard is built: what an errored sample is worth, its run id, the categories
    not run (with why), the human labels that correct it (with their planned half-width) and
    the price table of its cost."""

    prices: PriceTable
    errors: Literal["zero", "exclude"] = "zero"
    run_id: str | None = None
    not_run: Mapping[str, str] = field(default_factory=dict)
    labels: list[HumanLabel] | None = None
    half_width: float | None = None


def build_board(
    logs: tuple[str, ...],
    suite: Suite,
    settings: BoardSettings,
    reader: LogReader,
    progress_bar: ProgressBar,
) -> Leaderboard:
    """The leaderboard of the logs (`leaderboard.build_leaderboard`), read by `reader` under
    the progress display `progress_bar`."""
    from plumbline.leaderboard import build_leaderboard

    with progress_bar("reading logs") as progress:
        return build_leaderboard(
            list(logs),
            suite,
            errors=settings.errors,
            run_id=settings.run_id,
            progress=progress,
            not_run=settings.not_run,
            labels=settings.labels,
            half_width=settings.half_width,
            reader=reader,
            prices=settings.prices,
        )


def local_logs(logs: tuple[str, ...]) -> list[Path]:
    """The local log files behind a leaderboard (their digests are stored with it)."""
    from plumbline.records.log_files import find_log_files, is_remote

    local = [log for log in logs if not is_remote(log)]
    return [Path(str(log)) for log in find_log_files(local).logs] if local else []


def local_sources(logs: tuple[str, ...]) -> list[Path]:
    """The local paths of the logs as given (a leaderboard page's sources)."""
    from plumbline.records.log_files import is_remote

    return [Path(log) for log in logs if not is_remote(log)]
