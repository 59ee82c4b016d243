"""The warnings `compare` gives about its input and each comparison: pairs missing or from one
task, sandboxes and usage sources that differ between arms, duplicates, null costs and tokens,
too few repeats, and the one-sentence small-sample caveat."""

from __future__ import annotations

import polars as pl

from plumbline.compare.metrics import PreparedRuns
from plumbline.compare.result import ArmSummary, PowerAnalysis
from plumbline.records.run_record import RunRecordTable

MIN_REPEATS = 5  # the A/B schema, "Statistical Notes"
MAX_LISTED = 10


def coverage_warnings(
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


def sandbox_warnings(runs: pl.DataFrame, treatment: str, control: str) -> list[str]:
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


def usage_warnings(runs: pl.DataFrame, treatment: str, control: str) -> list[str]:
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


def input_warnings(
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
