"""`compare_runs`: the whole A/B analysis of run records, as one typed result (`CompareReport`).

Read → validate happen in `records.run_record`; this module is pure computation on the frame:
the A/B schema's arm summaries, paired deltas and decision, then what the A/B schema recommends
for publication: cluster-bootstrap intervals on every paired delta's mean (tasks resampled, then
repeats within task), McNemar's exact test on paired success, Wilcoxon signed-rank and the
Hodges–Lehmann shift on duration and tokens, the ratio of geometric means for tokens and cost,
a per-task table, the minimum detectable pass-rate difference, and Holm-adjusted p-values when
several treatments face one control. Everything a view shows (the runs listed on the page and
the values its distribution plots draw included) is a field of the report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import polars as pl

from plumbline import stats
from plumbline.compare.caveats import (
    coverage_warnings,
    input_warnings,
    sandbox_warnings,
    small_sample_caveat,
    usage_warnings,
)
from plumbline.compare.cost import cost_comparison, cost_warnings, reprice
from plumbline.compare.decision import ci_gates, decide, schema_gates
from plumbline.compare.listing import (
    arm_distributions,
    run_listing,
)
from plumbline.compare.metrics import (
    PreparedRuns,
    arm_summaries,
    delta_summaries,
    pair_runs,
    per_task_table,
    prepare_runs,
)
from plumbline.compare.paired_tests import (
    APPROXIMATE_TASKS,
    bootstrap_mean,
    log_ratio_interval,
    paired_tests,
    power_analysis,
)
from plumbline.compare.result import (
    MIXED,
    PRIMARY_DELTAS,
    SCHEMA_VERSION,
    SECONDARY_DELTAS,
    ArmComparison,
    ArmSummary,
    CompareReport,
    CompareSettings,
    DeltaSummary,
    Gate,
    InputSummary,
    PairedDelta,
    PairedDeltas,
    PairedTest,
    PerTaskRow,
    SequentialComparison,
    generated_schema,
)
from plumbline.compare.sequential import sequential_comparison, sequential_gate
from plumbline.core.prices import PriceTable
from plumbline.core.progress import ProgressCallback, no_progress
from plumbline.core.result import Interval
from plumbline.records.run_record import RunRecordTable
from plumbline.stats.result import ConfidenceInterval

assert SCHEMA_VERSION == "plumbline.compare/2"  # the literal of `CompareReport.schema_version`


class CompareError(ValueError):
    """The comparison cannot be made as asked (arms missing or unnamed)."""


def resolve_arms(
    arms: Sequence[str], treatments: Sequence[str] | None, control: str | None
) -> tuple[list[str], str]:
    """Pick the treatment arms and the control from the arms found in the records.

    Arms have no default names: with neither given, the comparison is refused with the arms
    found and the flags to pass. With only the control, every other arm is a treatment; with
    only treatments, the one arm left is the control.
    """
    found = sorted(arms)
    listing = ", ".join(found) if found else "none"
    for name in [*(treatments or []), *([control] if control else [])]:
        if name not in found:
            raise CompareError(f"arm {name!r} has no valid runs; arms found: {listing}")
    if not treatments and not control:
        example = f" (e.g. --treatment {found[0]} --control {found[1]})" if len(found) == 2 else ""
        raise CompareError(
            "name the arms to compare with --treatment ARM (repeatable) and --control ARM"
            f"{example}; arms found: {listing}"
        )
    if control is None:
        rest = [a for a in found if a not in (treatments or [])]
        if len(rest) != 1:
            raise CompareError(f"name the control arm with --control; arms found: {listing}")
        control = rest[0]
    if not treatments:
        treatments = [a for a in found if a != control]
        if not treatments:
            raise CompareError(f"no arm to compare with the control {control!r}")
    if control in treatments:
        raise CompareError(f"arm {control!r} cannot be both treatment and control")
    return list(dict.fromkeys(treatments)), control


class _Steps:
    """Counts finished steps of `compare_runs` and reports them to a progress callback."""

    def __init__(self, total: int, progress: ProgressCallback) -> None:
        self.done, self.total, self.progress = 0, total, progress

    def __call__(self, what: str) -> None:
        self.done += 1
        self.progress(self.done, self.total, what)


def _steps_per_comparison(settings: CompareSettings) -> int:
    # an interval per primary delta, two ratio intervals under the ci rule, the paired tests
    return len(PRIMARY_DELTAS) + (2 if settings.rule == "ci" else 0) + 1


def _primary_deltas(
    pairs: pl.DataFrame,
    summary: dict[str, DeltaSummary],
    treatment: str,
    control: str,
    settings: CompareSettings,
    step: Callable[[str], None],
) -> tuple[dict[str, PairedDelta], dict[str, ConfidenceInterval | None]]:
    """Each primary paired delta with its cluster-bootstrap interval, and the raw intervals."""
    paired: dict[str, PairedDelta] = {}
    intervals: dict[str, ConfidenceInterval | None] = {}
    for name in PRIMARY_DELTAS:
        intervals[name] = bootstrap_mean(pairs, name, settings)
        paired[name] = PairedDelta(
            **summary[name].model_dump(),
            ci=None if intervals[name] is None else Interval.of(intervals[name]),  # type: ignore[arg-type]
        )
        step(f"{treatment} vs {control}: {name} interval")
    return paired, intervals


def _gates(
    pairs: pl.DataFrame,
    summaries: dict[str, ArmSummary],
    treatment: str,
    control: str,
    intervals: dict[str, ConfidenceInterval | None],
    settings: CompareSettings,
    step: Callable[[str], None],
) -> tuple[list[Gate], list[str]]:
    """The decision gates under the settings' rule, and warnings about pairs the ratios drop."""
    warnings: list[str] = []
    if settings.rule == "ci":
        duration_ratio, d_excluded = log_ratio_interval(pairs, "duration_seconds", settings)
        step(f"{treatment} vs {control}: duration ratio interval")
        token_ratio, t_excluded = log_ratio_interval(pairs, "non_cache_tokens", settings)
        step(f"{treatment} vs {control}: token ratio interval")
        for what, excluded in (("duration", d_excluded), ("non-cache token", t_excluded)):
            if excluded:
                warnings.append(
                    f"{treatment} vs {control}: {excluded} pairs with a zero or null {what} "
                    "value are left out of its ratio interval"
                )
        gates = ci_gates(
            summaries[treatment],
            summaries[control],
            pass_delta=intervals["pass_delta"],
            duration_ratio=duration_ratio,
            token_ratio=token_ratio,
            margins=settings.margins,
        )
    else:
        gates = schema_gates(summaries[treatment], summaries[control])
    return gates, warnings


