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

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np
import polars as pl

from plumbline import stats
from plumbline.compare.decision import Decision, ci_gates, decide, schema_gates
from plumbline.compare.metrics import (
    PreparedRuns,
    arm_summaries,
    delta_summaries,
    pair_runs,
    per_task_table,
    prepare_runs,
)
from plumbline.compare.result import (
    MIXED,
    PRIMARY_DELTAS,
    SCHEMA_VERSION,
    SECONDARY_DELTAS,
    ArmComparison,
    ArmDistribution,
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
    PowerAnalysis,
    RunListing,
    RunRow,
    Sample,
    SequentialComparison,
    generated_schema,
)
from plumbline.compare.sequential import sequential_comparison, sequential_gate
from plumbline.core.progress import ProgressCallback, no_progress
from plumbline.core.result import Interval
from plumbline.records.run_record import RunRecordTable
from plumbline.stats.result import ConfidenceInterval

assert SCHEMA_VERSION == "plumbline.compare/2"  # the literal of `CompareReport.schema_version`
MIN_REPEATS = 5  # the A/B schema, "Statistical Notes"
#: Below this many tasks the percentile cluster bootstrap's coverage is not shown to reach 95%
#: (docs/statistics.md), so its interval is labelled approximate.
APPROXIMATE_TASKS = 10
MAX_LISTED = 10
#: Runs listed in the report (and on its page); beyond it the report says how many were left out.
MAX_LISTED_RUNS = 2000
#: Values kept per arm and metric for the distribution plots; larger arms are thinned to evenly
#: spaced order statistics (min, max and the quartiles' neighbourhood kept).
MAX_POINTS = 4000


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


def _codes(column: pl.Series) -> np.ndarray[Any, Any]:
    return column.rank("dense").cast(pl.Int64).to_numpy()


def _bootstrap_mean(
    pairs: pl.DataFrame, column: str | pl.Expr, settings: CompareSettings
) -> ConfidenceInterval | None:
    expr = pl.col(column) if isinstance(column, str) else column
    data = pairs.select(expr.cast(pl.Float64).alias("v"), "task_id").drop_nulls("v")
    if data.height < 2:
        return None
    values = data["v"].to_numpy()
    if data["task_id"].n_unique() < 2:
        # One task: only its repeats can be resampled; the interval speaks for this task alone.
        single = stats.bootstrap_interval(
            values, n_resamples=settings.n_resamples, level=settings.level, seed=settings.seed
        )
        return replace(single.interval, method=f"{single.interval.method} (one task: repeats)")
    result = stats.cluster_bootstrap(
        values,
        _codes(data["task_id"]),
        statistic="mean",
        n_resamples=settings.n_resamples,
        level=settings.level,
        seed=settings.seed,
    )
    tasks = int(data["task_id"].n_unique())
    approximate = f", approximate: {tasks} tasks" if tasks < APPROXIMATE_TASKS else ""
    return replace(
        result.interval, method=f"{result.interval.method} (tasks, then repeats{approximate})"
    )


def _log_ratio_interval(
    pairs: pl.DataFrame, column: str, settings: CompareSettings
) -> tuple[ConfidenceInterval | None, int]:
    """Interval for the paired geometric-mean ratio T/C: exp of the cluster-bootstrap interval
    of the mean log ratio. Pairs with a zero or missing side cannot be logged; they are counted."""
    t, c = pl.col(f"{column}_t").cast(pl.Float64), pl.col(f"{column}_c").cast(pl.Float64)
    usable = pairs.filter((t > 0) & (c > 0))
    excluded = pairs.height - usable.height
    interval = _bootstrap_mean(usable, (t.log() - c.log()), settings)
    if interval is None:
        return None, excluded
    ratio = ConfidenceInterval(
        float(np.exp(interval.low)),
        float(np.exp(interval.high)),
        interval.level,
        f"exp({interval.method}) of mean log ratio",
    )
    return ratio, excluded


_TOO_FEW = re.compile(r"needs at least (\d+) (?:values?|observations?|pairs?)\S*,? got (\d+)")


def skipped_reason(message: str) -> str:
    """Why a test was not computed, in words for the reader (not the statistic's argument
    names): "needs at least 2 values, got 0" reads "too few paired runs with a value"."""
    match = _TOO_FEW.search(message)
    if match:
        need, got = match.groups()
        return f"not computed: {got} paired runs have a value here ({need} needed)"
    if "at least one pair" in message:
        return "not computed: no paired runs have a value here"
    if "zero" in message or "identical" in message or "all differences" in message:
        return "not computed: every paired difference is zero"
    return "not computed: these data do not allow it"


