"""Adaptive leaderboard runs: stop calling a model once its place against every other is decided.

**The procedure.** The suite's questions are put in one seeded, uniformly random order before
any model answers. Rounds take the next questions of that order; every model still *active*
answers them. Each question counts as its weighted value (`leaderboard.adaptive_scores`), whose
mean over the suite is the SA Bench weighted overall. After each round, every pair of models
(a, b) with difference Δ = overall(a) − overall(b) on the suite is tested, from the questions
both answered, with anytime-valid betting tests for sampling without replacement
(`plumbline.stats.betting`) of the one-sided nulls

    Δ ≤ δ (rejected: a ahead),   Δ ≥ −δ (rejected: b ahead),
    Δ ≥ δ and Δ ≤ −δ (both rejected: a certified tie; tested only when δ > 0),

and Holm's step-down (Holm 1979) over all the nulls of all the pairs (2 or 4 per pair) says
which are rejected. A pair is **decided** (`ahead`/`behind`: more than δ apart), a **certified
tie** (`tie`: both tie nulls rejected, less than δ apart), **within the margin**
(`ahead_within_margin`: only `Δ ≤ −δ` rejected, so the first is not behind by δ or more;
`behind_within_margin` the mirror), or **open**. A rejection is never taken back (the p-values
are running minima, and Holm's step-down rejects more as they fall), so a status only grows
stronger: a pair within the margin is still updated while both its models are asked, and can
become decided or a tie.

**What keeps a model asked.** A model is asked while one of its pairs is *unsettled*: open, or
within the margin with an estimated gap above 2δ. The second is the classic indifference-zone
reading of a tie margin (Bechhofer 1954): the order matters only beyond δ, so a pair shown the
right way round up to δ needs no more questions; but a gap estimated above 2δ is pursued until
decided apart (its test of `Δ ≤ δ` is then at least δ from the truth, no harder than settling
two equal models within the margin), so a tie margin does not merge models far apart into one
tie group. The rule only chooses when to stop; the guarantee holds for any stopping rule. The
run ends when no pair is unsettled (`decided`), when the next round would exceed the budget
(`budget`), or when the questions run out (`questions`).

**The guarantee.** Each p-value is the running minimum of 1 / capital, valid at every look at
once (Ville's inequality), so Holm's argument holds uniformly over the rounds: the first true
null ever rejected is rejected at a threshold of at most α / (number of true nulls), and the
union over the true nulls has probability at most α. So with probability
at least `1 − α` every status holds at once, *at whatever time the procedure stops*: a decided
pair is more than δ apart in its order, a certified tie less than δ apart, and a pair within
the margin not the other way round by δ or more; so no pair is ordered wrongly by δ or more
(with δ = 0: no decided pair is in the wrong order). This holds for any scores: no model of
how models behave (no item-response model, no models seen before) is assumed. The estimand is
the models' overall score on this suite's questions (a finite population sampled without
replacement). Each model's interval is its own empirical-Bernstein confidence sequence for
that overall at level `1 − α`, and each pair's interval its sequence at `1 − α/P` (Bonferroni
over the `P` pairs, so the intervals hold together); both are valid after the adaptive stop.
Holm's decisions can come before a pair's interval clears ±δ.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from plumbline.core.result import Interval
from plumbline.leaderboard.adaptive_result import (
    AdaptivePair,
    AdaptiveReplay,
    AdaptiveRun,
    PairReplay,
    PairStatus,
    StopReason,
)
from plumbline.leaderboard.adaptive_scores import (
    ALPHA,
    PairPath,
    QuestionScores,
    ScoreTable,
    draw_order,
)
from plumbline.stats.confidence_sequences import METHOD
from plumbline.stats.multiple import holm

GUARANTEE = (
    "with probability at least {level:.0%}, no decided pair is in the wrong order, at whatever "
    "round the run stopped (anytime-valid betting tests, Holm's step-down over the {nulls} of "
    "{pairs}; no model of the models' behaviour assumed)"
)
GUARANTEE_MARGIN = (
    "with probability at least {level:.0%}, no pair is ordered wrongly by {margin:g} or more, "
    "at whatever round the run stopped: every decided pair is more than {margin:g} apart in its "
    "order, every certified tie less than {margin:g} apart, and every pair within the margin "
    "not the other way round by {margin:g} or more (anytime-valid betting tests, Holm's "
    "step-down over the {nulls} of {pairs}; no model of the models' behaviour assumed)"
)
#: A pair within the margin whose estimated gap is above this many δ is pursued until decided.
PURSUE = 2.0
WITHIN_MARGIN: tuple[PairStatus, ...] = ("ahead_within_margin", "behind_within_margin")


@dataclass(frozen=True)
class AdaptiveSettings:
    """What an adaptive run is asked to do: its error rate, tie margin, rounds and budget."""

    alpha: float = ALPHA
    tie_margin: float = 0.0
    round_size: int = 20
    budget_calls: int | None = None
    budget_usd: float | None = None

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be strictly between 0 and 1, got {self.alpha!r}")
        if not (math.isfinite(self.tie_margin) and 0 <= self.tie_margin < 1):
            raise ValueError(f"tie margin must be in [0, 1), got {self.tie_margin!r}")
        if self.round_size < 1:
            raise ValueError(f"round size must be at least 1, got {self.round_size!r}")
        if self.budget_calls is not None and self.budget_calls < 1:
            raise ValueError(f"budget must be at least 1 call, got {self.budget_calls!r}")
        if self.budget_usd is not None and not (
            math.isfinite(self.budget_usd) and self.budget_usd > 0
        ):
            raise ValueError(f"a dollar budget must be above $0, got {self.budget_usd!r}")


@dataclass(frozen=True)
class PairOutcome:
    """One pair's state: `status` says where `first` stands against `second`."""

    first: str
    second: str
    status: PairStatus
    questions: int
    difference: float
    low: float
    high: float