def _comparison(
    prepared: PreparedRuns,
    summaries: dict[str, ArmSummary],
    treatment: str,
    control: str,
    settings: CompareSettings,
    step: Callable[[str], None] = lambda what: None,
) -> ArmComparison:
    pairs = pair_runs(prepared, treatment, control)
    summary = delta_summaries(pairs, [*PRIMARY_DELTAS, *SECONDARY_DELTAS])
    paired, intervals = _primary_deltas(pairs, summary, treatment, control, settings, step)
    diagnostics = {name: summary[name] for name in SECONDARY_DELTAS}
    gates, warnings = _gates(pairs, summaries, treatment, control, intervals, settings, step)
    sequential = _sequential(prepared, summaries, treatment, control, settings, gates, warnings)
    decision = decide(treatment, control, gates, settings.rule)
    if decision.tie:
        warnings.append(
            f"{treatment} vs {control}: all three gates are ties; the A/B schema's order reads "
            f"this as {decision.decision!r}"
        )
    table = per_task_table(prepared, pairs, treatment, control)
    warnings += coverage_warnings(pairs, table, treatment, control)
    warnings += sandbox_warnings(prepared.runs, treatment, control)
    warnings += usage_warnings(prepared.runs, treatment, control)
    power = power_analysis(pairs, summaries[control].success_rate, settings)
    detectable = power.minimum_detectable_pass_delta
    observed = paired["pass_delta"].mean
    if detectable is not None and observed is not None and abs(observed) < detectable:
        warnings.append(
            f"{treatment} vs {control}: the observed pass-rate difference ({observed:+.3f}) is "
            f"smaller than the minimum detectable one ({detectable:.3f} at "
            f"{settings.power:.0%} power); at this sample size the success-rate gate cannot "
            "tell the arms apart"
        )
    tests = paired_tests(pairs, settings)
    step(f"{treatment} vs {control}: paired tests")
    cost = cost_comparison(prepared, pairs, treatment, control, settings, settings.price_table)
    warnings += cost_warnings(cost, treatment, control)
    return ArmComparison(
        treatment=treatment,
        control=control,
        decision=decision.decision,
        decision_role=decision.role,
        caveat=small_sample_caveat(prepared, pairs, power, summaries[control], treatment, control),
        rule=decision.rule,
        tie=decision.tie,
        gates=decision.gates,
        pairs=pairs.height,
        paired=PairedDeltas(pairs=pairs.height, **paired),
        diagnostics=diagnostics,
        tests=tests,
        minimum_detectable_pass_delta=detectable,
        power_analysis=power,
        per_task=[PerTaskRow.model_validate(row) for row in table.to_dicts()],
        warnings=warnings,
        sequential=sequential,
        cost=cost,
    )


