"""`plumbline reliability`: the CERT report of trial records and, with a baseline run, every
metric's change from it (`reliability.regression`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plumbline.core.prices import PriceTable
    from plumbline.core.progress import ProgressCallback
    from plumbline.records.trial_record import TrialRecord
    from plumbline.reliability.analysis import Embed, Price
    from plumbline.reliability.config import BenchmarkConfig
    from plumbline.reliability.result import ReliabilityReport

#: A progress display for one named step (`cli.output.progress_bar`).
ProgressBar = Callable[[str], AbstractContextManager["ProgressCallback"]]


class BaselineError(ValueError):
    """The baseline run cannot be compared with the current one (the message says why)."""


@dataclass(frozen=True)
class RegressionOptions:
    """The parsed --margin, --pair and --test-metric values."""

    margins: dict[str, float]
    pairs: dict[str, str]
    tested: tuple[str, ...]


@dataclass(frozen=True)
class BaselineRun:
    """A baseline run's valid trial records, and how to compare the current run with it."""

    records: Sequence[TrialRecord]
    options: RegressionOptions


def reliability_report(
    records: Sequence[TrialRecord],
    embed: Embed,
    config: BenchmarkConfig,
    *,
    prices: Mapping[str, Price],
    record_errors: Sequence[str],
    baseline: Callable[[], BaselineRun] | None,
    progress_bar: ProgressBar,
    price_table: PriceTable | None = None,
) -> ReliabilityReport:
    """The report of `records`, with its `baseline_comparison` when a baseline is given
    (`baseline()` reads it once the current run is analyzed).

    Raises RuntimeError when the embedding model cannot be loaded, `BaselineError` when the
    baseline cannot be compared (no shared prompt, an unknown --pair model, ...)."""
    from plumbline.reliability.analysis import analyze

    present = {record.model for record in records}
    with progress_bar("reliability") as progress:
        report = analyze(
            records,
            embed,
            config=config,
            # a price for a baseline model only prices cost's change from the baseline
            prices={model: price for model, price in prices.items() if model in present},
            record_errors=record_errors,
            progress=progress,
            price_table=price_table,
        )
    if baseline is None:
        return report
    return with_baseline(
        report, records, baseline(), config, embed, progress_bar, (prices, price_table)
    )


def with_baseline(
    report: ReliabilityReport,
    records: Sequence[TrialRecord],
    baseline: BaselineRun,
    config: BenchmarkConfig,
    embed: Embed,
    progress_bar: ProgressBar,
    pricing: tuple[Mapping[str, Price], PriceTable | None] = ({}, None),
) -> ReliabilityReport:
    """The report with its `baseline_comparison` against the baseline run's records (`pricing`:
    the --price rates and the --prices table, read when cost is compared)."""
    from plumbline.reliability.analysis import analyze
    from plumbline.reliability.regression import CostPrices, compare_to_baseline

    with progress_bar("baseline") as progress:
        analyzed = analyze(baseline.records, embed, config=config, progress=progress)
    try:
        comparison = compare_to_baseline(
            analyzed,
            baseline.records,
            report,
            records,
            embed,
            margins=baseline.options.margins,
            pairs=baseline.options.pairs,
            tested=baseline.options.tested,
            seed=config.random_seed,
            resamples=config.bootstrap_resamples,
            prices=CostPrices(*pricing),
        )
    except ValueError as error:
        raise BaselineError(str(error)) from None
    return report.model_copy(update={"baseline_comparison": comparison})