def _attempt(function: Callable[[], Any]) -> PairedTest:
    # Degenerate data (no pairs, every difference zero) makes a test undefined; say so.
    try:
        result = function()
    except ValueError as error:
        return PairedTest(skipped=str(error), skipped_reason=skipped_reason(str(error)))
    payload: dict[str, Any] = result.to_dict()
    interval = payload.pop("interval", None)
    return PairedTest.model_validate(
        {
            **payload,
            "interval": None if interval is None else Interval.of(result.interval),
        }
    )


def _paired_arrays(pairs: pl.DataFrame, column: str) -> tuple[np.ndarray[Any, Any], ...]:
    both = pairs.select(f"{column}_t", f"{column}_c").drop_nulls()
    return (
        both[f"{column}_t"].cast(pl.Float64).to_numpy(),
        both[f"{column}_c"].cast(pl.Float64).to_numpy(),
    )


def _positive_pairs(pairs: pl.DataFrame, column: str) -> tuple[np.ndarray[Any, Any], ...]:
    t, c = _paired_arrays(pairs, column)
    keep = (t > 0) & (c > 0)
    return t[keep], c[keep]


def paired_tests(pairs: pl.DataFrame, settings: CompareSettings) -> dict[str, PairedTest]:
    """McNemar on success; Wilcoxon and Hodges–Lehmann on duration and tokens; geometric means."""
    tests: dict[str, PairedTest] = {}
    success_t, success_c = _paired_arrays(pairs, "success_int")
    tests["mcnemar_success"] = _attempt(
        lambda: stats.mcnemar_exact(success_t.astype(bool), success_c.astype(bool))
    )
    # The gate metrics; the Hodges–Lehmann interval costs O(n log n) per bisection step, so it
    # is computed for what decides, not for every token count.
    for label, column in (
        ("duration_seconds", "duration_seconds"),
        ("non_cache_tokens", "non_cache_tokens"),
    ):
        t, c = _paired_arrays(pairs, column)
        tests[f"wilcoxon_{label}"] = _attempt(partial(stats.wilcoxon_signed_rank, t, c))
        tests[f"hodges_lehmann_{label}"] = _attempt(
            partial(stats.hodges_lehmann, t, c, level=settings.level)
        )
    for label, column in (
        ("total_tokens", "total_tokens"),
        ("non_cache_tokens", "non_cache_tokens"),
        ("cost_usd", "total_cost_usd"),
    ):
        t, c = _positive_pairs(pairs, column)
        tests[f"geometric_mean_ratio_{label}"] = _attempt(
            partial(stats.geometric_mean_ratio, t, c, paired=True, level=settings.level)
        )
    return tests


def power_analysis(
    pairs: pl.DataFrame, control_rate: float | None, settings: CompareSettings
) -> PowerAnalysis:
    """Smallest pass-rate difference these pairs can detect (McNemar design, Connor 1987).

    The unit is the task: `n` tasks, each with K paired repeats (K = the median pairs per
    task), and the repeat factor uses the observed within-task share of the pass-delta variance;
    the discordant share is the observed share of pairs whose outcomes differ. The direction is
    the one with more room from the control's pass rate.
    """
    if pairs.height < 2 or control_rate is None:
        return PowerAnalysis(reason="fewer than 2 pairs")
    per_task = pairs.group_by("task_id").agg(
        pl.len().alias("k"),
        pl.col("pass_delta").cast(pl.Float64).var(ddof=0).alias("within"),
    )
    tasks = per_task.height
    moments = pairs.select(pl.col("pass_delta").cast(pl.Float64).var(ddof=0)).item()
    spread = per_task.select(pl.col("k").median(), pl.col("within").mean()).row(0)
    epochs = max(int(spread[0] or 1), 1)
    total_var = float(moments or 0.0)
    within = float(spread[1] or 0.0)
    within_share = min(max(within / total_var, 0.0), 1.0) if total_var > 0 else 0.0
    discordant = float(pairs.select((pl.col("pass_delta") != 0).mean()).item())
    details: dict[str, Any] = {
        "tasks": tasks,
        "epochs": epochs,
        "within_share": within_share,
        "discordant": discordant,
        "baseline": control_rate,
        "alpha": settings.alpha,
        "power": settings.power,
    }
    try:
        result = stats.mcnemar_minimum_detectable_effect(
            control_rate,
            tasks,
            alpha=settings.alpha,
            power=settings.power,
            discordant=discordant if discordant > 0 else None,
            epochs=epochs,
            within_share=within_share,
            increase=control_rate <= 0.5,
        )
    except ValueError as error:
        return PowerAnalysis(reason=str(error), **details)
    return PowerAnalysis(
        minimum_detectable_pass_delta=abs(result.effect), method=result.method, **details
    )


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
        intervals[name] = _bootstrap_mean(pairs, name, settings)
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
        duration_ratio, d_excluded = _log_ratio_interval(pairs, "duration_seconds", settings)
        step(f"{treatment} vs {control}: duration ratio interval")
        token_ratio, t_excluded = _log_ratio_interval(pairs, "non_cache_tokens", settings)
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