@dataclass(frozen=True)
class ModelOutcome:
    """One model's overall score on the questions it answered, with its confidence sequence."""

    model: str
    questions: int
    estimate: float
    low: float
    high: float


@dataclass(frozen=True)
class AdaptiveOutcome:
    """What an adaptive run did and concluded."""

    models: tuple[ModelOutcome, ...]
    pairs: tuple[PairOutcome, ...]
    calls_used: int
    calls_full: int
    stop_reason: StopReason
    settings: AdaptiveSettings
    population: int
    spent_usd: float | None = None

    @property
    def share(self) -> float:
        return self.calls_used / self.calls_full if self.calls_full else 0.0

    @property
    def guarantee(self) -> str:
        template = GUARANTEE_MARGIN if self.settings.tie_margin > 0 else GUARANTEE
        return template.format(
            level=1 - self.settings.alpha,
            margin=self.settings.tie_margin,
            pairs="1 pair" if len(self.pairs) == 1 else f"{len(self.pairs)} pairs",
            nulls="4 one-sided nulls" if self.settings.tie_margin > 0 else "2 one-sided nulls",
        )

    @property
    def open_pairs(self) -> list[PairOutcome]:
        return [pair for pair in self.pairs if pair.status == "open"]

    def document(self, order_seed: int) -> AdaptiveRun:
        """The `adaptive` block of the leaderboard document."""
        level = 1 - self.settings.alpha / max(len(self.pairs), 1)
        return AdaptiveRun(
            calls_used=self.calls_used,
            calls_full=self.calls_full,
            questions=self.population,
            stop_reason=self.stop_reason,
            tie_margin=self.settings.tie_margin,
            alpha=self.settings.alpha,
            round_size=self.settings.round_size,
            budget_calls=self.settings.budget_calls,
            budget_usd=self.settings.budget_usd,
            cost_usd=self.spent_usd,
            order_seed=order_seed,
            guarantee=self.guarantee,
            pairs=[
                AdaptivePair(
                    first=pair.first,
                    second=pair.second,
                    status=pair.status,
                    questions=pair.questions,
                    difference=pair.difference,
                    interval=Interval(low=pair.low, high=pair.high, level=level, method=METHOD),
                )
                for pair in self.pairs
            ],
            models={outcome.model: outcome.questions for outcome in self.models},
        )

    def groups(self, order: Sequence[str] | None = None) -> list[list[str]]:
        """Models in `order` (default: by estimate), grouped so that a model joins the group
        above unless it is decided apart from every member (an open pair or a certified tie
        joins them)."""
        if order is None:
            order = [m.model for m in sorted(self.models, key=lambda outcome: -outcome.estimate)]
        status = {(p.first, p.second): p.status for p in self.pairs}
        groups: list[list[str]] = []
        for model in order:
            if groups and not _apart(status, groups[-1], model):
                groups[-1].append(model)
            else:
                groups.append([model])
        return groups


