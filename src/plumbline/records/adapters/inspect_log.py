"""Inspect AI eval logs: each sample × epoch becomes one run record.

The arm is the log's model (`--arm-from model`, two models compared on one task) or its task
(`--arm-from task`, two variants of a task on one model). The pair key is the sample and the
epoch (`repeat`): when the arm is the task, `task_id` is the sample id (the same sample of two
task variants is one pair); otherwise it is `<task>/<sample id>`, so sample 1 of three tasks of
one model are three runs, not one. Success is the chosen scorer's value converted with Inspect's
own `value_to_float` and equal to 1 (fully correct).

Duration is the sample's `total_time`; logs of Inspect ≤ 0.3.58 have none, and then it is
`completed_at − started_at`, or else the span of the sample's own event timestamps (first event
start to last event end), which is what `total_time` later came to record. Tokens and cost are
summed over the sample's `model_usage` (cost stays null when the provider reported none).

A sample that hit a time or working-time limit is `timed_out` (a failure). A sample that ended
in an error, or that holds no score at all (a log run without scoring), is a failure by default,
or an infrastructure failure with `sample_errors="infra"` — an error can be the agent crashing,
so excluding it is a choice the user makes, not the adapter (the leaderboard's `--errors zero`
and `--errors exclude` make the same choice). The same (task_id, arm, repeat) in two logs (a
rerun) is kept once, from the newest log, as the leaderboard does; a log that gave no samples
(it errored or was cancelled before any finished) is noted, never passed over silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from plumbline.records.adapters import Conversion, RunContext, validate
from plumbline.records.io import RecordError

ArmFrom = Literal["model", "task"]
SampleErrors = Literal["failure", "infra"]
AGENT = "inspect"
NOT_SCORED = "the sample has no score (was the log run without scoring?)"


def _usage_totals(sample: Any) -> dict[str, Any]:
    usages = list((sample.model_usage or {}).values())
    if not usages:
        return dict.fromkeys(
            (
                "input_tokens",
                "output_tokens",
                "cache_read_tokens",
                "cache_write_tokens",
                "total_cost_usd",
            ),
        )

    def total(name: str) -> int:
        return sum(int(getattr(u, name) or 0) for u in usages)

    costs = [u.total_cost for u in usages if getattr(u, "total_cost", None) is not None]
    return {
        "input_tokens": total("input_tokens"),
        "output_tokens": total("output_tokens"),
        "cache_read_tokens": total("input_tokens_cache_read"),
        "cache_write_tokens": total("input_tokens_cache_write"),
        "total_cost_usd": float(sum(costs)) if len(costs) == len(usages) else None,
    }


def _success(sample: Any, scorer: str | None) -> tuple[bool | None, str | None]:
    """(success, problem): success is None with a problem when the requested score is
    missing; both are None when the sample holds no score at all."""
    from inspect_ai.scorer import value_to_float

    scores = sample.scores or {}
    if not scores:
        return None, None
    name = scorer or next(iter(scores))
    if name not in scores:
        return None, f"no score from scorer {name!r}; scorers: {', '.join(scores)}"
    value = value_to_float()(scores[name].value)
    return value == 1.0, None


def _moment(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    return None


@dataclass(frozen=True)
class SampleTime:
    """When a sample ran, by the best evidence its log holds."""

    seconds: float | None
    started: str | None
    ended: str | None
    source: str | None
    """`total_time`, `started_at/completed_at`, `events`, or None (no evidence)."""


def sample_time(sample: Any) -> SampleTime:
    """A sample's duration: `total_time`; else `completed_at − started_at`; else the span of
    its events (the earliest event `timestamp` to the latest `timestamp` or `completed`).

    Inspect ≤ 0.3.58 wrote neither `total_time` nor the start and end, but every event it
    recorded carries its time; the span of the events is the time the sample ran.
    """
    started = _moment(getattr(sample, "started_at", None))
    ended = _moment(getattr(sample, "completed_at", None))
    total = getattr(sample, "total_time", None)
    if started is None or ended is None:
        stamps = [
            moment
            for event in getattr(sample, "events", None) or []
            for moment in (
                _moment(getattr(event, "timestamp", None)),
                _moment(getattr(event, "completed", None)),
            )
            if moment is not None and moment.tzinfo is not None
        ]
        if stamps:
            started, ended = started or min(stamps), ended or max(stamps)
            if total is None:
                return SampleTime(
                    (ended - started).total_seconds(),
                    started.isoformat(),
                    ended.isoformat(),
                    "events",
                )
    start_text = started.isoformat() if started else None
    end_text = ended.isoformat() if ended else None
    if total is not None:
        return SampleTime(float(total), start_text, end_text, "total_time")
    if started is not None and ended is not None:
        seconds = (ended - started).total_seconds()
        return SampleTime(seconds, start_text, end_text, "started_at/completed_at")
    return SampleTime(None, start_text, end_text, None)


def sample_to_fields(
    sample: Any, arm: str, *, scorer: str | None, sample_errors: SampleErrors
) -> tuple[dict[str, Any], str | None]:
    """Run-record fields for one sample (`task_id` is the sample id); the second value names
    a missing score or a missing duration."""
    from inspect_ai.model import ChatMessageAssistant

    assistant = [m for m in sample.messages or [] if isinstance(m, ChatMessageAssistant)]
    limit = getattr(sample, "limit", None)
    timed_out = limit is not None and limit.type in ("time", "working")
    errored = sample.error is not None
    success, problem = _success(sample, scorer)
    unscored = success is None and problem is None
    reason = sample.error.message if errored else (NOT_SCORED if unscored else None)
    if errored or timed_out or unscored:
        success, problem = False, None
    excluded = (errored or unscored) and not timed_out and sample_errors == "infra"
    timing = sample_time(sample)
    fields: dict[str, Any] = {
        "task_id": sample.id,
        "arm": arm,
        "repeat": sample.epoch,
        "success": success,
        "duration_seconds": timing.seconds,
        **_usage_totals(sample),
        "step_count": len(assistant),
        "tool_call_count": sum(len(m.tool_calls or []) for m in assistant),
        "run_id": sample.uuid,
        "model": None,
        "agent": AGENT,
        "started_at_utc": timing.started,
        "ended_at_utc": timing.ended,
        "timed_out": timed_out,
        "infra_failure": excluded,
        "infra_failure_reason": reason,
        "failure_reason": reason if unscored else None,
        "duration_source": timing.source,
    }
    if problem is None and timing.seconds is None:
        problem = (
            "the sample records no time (no total_time, no start and end, no event timestamps)"
        )
        return fields, f"duration_seconds: {problem}"
    return fields, None if problem is None else f"success: {problem}"


def task_name(task: str) -> str:
    """A task's name without its registry namespace (`inspect_evals/mmlu` → `mmlu`), as
    Inspect's `samples_df` writes `task_name` (its `remove_namespace`: the part after the
    first `/`)."""
    return task.split("/", 1)[1] if "/" in task else task


def _no_samples_note(name: str, log: Any) -> str:
    """The note for a log that gave no samples, worded like the leaderboard's
    `incomplete_log` problem."""
    status = log.status
    error = f" ({log.error.message})" if getattr(log, "error", None) is not None else ""
    return f"{name}: log status is {status!r}{error}; it holds no samples, so no run records"


@dataclass
class _Kept:
    """Where a converted unit came from, to keep the newest log's on a rerun."""

    index: int
    created: datetime
    path: str
    task: str


def _created(log: Any) -> datetime:
    """`eval.created` as the leaderboard orders logs (a naive time is local time)."""
    moment = _moment(log.eval.created) or datetime.min.replace(tzinfo=UTC)
    return moment if moment.tzinfo is not None else moment.astimezone()


def convert_inspect(
    paths: list[str | Path],
    context: RunContext,
    *,
    arm_from: ArmFrom = "model",
    scorer: str | None = None,
    sample_errors: SampleErrors = "failure",
) -> Conversion:
    """Convert Inspect eval logs (`.eval` or `.json`) to run records, one per sample × epoch."""
    from inspect_ai.log import read_eval_log

    conversion = Conversion()
    kept: dict[tuple[str, str, int], _Kept] = {}
    replaced: dict[tuple[str, str, str], int] = {}
    superseded: set[int] = set()
    for path in paths:
        name = str(path)
        try:
            log = read_eval_log(name)
        except Exception as error:  # Inspect raises many types for unreadable logs
            conversion.errors.append(
                RecordError(name, 1, "<log>", f"not a readable Inspect eval log: {error}")
            )
            continue
        task = log.eval.task
        arm = context.arm or (log.eval.model if arm_from == "model" else task)
        # The arm is the task only when it was taken from it; otherwise the task names the unit.
        task_in_arm = context.arm is None and arm_from == "task"
        samples = log.samples or []
        if not samples:
            conversion.notes.append(_no_samples_note(name, log))
        elif log.status != "success":
            why = f" ({log.error.message})" if log.error is not None else ""
            conversion.notes.append(
                f"{name}: log status is {log.status!r}{why}; its {len(samples)} recorded "
                "sample-epochs are converted"
            )
        created = _created(log)
        for index, sample in enumerate(samples, start=1):
            fields, problem = sample_to_fields(
                sample, arm, scorer=scorer, sample_errors=sample_errors
            )
            fields["model"] = log.eval.model
            if not task_in_arm:
                fields["task_id"] = f"{task}/{sample.id}"
            # Samples have no line in a log; their position in it locates them.
            if problem is not None:
                field_name, _, text = problem.partition(": ")
                conversion.errors.append(RecordError(name, index, field_name, text))
                continue
            unit = (str(fields["task_id"]), arm, int(sample.epoch))
            before = len(conversion.records)
            validate(fields, name, index, conversion)
            if len(conversion.records) == before:
                continue
            dropped = _newest(kept, replaced, unit, _Kept(before, created, name, task))
            if dropped is not None:
                superseded.add(dropped)
    if superseded:
        conversion.records = [r for i, r in enumerate(conversion.records) if i not in superseded]
        for (task, older, newer), count in sorted(replaced.items()):
            conversion.notes.append(
                f"{older}: {count} (sample, epoch) runs of task {task!r} are also in {newer}; "
                "kept the newer log's"
            )
    return conversion


def _newest(
    kept: dict[tuple[str, str, int], _Kept],
    replaced: dict[tuple[str, str, str], int],
    unit: tuple[str, str, int],
    new: _Kept,
) -> int | None:
    """Make the newest log's record the unit's; the index of the record it supersedes, if any
    (logs ordered by `eval.created`, then path, as the leaderboard orders them)."""
    old = kept.get(unit)
    if old is None:
        kept[unit] = new
        return None
    newer, older = (new, old) if (new.created, new.path) >= (old.created, old.path) else (old, new)
    kept[unit] = newer
    key = (older.task, older.path, newer.path)
    replaced[key] = replaced.get(key, 0) + 1
    return older.index
