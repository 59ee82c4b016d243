"""The sequential verdict's types (`compare --sequential`): its plan, each step of its
confidence sequence, and the verdict. Re-exported by `compare.result`, which views import."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from plumbline.core.result import Interval, ResultModel, unit_field

SequentialVerdict = Literal["better", "worse", "equivalent", "undecided"]


class SequentialSettings(ResultModel):
    """The sequential plan's inputs (`--sequential`; stated in every view)."""

    effect: float = unit_field(
        "Planned pass-rate difference the design is powered for.", "proportion", default=0.10
    )
    baseline: float = unit_field(
        "Assumed control pass rate for planning (0.5 is the most conservative).",
        "proportion",
        default=0.5,
    )
    alpha: float = unit_field("Error rate over all looks.", "probability", default=0.05)
    power: float = unit_field("Planned power at the planned effect.", "probability", default=0.8)
    margin: float | None = unit_field(
        "Equivalence margin on the pass-rate difference (None: no equivalence verdict).",
        "proportion",
        default=None,
    )
    max_pairs: int | None = unit_field(
        "The cap on pairs, when set (None: the smallest reaching the planned power).",
        "count",
        default=None,
    )
    correlation: float = unit_field(
        "Assumed correlation coefficient (−1 to 1) of the two arms' outcomes within a pair, "
        "for planning (0: independent arms, the most pairs of any correlation ≥ 0, so the "
        "planned power holds whatever the true correlation ≥ 0).",
        "score",
        default=0.0,
        ge=-1,
        lt=1,
    )
    seed: int = unit_field(
        "Seed of the random order the pairs are analysed in, drawn before any outcome is read "
        "whatever the records' order (a label, not a quantity).",
        "count",
        default=0,
    )


class SequentialStep(ResultModel):
    """The confidence sequence after `pairs` pairs."""

    pairs: int = unit_field("Pairs seen.", "count")
    estimate: float = unit_field("Mean pass-rate difference T − C so far.", "proportion")
    low: float = unit_field("Lower bound of the confidence sequence.", "proportion")
    high: float = unit_field("Upper bound of the confidence sequence.", "proportion")


class SequentialComparison(ResultModel):
    """The sequential verdict on paired success (treatment − control)."""

    verdict: SequentialVerdict = Field(
        description="`better`/`worse`: the confidence sequence excludes 0; `equivalent`: it "
        "lies inside ±margin; `undecided`: no decision by the cap or with the pairs available."
    )
    pairs_used: int = unit_field("Pairs seen when the comparison stopped.", "count")
    pairs_available: int = unit_field("Pairs in the records.", "count")
    pairs_held_back: int = unit_field(
        "Pairs in rounds after the last complete round, held back until their round "
        "completes so the analysis order of the pairs already seen never changes.",
        "count",
        default=0,
    )
    max_pairs: int = unit_field("The cap: the design stops here at the latest.", "count")
    fixed_pairs: int = unit_field(
        "Pairs the fixed design needs for the same effect, baseline, alpha and power "
        "(`plumbline power --paired`).",
        "count",
    )
    estimate: float = unit_field("Mean pass-rate difference at the stop.", "proportion")
    interval: Interval = Field(description="The confidence sequence at the stop.")
    interval_guarantee: str = Field(
        default="",
        description="What the interval at the stop guarantees: exact as the test of no "
        "difference, approximate as a confidence sequence away from 0.",
    )
    method: str
    reason: str = Field(
        description="`boundary`, `equivalence`, `cap`, or `data` (the records ran out first)."
    )
    complete: bool = Field(
        description="False when the records ran out before a decision or the cap."
    )
    order: str = Field(description="The order the pairs were analysed in.")
    settings: SequentialSettings
    summary: str = Field(description="The verdict in one sentence.")
    path: list[SequentialStep] = Field(
        description="The confidence sequence after every pair up to the stop."
    )
