"""The leaderboard of an adaptive run (`leaderboard.adaptive`): each model's intervals are its
confidence sequences where the run stopped, the tie groups come from the decided pairs, and the
document carries the `adaptive` block."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from plumbline.core.result import Interval
from plumbline.leaderboard.adaptive import AdaptiveOutcome, ModelOutcome, PairOutcome
from plumbline.leaderboard.adaptive_scores import ALPHA, AskedQuestions
from plumbline.leaderboard.board import Leaderboard
from plumbline.leaderboard.result import AdjacentPair
from plumbline.leaderboard.scores import LEVEL, ModelScores
from plumbline.stats._validation import z_critical
from plumbline.stats.arrays import FloatArray
from plumbline.stats.confidence_sequences import METHOD, without_replacement_sequence


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
