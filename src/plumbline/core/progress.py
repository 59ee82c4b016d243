"""The progress callback long computations accept: `progress(done, total, what)`.

Computation modules call it between steps and never print; the command line turns it into a
progress bar on stderr (`plumbline.cli.output.progress_bar`).
"""

from __future__ import annotations

from collections.abc import Callable

ProgressCallback = Callable[[int, int, str], None]


def no_progress(done: int, total: int, what: str) -> None:
    """The callback used when nobody is watching."""


__all__ = ["ProgressCallback", "no_progress"]
