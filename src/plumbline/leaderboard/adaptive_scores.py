"""The scores an adaptive run decides on: each question's weighted value, the seeded order the
questions are asked in, and each pair's evidence over that order (`leaderboard.adaptive` runs
the procedure on them).

A question's score `s` in category `c` (of `N_c` questions, weight `w_c`, `N` questions in all)
counts as the value `x = w_c · (N / N_c) · s`, so the mean of `x` over the whole suite is the
SA Bench weighted overall `Σ_c w_c · mean_c(s)`, and the mean over any prefix of a uniformly
random order is an unbiased estimate of it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from plumbline.leaderboard.board import Leaderboard
from plumbline.leaderboard.scores import ModelScores
from plumbline.leaderboard.suite import Suite
from plumbline.stats.arrays import FloatArray, IntArray
from plumbline.stats.betting import Direction, without_replacement_pvalues
from plumbline.stats.confidence_sequences import ConfidenceSequence, without_replacement_sequence

ALPHA = 0.05
#: The one-sided nulls tested for each pair (a − b = Δ, tie margin δ): rejecting `above`
#: (Δ ≤ δ) decides a ahead, `below` (Δ ≥ −δ) decides b ahead; rejecting both `tie_high`
#: (Δ ≥ δ) and `tie_low` (Δ ≤ −δ) certifies a tie (tested only when δ > 0).
NULLS = ("above", "below", "tie_high", "tie_low")


@dataclass(frozen=True)
class PairEvidence:
    """One pair's evidence after each question of the order: the anytime-valid p-value of each
    null of `NULLS` tested (rows; the first two when δ = 0) and the pair's confidence sequence
    (the interval shown, and the running mean difference)."""

    pvalues: FloatArray
    sequence: ConfidenceSequence


PairPath = Callable[[int, int, int], PairEvidence]


def pair_evidence(
    difference: FloatArray, population: int, span: float, margin: float, alpha: float
) -> PairEvidence:
    """The tests of `NULLS` (the two tie nulls only when `margin` > 0) on a pair's differences,
    and its confidence sequence at level 1 − `alpha`."""
    tests: list[tuple[float, Direction]] = [(margin, "above"), (-margin, "below")]
    if margin > 0:
        tests += [(margin, "below"), (-margin, "above")]
    pvalues = np.array(
        [
            without_replacement_pvalues(
                difference, population, null, direction, low=-span, high=span
            )
            for null, direction in tests
        ]
    )
    sequence = without_replacement_sequence(
        difference, population, low=-span, high=span, level=1 - alpha
    )
    return PairEvidence(pvalues=pvalues, sequence=sequence)


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


@dataclass
class ScoreTable:
    """Every model's value of every question, in the order asked (models × questions)."""

    models: list[str]
    values: FloatArray
    span: float
    level: float = field(default=1 - ALPHA)

    def pair_path(self, alpha: float, margin: float) -> PairPath:
        """Each pair's evidence over the whole order (computed once; the tests and sequences
        are predictable, so what they say after `t` questions depends on those `t` only)."""
        cache: dict[tuple[int, int], PairEvidence] = {}
        population = self.values.shape[1]

        def path(a: int, b: int, answered: int) -> PairEvidence:
            if (a, b) not in cache:
                difference = self.values[a] - self.values[b]
                cache[(a, b)] = pair_evidence(difference, population, self.span, margin, alpha)
            return cache[(a, b)]

        return path

    def model_sequence(self, index: int, answered: int, alpha: float) -> ConfidenceSequence:
        """The model's confidence sequence for its overall, from its first `answered` values."""
        return without_replacement_sequence(
            self.values[index, :answered],
            self.values.shape[1],
            low=0.0,
            high=self.span,
            level=1 - alpha,
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