def _apart(status: Mapping[tuple[str, str], PairStatus], group: list[str], model: str) -> bool:
    def decided(a: str, b: str) -> bool:
        found = status.get((a, b), status.get((b, a)))
        return found in ("ahead", "behind")

    return all(decided(member, model) for member in group)


def _status(rejected: Sequence[bool]) -> PairStatus:
    """A pair's status from which of its nulls (in `adaptive_scores.NULLS` order) are rejected:
    `Δ ≤ δ` (ahead), `Δ ≥ −δ` (behind), `Δ ≥ δ` and `Δ ≤ −δ` (both: a tie; only `Δ ≤ −δ`:
    ahead within the margin; only `Δ ≥ δ`: behind within it)."""
    if rejected[0]:
        return "ahead"
    if rejected[1]:
        return "behind"
    if len(rejected) == 4:
        if rejected[2] and rejected[3]:
            return "tie"
        if rejected[3]:
            return "ahead_within_margin"
        if rejected[2]:
            return "behind_within_margin"
    return "open"


class AdaptiveProcedure:
    """The loop of an adaptive run, driven by whoever has the scores.

    `next_round()` says how many more questions of the order to ask and which models answer
    them; `observe(t)` takes the number of questions every active model has now answered and
    updates the open pairs from `path(a, b, t)`, the pair's evidence over the first `t`
    questions, with Holm's step-down over every null of every pair (each null's latest
    p-value). A replay over complete logs and a live run share this one loop.
    """

    def __init__(
        self,
        models: Sequence[str],
        population: int,
        settings: AdaptiveSettings,
        path: PairPath,
    ) -> None:
        self.models = list(models)
        self.population = population
        self.settings = settings
        self.path = path
        budget = settings.budget_calls
        if budget is not None and budget < len(self.models):
            raise ValueError(
                f"a budget of {budget} calls cannot ask one question of each of "
                f"{len(self.models)} models"
            )
        self.pairs = list(itertools.combinations(range(len(self.models)), 2))
        self.status: dict[tuple[int, int], PairOutcome] = {}
        nulls = 4 if settings.tie_margin > 0 else 2
        self.pvalues = np.ones((len(self.pairs), nulls))
        self.answered = [0] * len(self.models)
        self.stop_reason: StopReason | None = None
        self.calls = 0
        #: Dollars spent so far and each model's mean cost per question asked (set by a live run
        #: after each round, for a dollar budget; unknown before the first round).
        self.spent_usd = 0.0
        self.cost_per_question: list[float] | None = None

    @property
    def pair_alpha(self) -> float:
        return self.settings.alpha / max(len(self.pairs), 1)

    def active(self) -> list[int]:
        """The models with an unsettled pair (module docstring): open, or within the margin
        with an estimated gap above `PURSUE` δ."""
        limit = PURSUE * self.settings.tie_margin
        unsettled = [
            pair
            for pair in self.pairs
            if self._open(pair)
            or (
                self.status[pair].status in WITHIN_MARGIN
                and abs(self.status[pair].difference) > limit
            )
        ]
        return sorted({index for pair in unsettled for index in pair})

    def _open(self, pair: tuple[int, int]) -> bool:
        found = self.status.get(pair)
        return found is None or found.status == "open"

    def _final(self, pair: tuple[int, int]) -> bool:
        """Decided or a tie: no evidence can change the status any more."""
        found = self.status.get(pair)
        return found is not None and found.status in ("ahead", "behind", "tie")

    def next_round(self) -> tuple[int, list[int]]:
        """(questions to add, the models that answer them); (0, []) once the run is over."""
        active = self.active()
        done = max(self.answered, default=0)
        if not active:
            self.stop_reason = "decided"
            return 0, []
        if done == self.population:
            self.stop_reason = "questions"
            return 0, []
        size = min(self.settings.round_size, self.population - done, self._affordable(active))
        if size <= 0:
            self.stop_reason = "budget"
            return 0, []
        return size, active

    def _affordable(self, active: list[int]) -> int:
        """The most questions the budgets leave for the active models: calls left over the
        models, and dollars left over their mean cost per question so far (the first round is
        asked at full size: no cost is known before it)."""
        affordable = self.population
        if self.settings.budget_calls is not None:
            affordable = (self.settings.budget_calls - self.calls) // len(active)
        if self.settings.budget_usd is not None and self.cost_per_question is not None:
            per_question = sum(self.cost_per_question[index] for index in active)
            if per_question > 0:
                left = self.settings.budget_usd - self.spent_usd
                affordable = min(affordable, math.floor(left / per_question))
        return affordable

    def observe(self, answered: int, active: Sequence[int]) -> None:
        """Every model of `active` has now answered the first `answered` questions."""
        for index in active:
            self.calls += answered - self.answered[index]
            self.answered[index] = answered
        updated = [
            position
            for position, pair in enumerate(self.pairs)
            if not self._final(pair) and pair[0] in active and pair[1] in active
        ]
        evidence = {}
        for position in updated:
            first, second = self.pairs[position]
            evidence[position] = self.path(first, second, answered)
            latest = evidence[position].pvalues[:, answered - 1]
            self.pvalues[position] = np.minimum(self.pvalues[position], latest)
        rejected = holm(self.pvalues.ravel()).reshape(self.pvalues.shape) <= self.settings.alpha
        for position in updated:
            sequence = evidence[position].sequence
            first, second = self.pairs[position]
            self.status[(first, second)] = PairOutcome(
                first=self.models[first],
                second=self.models[second],
                status=_status(rejected[position].tolist()),
                questions=answered,
                difference=float(sequence.means[answered - 1]),
                low=float(sequence.lows[answered - 1]),
                high=float(sequence.highs[answered - 1]),
            )

    def outcomes(self) -> tuple[PairOutcome, ...]:
        return tuple(self.status[pair] for pair in self.pairs if pair in self.status)