def _sequential(
    prepared: PreparedRuns,
    summaries: dict[str, ArmSummary],
    treatment: str,
    control: str,
    settings: CompareSettings,
    gates: list[Gate],
    warnings: list[str],
) -> SequentialComparison | None:
    """With `--sequential`: the verdict, which the success gate (`gates[0]`) then reads."""
    if settings.sequential is None:
        return None
    sequential = sequential_comparison(prepared, treatment, control, settings.sequential)
    gates[0] = sequential_gate(summaries[treatment], summaries[control], sequential)
    if sequential is None:
        warnings.append(f"{treatment} vs {control}: no pairs, so no sequential verdict")
    return sequential


_HOLM_TESTS = (
    "mcnemar_success",
    "wilcoxon_duration_seconds",
    "wilcoxon_non_cache_tokens",
)


def _holm_adjust(comparisons: list[ArmComparison]) -> list[ArmComparison]:
    """Holm-adjust each test's p-values across the treatments (one family per test)."""
    tests = [dict(c.tests) for c in comparisons]
    for name in _HOLM_TESTS:
        found = [(i, t[name], t[name].pvalue) for i, t in enumerate(tests)]
        usable = [(i, test, p) for i, test, p in found if p is not None]
        if not usable:
            continue
        adjusted = stats.holm([p for _, _, p in usable])
        for (i, test, _), value in zip(usable, adjusted, strict=True):
            tests[i][name] = test.model_copy(update={"pvalue_holm": float(value)})
    return [c.model_copy(update={"tests": t}) for c, t in zip(comparisons, tests, strict=True)]


#: The report's headline fields: the first treatment's comparison, as the A/B schema publishes
#: it (that comparison's warnings are gathered into the report's own).
_HEADLINE_FIELDS = tuple(
    name
    for name in ArmComparison.model_fields
    if name in CompareReport.model_fields and name != "warnings"
)


def compare_runs(
    table: RunRecordTable,
    *,
    treatments: Sequence[str] | None = None,
    control: str | None = None,
    settings: CompareSettings | None = None,
    progress: ProgressCallback = no_progress,
    prices: PriceTable | None = None,
) -> CompareReport:
    """Compare each treatment arm with the control arm from validated run records.

    `progress(done, total, what)` is called after each interval and test (the long steps).
    With `prices` (`--prices`), every run is priced again from its per-model usage
    (`compare.cost.reprice`) and `settings.price_table` names the table.
    """
    settings = settings or CompareSettings()
    frame, unpriced = table.frame, Counter[str]()
    if prices is not None:
        frame, unpriced = reprice(frame, prices)
        settings = settings.model_copy(update={"price_table": prices.version})
    prepared = prepare_runs(frame)
    arms = prepared.runs["arm"].unique().to_list()
    chosen, control = resolve_arms(arms, treatments, control)
    summaries = arm_summaries(prepared, [*chosen, control])
    step = _Steps(len(chosen) * _steps_per_comparison(settings), progress)
    each = settings
    if settings.sequential is not None and len(chosen) > 1:
        # Several treatments: each sequential comparison at alpha / k (Bonferroni).
        shared = settings.sequential.alpha / len(chosen)
        each = settings.model_copy(
            update={"sequential": settings.sequential.model_copy(update={"alpha": shared})}
        )
    comparisons = [_comparison(prepared, summaries, t, control, each, step) for t in chosen]
    if len(comparisons) > 1:
        comparisons = _holm_adjust(comparisons)
    warnings = input_warnings(prepared, summaries, table)
    warnings += [
        f"--prices: {count} runs have no cost: {note}" for note, count in unpriced.most_common()
    ]
    if each is not settings and each.sequential is not None:
        warnings.append(
            f"--sequential with {len(chosen)} treatments: each sequential comparison runs at "
            f"alpha {each.sequential.alpha:.4g} (Bonferroni)"
        )
    for comparison in comparisons:
        warnings.extend(comparison.warnings)
    primary = comparisons[0]
    compared = [*chosen, control]
    return CompareReport(
        **{name: getattr(primary, name) for name in _HEADLINE_FIELDS},
        arm_summaries=summaries,
        comparisons=comparisons,
        warnings=warnings,
        input=InputSummary(
            files=table.files,
            records_read=table.records_read,
            invalid_records=table.invalid_records,
            errors=[str(e) for e in table.errors],
            duplicates=prepared.duplicates,
            infra_failures=prepared.infra_failures,
        ),
        settings=settings,
        runs=run_listing(prepared, compared),
        distributions=arm_distributions(prepared, compared),
    )


__all__ = [
    "APPROXIMATE_TASKS",
    "MIXED",
    "ArmComparison",
    "CompareError",
    "CompareReport",
    "CompareSettings",
    "Gate",
    "PairedDelta",
    "PairedDeltas",
    "PairedTest",
    "compare_runs",
    "generated_schema",
    "resolve_arms",
]
