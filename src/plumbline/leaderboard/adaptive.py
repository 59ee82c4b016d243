"""Adaptive leaderboard runs: stop calling a model once its place against every other is decided.

**The procedure.** The suite's questions are put in one seeded, uniformly random order before
any model answers. Rounds take the next questions of that order; every model still *active*
answers them. Each question's score `s` in category `c` (of `N_c` questions, weight `w_c`,
`N` questions in all) counts as the value

    x = w_c · (N / N_c) · s,

so the mean of `x` over the whole suite is the SA Bench weighted overall `Σ_c w_c · mean_c(s)`,
and the mean over any prefix of a uniformly random order is an unbiased estimate of it. After
each round, every pair of models (a, b) gets the confidence sequence of
`plumbline.stats.confidence_sequences` for the mean of `x_a − x_b` over the suite, from the
questions both answered, at level `1 − α / P` for the `P` pairs (Bonferroni). A pair is

- **decided** when its sequence lies above `+δ` (a ahead) or below `−δ` (b ahead);
- a **certified tie** when it lies inside `[−δ, +δ]` (never when δ = 0);
- **open** otherwise.

A model stops being called once none of its pairs is open. The run ends when no pair is open
(`decided`), when the next round would exceed the call budget (`budget`), or when the questions
run out (`questions`).

**The guarantee.** Every pair's sequence holds at every look at once with probability at least
`1 − α/P`, so with probability at least `1 − α` no decided pair is in the wrong order and no
certified tie is further apart than δ, *at whatever time the procedure stops*, for any scores:
no model of how models behave (no item-response model, no models seen before) is assumed. The
estimand is the models' overall score on this suite's questions (a finite population sampled
without replacement). Each model's interval is its own confidence sequence for that overall at
level `1 − α`, valid after the adaptive stop.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from plumbline.core.result import Interval
from plumbline.leaderboard.board import Leaderboard
from plumbline.leaderboard.result import (
    AdaptivePair,
    AdaptiveReplay,
    AdaptiveRun,
    AdjacentPair,
    PairReplay,
    PairStatus,
    StopReason,
)
from plumbline.leaderboard.scores import LEVEL, ModelScores
from plumbline.leaderboard.suite import Suite
from plumbline.stats._validation import z_critical
from plumbline.stats.confidence_sequences import (
    METHOD,
    ConfidenceSequence,
    without_replacement_sequence,
)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

ALPHA = 0.05
GUARANTEE = (
    "with probability at least {level:.0%}, no decided pair is in the wrong order and no "
    "certified tie is more than {margin:g} apart, at whatever round the run stopped "
    "(anytime-valid confidence sequences, Bonferroni over {pairs}; no model of the "
    "models' behaviour assumed)"
)


@dataclass(frozen=True)
class AdaptiveSettings:
    """What an adaptive run is asked to do: its error rate, tie margin, rounds and budget."""

    alpha: float = ALPHA
    tie_margin: float = 0.0
    round_size: int = 20
    budget_calls: int | None = None

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be strictly between 0 and 1, got {self.alpha!r}")
        if not (math.isfinite(self.tie_margin) and 0 <= self.tie_margin < 1):
            raise ValueError(f"tie margin must be in [0, 1), got {self.tie_margin!r}")
        if self.round_size < 1:
            raise ValueError(f"round size must be at least 1, got {self.round_size!r}")
        if self.budget_calls is not None and self.budget_calls < 1:
            raise ValueError(f"budget must be at least 1 call, got {self.budget_calls!r}")


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

    @property
    def share(self) -> float:
        return self.calls_used / self.calls_full if self.calls_full else 0.0

    @property
    def guarantee(self) -> str:
        return GUARANTEE.format(
            level=1 - self.settings.alpha,
            margin=self.settings.tie_margin,
            pairs="1 pair" if len(self.pairs) == 1 else f"{len(self.pairs)} pairs",
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


def weighted_values(
    scores: FloatArray, categories: IntArray, weights: Sequence[float]
) -> tuple[FloatArray, float]:
    """Each question's value `w_c · (N / N_c) · s` (models × questions), and their largest
    possible value `max_c w_c N / N_c` (scores lie in [0, 1])."""
    counts = np.bincount(categories, minlength=len(weights)).astype(float)
    total = float(categories.size)
    present = counts > 0
    scale = np.zeros(len(weights))
    used = np.asarray(weights, dtype=float)
    used = np.where(present, used, 0.0)
    used = used / used.sum()
    scale[present] = used[present] * total / counts[present]
    return scores * scale[categories], float(scale.max())


def draw_order(questions: int, seed: int) -> IntArray:
    """The seeded, uniformly random order the questions are asked in."""
    return np.random.default_rng(seed).permutation(questions).astype(np.int64)


def _status(low: float, high: float, margin: float) -> PairStatus:
    if low > margin:
        return "ahead"
    if high < -margin:
        return "behind"
    if margin > 0 and low >= -margin and high <= margin:
        return "tie"
    return "open"


PairPath = Callable[[int, int, int], ConfidenceSequence]


class AdaptiveProcedure:
    """The loop of an adaptive run, driven by whoever has the scores.

    `next_round()` says how many more questions of the order to ask and which models answer
    them; `observe(t)` takes the number of questions every active model has now answered and
    updates the open pairs from `path(a, b, t)`, the pair's confidence sequence over the first
    `t` questions. A replay over complete logs and a live run share this one loop.
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
        self.answered = [0] * len(self.models)
        self.stop_reason: StopReason | None = None
        self.calls = 0

    @property
    def pair_alpha(self) -> float:
        return self.settings.alpha / max(len(self.pairs), 1)

    def active(self) -> list[int]:
        open_pairs = [pair for pair in self.pairs if self._open(pair)]
        return sorted({index for pair in open_pairs for index in pair})

    def _open(self, pair: tuple[int, int]) -> bool:
        found = self.status.get(pair)
        return found is None or found.status == "open"

    def next_round(self) -> tuple[int, list[int]]:
        """(questions to add, the models that answer them); (0, []) once the run is over."""
        active = self.active()
        done = max(self.answered, default=0)
        if not active:
            self.stop_reason = "decided"
            return 0, []
        size = min(self.settings.round_size, self.population - done)
        if size == 0:
            self.stop_reason = "questions"
            return 0, []
        if self.settings.budget_calls is not None:
            size = min(size, (self.settings.budget_calls - self.calls) // len(active))
            if size <= 0:
                self.stop_reason = "budget"
                return 0, []
        return size, active

    def observe(self, answered: int, active: Sequence[int]) -> None:
        """Every model of `active` has now answered the first `answered` questions."""
        for index in active:
            self.calls += answered - self.answered[index]
            self.answered[index] = answered
        for pair in self.pairs:
            if self._open(pair) and pair[0] in active and pair[1] in active:
                self.status[pair] = self._outcome(pair, answered)

    def _outcome(self, pair: tuple[int, int], answered: int) -> PairOutcome:
        sequence = self.path(pair[0], pair[1], answered)
        low, high = float(sequence.lows[answered - 1]), float(sequence.highs[answered - 1])
        return PairOutcome(
            first=self.models[pair[0]],
            second=self.models[pair[1]],
            status=_status(low, high, self.settings.tie_margin),
            questions=answered,
            difference=float(sequence.means[answered - 1]),
            low=low,
            high=high,
        )

    def outcomes(self) -> tuple[PairOutcome, ...]:
        return tuple(self.status[pair] for pair in self.pairs if pair in self.status)


@dataclass
class ScoreTable:
    """Every model's value of every question, in the order asked (models × questions)."""

    models: list[str]
    values: FloatArray
    span: float
    level: float = field(default=1 - ALPHA)

    def pair_path(self, alpha: float) -> PairPath:
        """Each pair's confidence sequence over the whole order, computed once."""
        cache: dict[tuple[int, int], ConfidenceSequence] = {}
        population = self.values.shape[1]

        def path(a: int, b: int, answered: int) -> ConfidenceSequence:
            if (a, b) not in cache:
                difference = self.values[a] - self.values[b]
                cache[(a, b)] = without_replacement_sequence(
                    difference, population, low=-self.span, high=self.span, level=1 - alpha
                )
            return cache[(a, b)]

        return path

    def model_outcome(self, index: int, answered: int, alpha: float) -> ModelOutcome:
        values = self.values[index, :answered]
        sequence = without_replacement_sequence(
            values, self.values.shape[1], low=0.0, high=self.span, level=1 - alpha
        )
        return ModelOutcome(
            model=self.models[index],
            questions=answered,
            estimate=sequence.mean,
            low=sequence.low,
            high=sequence.high,
        )


@dataclass(frozen=True)
class QuestionScores:
    """Every model's score of every question all of them answered (models × questions), with
    each question's category (an index into `categories`) and the categories' weights."""

    models: list[str]
    scores: FloatArray
    category_of: IntArray
    categories: list[str]
    weights: list[float]
    labels: list[str]

    @property
    def questions(self) -> int:
        return int(self.scores.shape[1])

    def table(self, order: IntArray) -> ScoreTable:
        """The weighted values in the order `order` asks the questions."""
        values, span = weighted_values(self.scores, self.category_of, self.weights)
        return ScoreTable(self.models, values[:, order], span)

    def full_differences(self) -> FloatArray:
        """Every pair's overall difference on all the questions (pairs in combination order)."""
        values, _ = weighted_values(self.scores, self.category_of, self.weights)
        means = values.mean(axis=1)
        pairs = itertools.combinations(range(len(self.models)), 2)
        return np.array([means[a] - means[b] for a, b in pairs], dtype=float)


def question_scores(
    ranked: Sequence[ModelScores], suite: Suite, names: Mapping[str, list[str]] | None = None
) -> QuestionScores:
    """The per-question scores (each the mean over its epochs) of the questions every model
    answered, category by category, from a leaderboard's scored models."""
    rows: list[list[FloatArray]] = [[] for _ in ranked]
    category_of: list[int] = []
    labels: list[str] = []
    keys = [category.key for category in suite.categories]
    for position, key in enumerate(keys):
        found = [entry.categories.get(key) for entry in ranked]
        if any(score is None or score.missing for score in found):
            continue
        per_model = [
            dict(zip(score.questions.tolist(), score.question_means.tolist(), strict=True))
            for score in found
            if score is not None
        ]
        shared = sorted(set.intersection(*(set(means) for means in per_model)))
        for row, means in zip(rows, per_model, strict=True):
            row.append(np.array([means[code] for code in shared], dtype=float))
        category_of.extend([position] * len(shared))
        known = (names or {}).get(key, [])
        labels.extend(known[code] if code < len(known) else str(code) for code in shared)
    scores = np.array([np.concatenate(row) if row else np.zeros(0) for row in rows], dtype=float)
    return QuestionScores(
        models=[entry.model for entry in ranked],
        scores=np.clip(np.nan_to_num(scores), 0.0, 1.0),
        category_of=np.array(category_of, dtype=np.int64),
        categories=keys,
        weights=[category.weight for category in suite.categories],
        labels=labels,
    )


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
        table.models, population, settings, table.pair_path(settings.alpha / _pairs(table))
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
        table.model_outcome(index, answered, procedure.settings.alpha)
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
    )


def _disagrees(status: PairStatus, full: float, margin: float) -> bool:
    if status == "ahead":
        return full <= 0
    if status == "behind":
        return full >= 0
    if status == "tie":
        return abs(full) > margin
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
    counts = np.zeros((3, full.size))  # decided, tied, disagree
    any_wrong = 0
    outcome: AdaptiveOutcome | None = None
    for index in range(replays):
        outcome = replay(scores.table(draw_order(scores.questions, seed + index)), settings)
        shares.append(outcome.share)
        wrong = False
        for position, pair in enumerate(outcome.pairs):
            counts[0, position] += pair.status in ("ahead", "behind")
            counts[1, position] += pair.status == "tie"
            if _disagrees(pair.status, float(full[position]), settings.tie_margin):
                counts[2, position] += 1
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
            disagree=float(counts[2, position] / replays),
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


@dataclass(frozen=True)
class AskedQuestions:
    """The questions of an adaptive run in the order asked: each one's category (an index into
    `categories`) and its label as the leaderboard names it (`question_set/sample_id`)."""

    labels: list[str]
    category_of: IntArray
    categories: list[str]
    weights: list[float]

    @property
    def count(self) -> int:
        return len(self.labels)

    def scores(self, board: Leaderboard) -> FloatArray:
        """Every ranked model's score of each question (models in `board.models` order × the
        questions in order; 0 where a model has no score for it, as an errored sample)."""
        found = np.zeros((len(board.models), self.count))
        for row, entry in enumerate(board.models):
            by_label: dict[tuple[int, str], float] = {}
            for position, key in enumerate(self.categories):
                score = entry.categories.get(key)
                names = board.question_labels.get(key, [])
                if score is None or score.missing:
                    continue
                for code, mean in zip(
                    score.questions.tolist(), score.question_means.tolist(), strict=True
                ):
                    if code < len(names) and not math.isnan(mean):
                        by_label[(position, names[code])] = mean
            for index, (label, category) in enumerate(
                zip(self.labels, self.category_of.tolist(), strict=True)
            ):
                found[row, index] = by_label.get((category, label), 0.0)
        return np.clip(found, 0.0, 1.0)


