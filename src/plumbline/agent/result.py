"""The result document of `plumbline agent run` (`AgentRunDocument`): what the run did, a tally
per arm, and with `--collect-analyze` the comparison computed from its records.

`agent run --json` prints it; the results store validates it with this model. Its
`schema_version` is `"plumbline.agent_run/1"`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from plumbline.core.result import ResultModel, unit_field

SCHEMA_VERSION: Literal["plumbline.agent_run/1"] = "plumbline.agent_run/1"


class ArmRuns(ResultModel):
    """How the runs of one arm ended (infrastructure failures by kind)."""

    runs: int = unit_field("Run records of this arm (infrastructure failures included).", "count")
    successes: int = unit_field("Successful runs (a timed-out run is a failure).", "count")
    timed_out: int = unit_field("Runs that timed out.", "count")
    infra_failures: dict[str, int] = unit_field(
        "Infrastructure failures by kind (not the agent's failures).", "count"
    )
    protected_paths_modified: int = unit_field("Runs that edited a protected path.", "count")

    @property
    def kept(self) -> int:
        """Runs that count in the success rate (infrastructure failures left out, as
        `compare` leaves them out)."""
        return self.runs - sum(self.infra_failures.values())


class AgentRunDocument(ResultModel):
    """`plumbline agent run --json`: the run's counts per arm, and its analysis when asked."""

    model_config = ConfigDict(title="plumbline agent run")

    schema_version: Literal["plumbline.agent_run/1"] = Field(
        default=SCHEMA_VERSION, description="The document kind and major version."
    )
    executor: str = Field(description="`local` or `ray`.")
    output: str = Field(description="The results directory.")
    records: str = Field(description="The run records file.")
    scheduled: int = unit_field("Units (task, arm, repeat) in the schedule.", "count")
    ran: int = unit_field("Units run by this invocation.", "count")
    skipped: int = unit_field("Units skipped as already recorded.", "count")
    arms: dict[str, ArmRuns] = Field(description="Per arm, by name.")
    record_errors: list[str] = Field(description="`file:line: field: problem` per bad record.")
    reclaimed: list[dict[str, Any]] = Field(
        default_factory=list, description="Trial directories of interrupted runs reclaimed."
    )
    infra_retries: list[dict[str, Any]] = Field(
        default_factory=list, description="Trials run again after their node was lost."
    )
    arm_differences: list[dict[str, Any]] = Field(
        default_factory=list, description="Every field on which the arms differ."
    )
    sequential: dict[str, Any] | None = Field(
        default=None, description="With `--until-decided`: the sequential verdict."
    )
    compare: dict[str, Any] | None = Field(
        default=None,
        description="With `--collect-analyze` or `--html`: the comparison (a compare report, "
        "`schemas/compare_report.schema.json`).",
    )


def generated_schema() -> dict[str, Any]:
    """The JSON Schema shipped as `schemas/agent_run.schema.json`."""
    from plumbline.core.schema_files import model_schema

    return model_schema(
        AgentRunDocument,
        schema_id="https://plumbline.dev/schemas/agent_run/1/agent_run.schema.json",
        title="plumbline agent run",
    )