def run_procedure(procedure: AdaptiveProcedure, ask: Callable[[int, list[int]], None]) -> None:
    """Drive `procedure` to its end; `ask(size, active)` gets the next `size` questions'
    scores for the active models (a live run calls them; a replay has them)."""
    while True:
        size, active = procedure.next_round()
        if size == 0:
            return
        ask(size, active)
        procedure.observe(max(procedure.answered) + size, active)


def replay(table: ScoreTable, settings: AdaptiveSettings) -> AdaptiveOutcome:
    """The adaptive procedure over complete scores already in the order asked."""
    population = table.values.shape[1]
    procedure = AdaptiveProcedure(
        table.models,
        population,
        settings,
        table.pair_path(settings.alpha / _pairs(table), settings.tie_margin),
    )
    run_procedure(procedure, lambda size, active: None)
    return outcome_of(procedure, table)


def _pairs(table: ScoreTable) -> int:
    count = len(table.models)
    return max(count * (count - 1) // 2, 1)


def outcome_of(procedure: AdaptiveProcedure, table: ScoreTable) -> AdaptiveOutcome:
    """The outcome of a finished procedure whose scores `table` holds."""
    reason = procedure.stop_reason or "questions"
    models = tuple(
        _model_outcome(table, index, answered, procedure.settings.alpha)
        for index, answered in enumerate(procedure.answered)
    )
    return AdaptiveOutcome(
        models=models,
        pairs=procedure.outcomes(),
        calls_used=procedure.calls,
        calls_full=len(table.models) * procedure.population,
        stop_reason=reason,
        settings=procedure.settings,
        population=procedure.population,
        spent_usd=procedure.spent_usd if procedure.cost_per_question is not None else None,
    )


def _model_outcome(table: ScoreTable, index: int, answered: int, alpha: float) -> ModelOutcome:
    sequence = table.model_sequence(index, answered, alpha)
    return ModelOutcome(
        model=table.models[index],
        questions=answered,
        estimate=sequence.mean,
        low=sequence.low,
        high=sequence.high,
    )


def disagrees(status: PairStatus, full: float, margin: float) -> bool:
    """Whether a pair's status contradicts its difference on all the questions (what the
    guarantee says each status means)."""
    if status == "ahead":
        return full <= margin
    if status == "behind":
        return full >= -margin
    if status == "tie":
        return abs(full) >= margin
    if status == "ahead_within_margin":
        return full <= -margin
    if status == "behind_within_margin":
        return full >= margin
    return False


def replay_many(
    scores: QuestionScores, replays: int, settings: AdaptiveSettings, seed: int = 0
) -> AdaptiveReplay:
    """Replay the adaptive procedure `replays` times, each in its own seeded random order, and
    compare every pair's conclusion with what all the questions say."""
    if replays < 1:
        raise ValueError(f"replays must be at least 1, got {replays!r}")
    if len(scores.models) < 2 or scores.questions == 0:
        raise ValueError("an adaptive replay needs at least two models with shared questions")
    full = scores.full_differences()
    shares: list[float] = []
    counts = np.zeros((4, full.size))  # decided, tied, within the margin, disagree
    any_wrong = 0
    outcome: AdaptiveOutcome | None = None
    for index in range(replays):
        outcome = replay(scores.table(draw_order(scores.questions, seed + index)), settings)
        shares.append(outcome.share)
        wrong = False
        for position, pair in enumerate(outcome.pairs):
            counts[0, position] += pair.status in ("ahead", "behind")
            counts[1, position] += pair.status == "tie"
            counts[2, position] += pair.status in WITHIN_MARGIN
            if disagrees(pair.status, float(full[position]), settings.tie_margin):
                counts[3, position] += 1
                wrong = True
        any_wrong += wrong
    assert outcome is not None
    pairs = [
        PairReplay(
            first=pair.first,
            second=pair.second,
            full_difference=float(full[position]),
            decided=float(counts[0, position] / replays),
            tied=float(counts[1, position] / replays),
            within_margin=float(counts[2, position] / replays),
            disagree=float(counts[3, position] / replays),
        )
        for position, pair in enumerate(outcome.pairs)
    ]
    low, median, high = np.quantile(shares, [0.1, 0.5, 0.9])
    return AdaptiveReplay(
        replays=replays,
        questions=scores.questions,
        models=scores.models,
        median_share=float(median),
        share_low=float(low),
        share_high=float(high),
        any_disagreement=any_wrong / replays,
        tie_margin=settings.tie_margin,
        alpha=settings.alpha,
        round_size=settings.round_size,
        guarantee=outcome.guarantee,
        pairs=pairs,
    )
