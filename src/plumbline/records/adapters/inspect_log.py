"""Inspect AI eval logs: each sample × epoch becomes one run record.

The arm is the log's model (`--arm-from model`, two models compared on one task) or its task
(`--arm-from task`, two variants of a task on one model); the pair key is the sample id
(`task_id`) and the epoch (`repeat`). Success is the chosen scorer's value converted with
Inspect's own `value_to_float` and equal to 1 (fully correct). Duration is the sample's
`total_time`; tokens and cost are summed over the sample's `model_usage` (cost stays null when
the provider reported none). A sample that hit a time or working-time limit is `timed_out`
(a failure); a sample that ended in an error is a failure by default, or an infrastructure
failure with `sample_errors="infra"` — an error can be the agent crashing, so excluding it is a
choice the user makes, not the adapter.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from plumbline.records.adapters import Conversion, RunContext, validate
from plumbline.records.io import RecordError

ArmFrom = Literal["model", "task"]
SampleErrors = Literal["failure", "infra"]
AGENT = "inspect"


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
    from inspect_ai.scorer import value_to_float

    scores = sample.scores or {}
    if not scores:
        return None, "the sample has no score"
    name = scorer or next(iter(scores))
    if name not in scores:
        return None, f"no score from scorer {name!r}; scorers: {', '.join(scores)}"
    value = value_to_float()(scores[name].value)
    return value == 1.0, None


def sample_to_fields(
    sample: Any, arm: str, *, scorer: str | None, sample_errors: SampleErrors
) -> tuple[dict[str, Any], str | None]:
    """Run-record fields for one sample; the second value names a missing score."""
    from inspect_ai.model import ChatMessageAssistant

    assistant = [m for m in sample.messages or [] if isinstance(m, ChatMessageAssistant)]
    limit = getattr(sample, "limit", None)
    timed_out = limit is not None and limit.type in ("time", "working")
    errored = sample.error is not None
    success, problem = _success(sample, scorer)
    if errored or timed_out:
        success, problem = False, None
    fields: dict[str, Any] = {
        "task_id": sample.id,
        "arm": arm,
        "repeat": sample.epoch,
        "success": success,
        "duration_seconds": sample.total_time,
        **_usage_totals(sample),
        "step_count": len(assistant),
        "tool_call_count": sum(len(m.tool_calls or []) for m in assistant),
        "run_id": sample.uuid,
        "model": None,
        "agent": AGENT,
        "started_at_utc": sample.started_at,
        "ended_at_utc": sample.completed_at,
        "timed_out": timed_out,
        "infra_failure": errored and sample_errors == "infra",
        "infra_failure_reason": sample.error.message if errored else None,
    }
    return fields, problem


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
    for path in paths:
        name = str(path)
        try:
            log = read_eval_log(name)
        except Exception as error:  # Inspect raises many types for unreadable logs
            conversion.errors.append(
                RecordError(name, 1, "<log>", f"not a readable Inspect eval log: {error}")
            )
            continue
        arm = context.arm or (log.eval.model if arm_from == "model" else log.eval.task)
        for index, sample in enumerate(log.samples or [], start=1):
            fields, problem = sample_to_fields(
                sample, arm, scorer=scorer, sample_errors=sample_errors
            )
            fields["model"] = log.eval.model
            # Samples have no line in a log; their position in it locates them.
            if problem is not None:
                conversion.errors.append(RecordError(name, index, "success", problem))
                continue
            validate(fields, name, index, conversion)
    return conversion
