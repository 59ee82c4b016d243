"""The documents of adaptive runs: the `adaptive` block of a leaderboard made by
`plumbline run --adaptive`, and the report of `plumbline leaderboard --replay-adaptive`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from plumbline.core.result import Interval, ResultModel, unit_field

PairStatus = Literal[
    "ahead", "behind", "tie", "ahead_within_margin", "behind_within_margin", "open"
]
StopReason = Literal["decided", "budget", "questions"]


class AdaptivePair(ResultModel):
    """Where one pair of an adaptive run stands: `first` against `second`."""

    first: str
    second: str
    status: PairStatus = Field(
        description="`ahead`/`behind`: decided (first above/below second by more than the tie "
        "margin δ); `tie`: certified less than δ apart; `ahead_within_margin`: the first is not "
        "behind the second by δ or more (ordered up to δ, not decided apart); "
        "`behind_within_margin`: the mirror; `open`: none of these when the run stopped."
    )
    questions: int = unit_field("Questions both answered when it was last updated.", "count", ge=0)
    difference: float = unit_field("Overall score difference (first − second).", "proportion")
    interval: Interval = Field(description="The pair's confidence sequence when last updated.")


class AdaptiveRun(ResultModel):
    """What an adaptive run did: the calls it made, each pair's status and the guarantee."""

    calls_used: int = unit_field("Questions asked, summed over the models.", "count", ge=0)
    calls_full: int = unit_field("What a full run would ask (models × questions).", "count", ge=0)
    questions: int = unit_field("Questions in the suite (the population).", "count", ge=0)
    stop_reason: StopReason = Field(
        description="`decided` (no pair unsettled: each decided, a tie, or within the margin "
        "with an estimated gap of at most 2δ), `budget` (the next round would pass the call "
        "or dollar budget) or `questions` (every question asked)."
    )
    tie_margin: float = unit_field("δ: the tie margin.", "proportion", ge=0, lt=1)
    alpha: float = unit_field(
        "The family-wise error rate over all pairs.", "probability", gt=0, lt=1
    )
    round_size: int = unit_field("Questions per round.", "count", ge=1)
    budget_calls: int | None = unit_field(
        "The call budget (`--budget N`), if one was given.", "count", default=None, ge=1
    )
    budget_usd: float | None = unit_field(
        "The dollar budget (`--budget $X`), if one was given.", "usd", default=None, gt=0
    )
    cost_usd: float | None = unit_field(
        "What the run's calls cost, priced with the leaderboard's price table (None: not "
        "priced; see each model's cost).",
        "usd",
        default=None,
    )
    order_seed: int = unit_field(
        "Seed of the order the questions were asked in (a label, not a quantity).", "count"
    )
    guarantee: str = Field(description="The guarantee of the decisions, in words.")
    pairs: list[AdaptivePair]
    models: dict[str, int] = unit_field("Questions each model answered.", "count")


class PairReplay(ResultModel):
    """How one pair fared over the replays, against what all the questions say."""

    first: str
    second: str
    full_difference: float = unit_field("The difference on every question.", "proportion")
    decided: float = unit_field("Share of replays that decided the pair.", "proportion", ge=0, le=1)
    tied: float = unit_field("Share of replays that certified a tie.", "proportion", ge=0, le=1)
    within_margin: float = unit_field(
        "Share of replays that ordered the pair only up to the tie margin.",
        "proportion",
        default=0.0,
        ge=0,
        le=1,
    )
    disagree: float = unit_field(
        "Share of replays whose conclusion contradicts the full data.", "proportion", ge=0, le=1
    )


class AdaptiveReplay(ResultModel):
    """`leaderboard --replay-adaptive`: the adaptive procedure replayed over complete logs."""

    replays: int = unit_field("Replays, each in its own seeded random order.", "count", ge=1)
    questions: int = unit_field("Questions every model answered.", "count", ge=0)
    models: list[str]
    median_share: float = unit_field("Median share of a full run's calls used.", "proportion")
    share_low: float = unit_field("10th percentile of the share.", "proportion")
    share_high: float = unit_field("90th percentile of the share.", "proportion")
    any_disagreement: float = unit_field(
        "Share of replays where any pair's conclusion contradicts the full data.", "proportion"
    )
    tie_margin: float = unit_field("δ: the tie margin.", "proportion", ge=0, lt=1)
    alpha: float = unit_field(
        "The family-wise error rate over all pairs.", "probability", gt=0, lt=1
    )
    round_size: int = unit_field("Questions per round.", "count", ge=1)
    guarantee: str
    pairs: list[PairReplay]

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