def _coverage_warnings(
    pairs: pl.DataFrame, table: pl.DataFrame, treatment: str, control: str
) -> list[str]:
    """Warnings when the pairs cover one task, nothing at all, or leave tasks unpaired."""
    warnings: list[str] = []
    if pairs.height and pairs["task_id"].n_unique() == 1:
        warnings.append(
            f"{treatment} vs {control}: all pairs come from one task; the intervals resample "
            "its repeats and say nothing about other tasks"
        )
    if pairs.height == 0:
        warnings.append(
            f"{treatment} vs {control}: no (task_id, repeat) appears in both arms; "
            "there are no paired deltas"
        )
    one_sided = table.filter((pl.col("runs_treatment") == 0) | (pl.col("runs_control") == 0))
    if one_sided.height:
        names = one_sided["task_id"].head(MAX_LISTED).to_list()
        warnings.append(
            f"{treatment} vs {control}: {one_sided.height} tasks have runs in only one arm "
            f"and no pairs: {', '.join(names)}"
        )
    return warnings


def _sandbox_warnings(runs: pl.DataFrame, treatment: str, control: str) -> list[str]:
    """A warning when the two arms' trials ran in different sandboxes (`agent run --sandbox`)
    or networks (`agent run --network`): what an agent could reach was not the same, so
    neither is what it could do."""
    warnings = []
    for column, what in (("sandbox", "sandboxes"), ("network", "networks")):
        if column not in runs.columns:
            continue
        kinds = {
            arm: sorted({k or "unrecorded" for k in runs.filter(pl.col("arm") == arm)[column]})
            for arm in (treatment, control)
        }
        if kinds[treatment] == kinds[control]:
            continue
        warnings.append(
            f"{treatment} vs {control}: the arms ran in different {what} ({treatment}: "
            f"{', '.join(kinds[treatment]) or 'none recorded'}; {control}: "
            f"{', '.join(kinds[control]) or 'none recorded'}); their agents could not reach "
            "the same things, so the comparison mixes that difference into the arms'"
        )
    return warnings


