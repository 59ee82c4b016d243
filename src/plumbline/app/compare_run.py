"""`plumbline compare`: the A/B comparison of run records (the A/B schema), computed under a
progress display."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plumbline.app.reliability_run import ProgressBar
    from plumbline.compare.result import CompareReport, CompareSettings
    from plumbline.core.prices import PriceTable
    from plumbline.records.run_record import RunRecordTable


def compare_arms(
    table: RunRecordTable,
    treatments: Sequence[str],
    control: str | None,
    settings: CompareSettings,
    progress_bar: ProgressBar,
    prices: PriceTable | None = None,
) -> CompareReport:
    """The comparison of the treatments (every arm but the control when none is named) with
    the control (`compare.analysis.compare_runs`), priced again with `prices` when given.
    Raises `compare.analysis.CompareError` when the arms do not fit the records."""
    from plumbline.compare.analysis import compare_runs

    with progress_bar("comparing") as progress:
        return compare_runs(
            table,
            treatments=list(treatments) or None,
            control=control,
            settings=settings,
            progress=progress,
            prices=prices,
        )