def adaptive_board(
    board: Leaderboard,
    asked: AskedQuestions,
    scores: FloatArray,
    outcome: AdaptiveOutcome,
    order_seed: int,
) -> Leaderboard:
    """The leaderboard of an adaptive run: each model's category and overall intervals are its
    confidence sequences where the run stopped (valid after the adaptive stop; fixed-sample
    intervals are not), the tie groups come from the decided pairs, and the document carries
    the `adaptive` block."""
    answered = {model.model: model for model in outcome.models}
    ranked = [
        _adapted_scores(entry, asked, scores[row], answered[entry.model])
        for row, entry in enumerate(board.models)
    ]
    groups = outcome.groups([entry.model for entry in ranked])
    group_of = {
        model: number for number, members in enumerate(groups, start=1) for model in members
    }
    ranked = [replace(entry, tie_group=group_of[entry.model]) for entry in ranked]
    pairs = {(pair.first, pair.second): pair for pair in outcome.pairs}
    comparisons = [_adapted_pair(comparison, pairs) for comparison in board.comparisons]
    return replace(
        board, models=ranked, comparisons=comparisons, adaptive=outcome.document(order_seed)
    )


def _adapted_scores(
    entry: ModelScores, asked: AskedQuestions, row: FloatArray, outcome: ModelOutcome
) -> ModelScores:
    categories = dict(entry.categories)
    asked_here = asked.category_of[: outcome.questions]
    for position, key in enumerate(asked.categories):
        score = categories.get(key)
        population = int(np.sum(asked.category_of == position))
        values = row[: outcome.questions][asked_here == position]
        if score is None or score.missing or values.size == 0:
            continue
        sequence = without_replacement_sequence(values, population, level=LEVEL)
        interval = Interval(low=sequence.low, high=sequence.high, level=LEVEL, method=METHOD)
        half = (sequence.high - sequence.low) / 2
        categories[key] = replace(score, interval=interval, standard_error=half / z_critical(LEVEL))
    overall = Interval(
        low=max(outcome.low, 0.0), high=min(outcome.high, 1.0), level=LEVEL, method=METHOD
    )
    half = overall.half_width or 0.0
    return replace(
        entry,
        categories=categories,
        overall_interval=overall,
        overall_standard_error=half / z_critical(LEVEL),
    )


def _adapted_pair(
    comparison: AdjacentPair, pairs: Mapping[tuple[str, str], PairOutcome]
) -> AdjacentPair:
    pair = pairs.get((comparison.higher, comparison.lower))
    sign = 1.0
    if pair is None:
        pair = pairs[(comparison.lower, comparison.higher)]
        sign = -1.0
    low, high = sorted((sign * pair.low, sign * pair.high))
    decided = pair.status in ("ahead", "behind")
    return comparison.model_copy(
        update={
            "difference": float(np.clip(sign * pair.difference, -1.0, 1.0)),
            "interval": Interval(
                low=max(low, -1.0),
                high=min(high, 1.0),
                level=1 - pair_level_alpha(pairs),
                method=METHOD,
            ),
            "pvalue": None,
            "pvalue_holm": None,
            "tied": not decided,
        }
    )


def pair_level_alpha(pairs: Mapping[tuple[str, str], PairOutcome]) -> float:
    """The α each pair's sequence is run at (Bonferroni over the pairs)."""
    return ALPHA / max(len(pairs), 1)