def _usage_warnings(runs: pl.DataFrame, treatment: str, control: str) -> list[str]:
    """Warnings about whose numbers the token and cost gates read: arms whose usage came from
    different sources (`agent run`'s metering proxy vs the agents' own reports), and runs whose
    agent reported usage more than 1% off what was metered."""
    warnings: list[str] = []
    if "usage_source" in runs.columns:
        sources = {
            arm: sorted(
                {s or "unrecorded" for s in runs.filter(pl.col("arm") == arm)["usage_source"]}
            )
            for arm in (treatment, control)
        }
        if sources[treatment] != sources[control]:
            warnings.append(
                f"{treatment} vs {control}: the arms' tokens and cost come from different "
                f"sources ({treatment}: {', '.join(sources[treatment])}; {control}: "
                f"{', '.join(sources[control])}); metered counts and an agent's own report "
                "are not the same measurement"
            )
    if "usage_discrepancy_flagged" in runs.columns:
        for arm in (treatment, control):
            flagged = runs.filter((pl.col("arm") == arm) & pl.col("usage_discrepancy_flagged"))
            if flagged.height:
                warnings.append(
                    f"{arm}: {flagged.height} runs reported usage more than 1% off what the "
                    "harness metered (usage_discrepancy); the gates use the metered counts"
                )
    return warnings


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
    warnings += _coverage_warnings(pairs, table, treatment, control)
    warnings += _sandbox_warnings(prepared.runs, treatment, control)
    warnings += _usage_warnings(prepared.runs, treatment, control)
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
    return _arm_comparison(
        decision,
        treatment=treatment,
        control=control,
        caveat=small_sample_caveat(prepared, pairs, power, summaries[control], treatment, control),
        paired=PairedDeltas(pairs=pairs.height, **paired),
        diagnostics=diagnostics,
        tests=tests,
        power=power,
        per_task=[PerTaskRow.model_validate(row) for row in table.to_dicts()],
        warnings=warnings,
        sequential=sequential,
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


def _arm_comparison(
    decision: Decision,
    *,
    treatment: str,
    control: str,
    caveat: str | None,
    paired: PairedDeltas,
    diagnostics: dict[str, DeltaSummary],
    tests: dict[str, PairedTest],
    power: PowerAnalysis,
    per_task: list[PerTaskRow],
    warnings: list[str],
    sequential: SequentialComparison | None = None,
) -> ArmComparison:
    return ArmComparison(
        treatment=treatment,
        control=control,
        decision=decision.decision,
        decision_role=decision.role,
        caveat=caveat,
        rule=decision.rule,
        tie=decision.tie,
        gates=decision.gates,
        pairs=paired.pairs,
        paired=paired,
        diagnostics=diagnostics,
        tests=tests,
        minimum_detectable_pass_delta=power.minimum_detectable_pass_delta,
        power_analysis=power,
        per_task=per_task,
        warnings=warnings,
        sequential=sequential,
    )


def small_sample_caveat(
    prepared: PreparedRuns,
    pairs: pl.DataFrame,
    power: PowerAnalysis,
    control: ArmSummary,
    treatment_arm: str,
    control_arm: str,
) -> str | None:
    """One plain sentence when the data cannot support a decision, else None.

    Said when: fewer than 2 tasks are paired; the minimum detectable pass-rate difference is
    larger than the largest difference possible from the control's rate (or cannot be computed
    at all); or the arms have fewer repeats per task than the A/B schema's minimum.
    """
    reasons: list[str] = []
    tasks = int(pairs["task_id"].n_unique()) if pairs.height else 0
    if tasks < 2:
        reasons.append(f"only {tasks} task{'s' if tasks != 1 else ''} paired (at least 2 needed)")
    detectable = power.minimum_detectable_pass_delta
    rate = control.success_rate
    if tasks >= 2 and detectable is None:
        reasons.append(f"{tasks} paired tasks cannot detect any pass-rate difference")
    elif detectable is not None and rate is not None:
        room = max(1.0 - rate, rate)
        if float(detectable) > room + 1e-12:
            reasons.append(
                f"{tasks} paired tasks can only detect a pass-rate difference of "
                f"{float(detectable):.0%}, more than the largest possible ({room:.0%})"
            )
    repeats = (
        prepared.runs.filter(pl.col("arm").is_in([treatment_arm, control_arm]))
        .group_by("task_id", "arm")
        .len()
    )
    fewest = int(repeats["len"].min()) if repeats.height else 0  # type: ignore[arg-type]
    if fewest < MIN_REPEATS:
        reasons.append(
            f"{fewest} repeat{'s' if fewest != 1 else ''} per task where the A/B schema asks "
            f"for at least {MIN_REPEATS}"
        )
    if not reasons:
        return None
    return "Too little data to rely on this decision: " + "; ".join(reasons) + "."


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


def _input_warnings(
    prepared: PreparedRuns, summaries: dict[str, ArmSummary], table: RunRecordTable
) -> list[str]:
    warnings: list[str] = []
    if table.invalid_records:
        warnings.append(f"{table.invalid_records} invalid records were excluded (see input.errors)")
    for duplicate in prepared.duplicates[:MAX_LISTED]:
        warnings.append(
            f"duplicate run {duplicate.task_id}/{duplicate.arm}/repeat {duplicate.repeat} at "
            f"{', '.join(duplicate.locations)}: kept in the arm summary, left out of the pairing"
        )
    if len(prepared.duplicates) > MAX_LISTED:
        warnings.append(f"... and {len(prepared.duplicates) - MAX_LISTED} more duplicate runs")
    for arm, summary in summaries.items():
        if summary.excluded_infra_failures:
            warnings.append(
                f"{arm}: {summary.excluded_infra_failures} infrastructure failures excluded"
            )
        if summary.null_cost_runs:
            warnings.append(
                f"{arm}: {summary.null_cost_runs} of {summary.runs} runs have no cost; "
                "cost metrics use the other runs"
            )
        # Non-cache tokens (input + output) decide the gate; total tokens add the cache fields,
        # which many agents leave null. Only a null input or output is a missing token count.
        if summary.null_non_cache_tokens_runs:
            warnings.append(
                f"{arm}: {summary.null_non_cache_tokens_runs} of {summary.runs} runs lack input "
                "or output token counts; token metrics use the other runs"
            )
        cache_only = summary.null_total_tokens_runs - summary.null_non_cache_tokens_runs
        if cache_only > 0:
            warnings.append(
                f"{arm}: {cache_only} of {summary.runs} runs have no cache token counts; "
                "total-token figures use the other runs (non-cache tokens are unaffected)"
            )
    arms = list(summaries)
    few = (
        prepared.runs.filter(pl.col("arm").is_in(arms))
        .group_by("task_id", "arm")
        .len()
        .filter(pl.col("len") < MIN_REPEATS)
        .sort("task_id", "arm")
    )
    if few.height:
        listed = ", ".join(f"{t}/{a} ({n})" for t, a, n in few.head(MAX_LISTED).iter_rows())
        more = f" and {few.height - MAX_LISTED} more" if few.height > MAX_LISTED else ""
        warnings.append(
            f"{few.height} task-arm pairs have fewer than {MIN_REPEATS} repeats (the A/B schema "
            f"asks for at least {MIN_REPEATS} before a promotion decision): {listed}{more}"
        )
    return warnings


def thin_points(values: list[float]) -> list[float]:
    """At most MAX_POINTS values: evenly spaced order statistics (min and max kept)."""
    if len(values) <= MAX_POINTS:
        return values
    ordered = sorted(values)
    step = (len(ordered) - 1) / (MAX_POINTS - 1)
    return [ordered[round(i * step)] for i in range(MAX_POINTS)]


def run_listing(prepared: PreparedRuns, arms: Sequence[str]) -> RunListing:
    """The compared arms' runs, sorted by arm, task and repeat (the first MAX_LISTED_RUNS)."""
    runs = prepared.runs.filter(pl.col("arm").is_in(list(arms)))
    listed = runs.sort("arm", "task_id", "repeat").head(MAX_LISTED_RUNS)
    rows = [
        RunRow(
            task_id=str(row["task_id"]),
            arm=str(row["arm"]),
            repeat=int(row["repeat"]),
            outcome="timed out" if row["timed_out"] else "success" if row["success"] else "failure",
            duration_seconds=row["duration_seconds"],
            total_tokens=row["total_tokens"],
            non_cache_tokens=row["non_cache_tokens"],
            total_cost_usd=row["total_cost_usd"],
            location=f"{row['file']}:{row['line']}",
        )
        for row in listed.iter_rows(named=True)
    ]
    return RunListing(total=runs.height, listed=len(rows), rows=rows)


def arm_distributions(prepared: PreparedRuns, arms: Sequence[str]) -> dict[str, ArmDistribution]:
    """Per-run duration and token values per arm (thinned beyond MAX_POINTS)."""

    def sample(chosen: pl.DataFrame, metric: str) -> Sample:
        values = [float(v) for v in chosen[metric].drop_nulls().to_list()]
        return Sample(n=len(values), values=thin_points(values))

    distributions: dict[str, ArmDistribution] = {}
    for arm in arms:
        chosen = prepared.runs.filter(pl.col("arm") == arm)
        distributions[arm] = ArmDistribution(
            duration_seconds=sample(chosen, "duration_seconds"),
            non_cache_tokens=sample(chosen, "non_cache_tokens"),
            total_tokens=sample(chosen, "total_tokens"),
        )
    return distributions


def compare_runs(
    table: RunRecordTable,
    *,
    treatments: Sequence[str] | None = None,
    control: str | None = None,
    settings: CompareSettings | None = None,
    progress: ProgressCallback = no_progress,
) -> CompareReport:
    """Compare each treatment arm with the control arm from validated run records.

    `progress(done, total, what)` is called after each interval and test (the long steps).
    """
    settings = settings or CompareSettings()
    prepared = prepare_runs(table.frame)
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
    warnings = _input_warnings(prepared, summaries, table)
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
        treatment=primary.treatment,
        control=control,
        decision=primary.decision,
        decision_role=primary.decision_role,
        caveat=primary.caveat,
        rule=primary.rule,
        tie=primary.tie,
        gates=primary.gates,
        arm_summaries=summaries,
        paired=primary.paired,
        diagnostics=primary.diagnostics,
        tests=primary.tests,
        minimum_detectable_pass_delta=primary.minimum_detectable_pass_delta,
        power_analysis=primary.power_analysis,
        per_task=primary.per_task,
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
        sequential=primary.sequential,
    )


__all__ = [
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
