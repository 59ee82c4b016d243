"""The run record's typed model (the A/B schema): `RunRecord`, its usage parts, the bounds of
its values, and the JSON Schema shipped with the package (`run_record_schema`); the two accept
and reject the same records. Read record files with `records.run_record.read_run_records`.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
)

from plumbline.core.timestamps import parse_utc

SCHEMA_VERSION = "1.0.0"

TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
REQUIRED_FIELDS = (
    "task_id",
    "arm",
    "repeat",
    "success",
    "duration_seconds",
    "total_cost_usd",
    *TOKEN_FIELDS,
)
COUNT_FIELDS = ("step_count", "tool_call_count", "acceptance_cmd_count")


def _task_id_to_str(value: Any) -> Any:
    # Inspect sample ids and many harnesses' task ids are integers; the pair key is textual.
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


# Sane maxima: a value past these is a unit mistake or garbage, not a run (and would overflow
# the 64-bit columns the comparison sums).
MAX_SECONDS = 30 * 24 * 3600.0
MAX_TOKENS = 10**12
MAX_COUNT = 10**9
MAX_COST_USD = 1e6

NonNegativeInt = Annotated[int, Field(ge=0, le=MAX_COUNT)]
TokenCount = Annotated[int, Field(ge=0, le=MAX_TOKENS)]
Seconds = Annotated[float, Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)]
CostUsd = Annotated[float, Field(ge=0, le=MAX_COST_USD, allow_inf_nan=False)]


class ModelUsage(BaseModel):
    """One model's share of a run's tokens and cost (an agent that used several models, e.g.
    Claude Code's `modelUsage`). The record's own token and cost fields are the totals."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    model: Annotated[str, Field(min_length=1)]
    input_tokens: TokenCount | None = None
    output_tokens: TokenCount | None = None
    cache_read_tokens: TokenCount | None = None
    cache_write_tokens: TokenCount | None = None
    total_cost_usd: CostUsd | None = None


class MeteredUsage(BaseModel):
    """What the harness's metering proxy counted for a run: its model calls and the tokens the
    provider's responses stated (`agent run`; `agent.metering`)."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    calls: NonNegativeInt
    failed_calls: NonNegativeInt = 0
    calls_without_usage: NonNegativeInt = 0
    input_tokens: TokenCount
    output_tokens: TokenCount
    cache_read_tokens: TokenCount
    cache_write_tokens: TokenCount
    reasoning_tokens: TokenCount | None = None
    models: list[str] = Field(default_factory=list)
    latency_seconds: Seconds | None = None


class ReportedUsage(BaseModel):
    """The tokens, cost and model the agent reported about its own run (kept beside the
    metered ones; never what the comparison counts when the run was metered)."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True, protected_namespaces=())

    input_tokens: TokenCount | None = None
    output_tokens: TokenCount | None = None
    cache_read_tokens: TokenCount | None = None
    cache_write_tokens: TokenCount | None = None
    total_cost_usd: CostUsd | None = None
    model: str | None = None


def time_problems(started: str | None, ended: str | None) -> list[tuple[str, str]]:
    """(field, problem) for start/end times that are not ISO 8601 or end before they start."""
    problems: list[tuple[str, str]] = []
    moments: dict[str, datetime] = {}
    for name, value in (("started_at_utc", started), ("ended_at_utc", ended)):
        if value is None:
            continue
        try:
            moments[name] = parse_utc(value)
        except (ValueError, TypeError):
            problems.append((name, f"not an ISO 8601 date-time: {value!r}"))
    if len(moments) == 2 and moments["ended_at_utc"] < moments["started_at_utc"]:
        problems.append(
            ("ended_at_utc", f"ends before it starts ({ended!r} is before {started!r})")
        )
    return problems


class RunRecord(BaseModel):
    """One run record (schema version 1.0.0).

    Cost and token fields are required but nullable: null means "not reported" and is excluded
    from that metric and counted, never read as zero. `timed_out` runs are failures;
    `infra_failure` runs are excluded from the comparison and reported per arm.
    """

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True, protected_namespaces=())

    task_id: Annotated[str, BeforeValidator(_task_id_to_str), Field(min_length=1)]
    arm: Annotated[str, Field(min_length=1)]
    repeat: NonNegativeInt
    success: bool
    duration_seconds: Seconds
    total_cost_usd: CostUsd | None
    input_tokens: TokenCount | None
    output_tokens: TokenCount | None
    cache_read_tokens: TokenCount | None
    cache_write_tokens: TokenCount | None

    run_id: str | None = None
    session_id: str | None = None
    model: str | None = None
    agent: str | None = None
    step_count: NonNegativeInt | None = None
    tool_call_count: NonNegativeInt | None = None
    acceptance_cmd_count: NonNegativeInt | None = None
    acceptance_first_pass: bool | None = None
    agent_exit_code: int | None = None
    opencode_exit_code: int | None = None
    acceptance_exit_code: int | None = None
    setup_exit_code: int | None = None
    arm_setup_exit_code: int | None = None
    started_at_utc: str | None = None
    ended_at_utc: str | None = None
    timed_out: bool = False
    infra_failure: bool = False
    infra_failure_reason: str | None = None
    prompt_file: str | None = None
    acceptance_command: str | None = None
    workspace: str | None = None
    # Written by `plumbline agent run` (all optional; older records lack them).
    infra_failure_kind: str | None = None
    diff_file: str | None = None
    protected_paths_modified: list[str] | None = None
    protected_paths_restored: bool | None = None
    acceptance_timed_out: bool | None = None
    acceptance_duration_seconds: Seconds | None = None
    harness_duration_seconds: Seconds | None = None
    duration_source: str | None = None
    schedule_position: NonNegativeInt | None = None
    failure_reason: str | None = None
    agent_report_error: str | None = None
    # Written by `plumbline agent run` since trials are sandboxed.
    sandbox: str | None = None
    # The trial's network (isolated, host, none) and kernel-enforced limits (agent run).
    network: str | None = None
    limits: dict[str, Any] | None = None
    shadowing_files: list[str] | None = None
    # Written by the Ray executor (`agent run --executor ray`).
    node: str | None = None
    infra_retries: NonNegativeInt | None = None
    # Per-model detail of the token and cost totals, when the agent reports it.
    model_usage: list[ModelUsage] | None = None
    # Written by `plumbline agent run` since it meters the model traffic (agent.metering).
    usage_source: Literal["metered", "agent-reported"] | None = None
    usage_note: str | None = None
    metered_usage: MeteredUsage | None = None
    agent_reported_usage: ReportedUsage | None = None
    usage_discrepancy: Annotated[float, Field(allow_inf_nan=False)] | None = None
    usage_discrepancy_flagged: bool | None = None
    price_table: str | None = None
    cost_note: str | None = None
    agent_duration_seconds: Seconds | None = None

    @field_validator("started_at_utc", "ended_at_utc")
    @classmethod
    def _date_time(cls, value: str | None, info: ValidationInfo) -> str | None:
        if info.field_name == "ended_at_utc":
            found = time_problems(info.data.get("started_at_utc"), value)
        else:
            found = time_problems(value, None)
        for name, problem in found:
            if name == info.field_name:
                raise ValueError(problem)
        return value

    @property
    def total_tokens(self) -> int | None:
        """`input + output + cache_read + cache_write` (the A/B schema); None if any is unknown."""
        parts = [getattr(self, name) for name in TOKEN_FIELDS]
        return None if any(p is None for p in parts) else sum(parts)

    @property
    def non_cache_tokens(self) -> int | None:
        """`input + output` (the A/B schema), or None if either is unknown."""
        if self.input_tokens is None or self.output_tokens is None:
            return None
        return self.input_tokens + self.output_tokens


@cache
def run_record_schema() -> dict[str, Any]:
    """The run record JSON Schema shipped with the package."""
    text = resources.files("plumbline").joinpath("schemas/run_record.schema.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema
