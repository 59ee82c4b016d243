"""Each sample-epoch's tokens (Inspect's per-sample `model_usage`, as the provider reported them)
and its cost in a price table.

A sample's cost is the sum over the models in its `model_usage` (the model under test, and any
model its solver or scorer called) of `PriceTable.cost`; it is unknown (NaN, with the price
table's note) when any of them has no price, and when the sample recorded no usage at all. Its
tokens by kind are the sums over those models (a kind no model reported counts 0).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from plumbline.core.prices import PriceTable, TokenCounts
from plumbline.records.log_scores import ScoreColumns

TOKEN_KINDS = ("input", "output", "cache_read", "cache_write", "reasoning")
NO_USAGE = "a sample recorded no token usage"


@dataclass(frozen=True)
class SampleUsage:
    """Row-aligned arrays: `tokens[r]` by `TOKEN_KINDS`, `costs[r]` in USD (NaN: unknown),
    `notes[r]` why a cost is unknown (None when known), `reported[r]` whether the row carried
    usage."""

    tokens: npt.NDArray[np.int64]
    costs: npt.NDArray[np.float64]
    notes: npt.NDArray[np.object_]
    reported: npt.NDArray[np.bool_]

    @classmethod
    def empty(cls, rows: int) -> SampleUsage:
        notes = np.full(rows, NO_USAGE, dtype=object)
        return cls(
            np.zeros((rows, len(TOKEN_KINDS)), np.int64),
            np.full(rows, np.nan),
            notes,
            np.zeros(rows, bool),
        )

    @classmethod
    def concatenate(cls, parts: Sequence[SampleUsage]) -> SampleUsage:
        if not parts:
            return cls.empty(0)
        return cls(
            np.concatenate([p.tokens for p in parts]),
            np.concatenate([p.costs for p in parts]),
            np.concatenate([p.notes for p in parts]),
            np.concatenate([p.reported for p in parts]),
        )

    def __getitem__(self, rows: npt.NDArray[np.bool_] | npt.NDArray[np.int64]) -> SampleUsage:
        return SampleUsage(
            self.tokens[rows], self.costs[rows], self.notes[rows], self.reported[rows]
        )

    def __len__(self) -> int:
        return int(self.costs.size)

    def token_totals(self) -> dict[str, int]:
        """Tokens by kind over every row."""
        sums = self.tokens.sum(axis=0) if len(self) else np.zeros(len(TOKEN_KINDS), np.int64)
        return {kind: int(total) for kind, total in zip(TOKEN_KINDS, sums, strict=True)}

    def note_counts(self) -> Counter[str]:
        """Each reason a cost is unknown, with the number of rows it applies to."""
        return Counter(str(note) for note in self.notes if note is not None)


def _row(
    usage: dict[str, TokenCounts], prices: PriceTable | None
) -> tuple[list[int], float, str | None]:
    total = TokenCounts(0, 0, 0, 0, 0)
    for tokens in usage.values():
        total = total + tokens
    counts = [value or 0 for value in total.as_tuple()]
    if not usage:
        return counts, float("nan"), NO_USAGE
    if prices is None:
        return counts, float("nan"), "no price table"
    usd = 0.0
    for model, tokens in sorted(usage.items()):
        cost = prices.cost(model, tokens)
        if cost.usd is None:
            return counts, float("nan"), cost.note
        usd += cost.usd
    return counts, usd, None


def price_rows(samples: ScoreColumns, prices: PriceTable | None) -> SampleUsage:
    """Every row's tokens and cost (module docstring)."""
    rows = len(samples)
    tokens = np.zeros((rows, len(TOKEN_KINDS)), np.int64)
    costs = np.full(rows, np.nan)
    notes = np.full(rows, None, dtype=object)
    reported = np.zeros(rows, bool)
    for row in range(rows):
        usage = samples.usage_of(row)
        counts, usd, note = _row(usage, prices)
        tokens[row] = counts
        costs[row] = usd
        notes[row] = note
        reported[row] = bool(usage)
    return SampleUsage(tokens, costs, notes, reported)
