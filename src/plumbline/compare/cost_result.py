"""The A/B cost types: each arm's cost per task and per success, and the difference between
two arms, with intervals and where their numbers came from. Re-exported by `compare.result`,
which views import."""

from __future__ import annotations

from pydantic import Field

from plumbline.core.result import Interval, ResultModel, unit_field

#: `ArmCost.price_table` when `--prices` was not given: the records' own costs.
AS_RECORDED = "as recorded"


class CostFigure(ResultModel):
    """One cost figure in USD with its interval (None when it cannot be computed: `note` says
    why)."""

    estimate: float | None = unit_field("The figure.", "usd", default=None)
    interval: Interval | None = Field(default=None, description="Its confidence interval.")
    n: int = unit_field("Runs (or pairs) it rests on.", "count", default=0)
    note: str | None = Field(default=None, description="Why there is no figure or interval.")


class ArmCost(ResultModel):
    """What one arm's runs cost: per task (the mean cost of a run, one attempt at one task) and
    per success (the arm's total cost over its successes), over the runs with a known cost."""

    per_task_usd: CostFigure
    per_success_usd: CostFigure
    source: str = Field(
        description="Where the runs' tokens came from: `metered` (the harness's proxy), "
        "`agent-reported`, `unrecorded`, or `mixed (…)` naming each source when runs differ."
    )
    price_table: str = Field(
        description="The price table that priced the runs: the version given with `--prices`, "
        "or the versions named in the records (`as recorded` when they name none)."
    )


class CostDifference(ResultModel):
    """Treatment − control of cost per task and per success, over the pairs where both runs have
    a cost (the pairs resampled by task, then repeat)."""

    pairs: int = unit_field("Pairs where both runs have a cost.", "count")
    per_task_usd: CostFigure
    per_success_usd: CostFigure


class CostComparison(ResultModel):
    """Both arms' costs and their difference."""

    treatment: ArmCost
    control: ArmCost
    difference: CostDifference
    method: str = Field(description="How the intervals were computed.")
