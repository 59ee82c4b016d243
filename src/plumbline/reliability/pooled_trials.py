"""Both runs' trials of each shared prompt, pooled, as the regression check's permutation test
reads them (`reliability.no_change.PromptTrials`): who ran each trial, the responses'
similarities, the performance heuristic, latency, failure and (when compared) cost."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from plumbline.records.trial_record import TrialRecord
from plumbline.reliability.cost import Pricing, priced_cost
from plumbline.reliability.metrics import performance_scores, valid_responses
from plumbline.reliability.no_change import PromptTrials
from plumbline.stats.arrays import FloatArray

if TYPE_CHECKING:
    from plumbline.reliability.analysis import Embed


def _unit(rows: FloatArray) -> FloatArray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.asarray(rows / np.where(norms > 0, norms, 1.0), dtype=np.float64)


def _performance_of(records: Sequence[TrialRecord], embed: Embed) -> FloatArray:
    """The performance heuristic of each record's response, as `analyze` scores it; NaN for a
    record without one."""
    scored = [i for i, r in enumerate(records) if r.ok and r.response is not None]
    values = np.full(len(records), math.nan)
    if scored:
        responses = [records[i].response or "" for i in scored]
        vectors = np.asarray(
            embed([records[i].prompt for i in scored] + responses), dtype=np.float64
        )
        values[scored] = performance_scores(
            vectors[: len(scored)], vectors[len(scored) :], responses
        ).score
    return values


def prompt_trials(
    baseline: Sequence[TrialRecord],
    current: Sequence[TrialRecord],
    prompts: Sequence[str],
    embed: Embed,
    pricing: tuple[Pricing, Pricing] | None = None,
) -> list[PromptTrials]:
    """Both runs' trials of each shared prompt, pooled, as the permutation test reads them;
    with `pricing` (the baseline's, the current's), each trial's cost too."""
    wanted = set(prompts)
    records = [r for r in baseline if r.prompt_id in wanted]
    is_current = [False] * len(records)
    records += [r for r in current if r.prompt_id in wanted]
    is_current += [True] * (len(records) - len(is_current))
    performance = _performance_of(records, embed)
    by_prompt: dict[str, list[int]] = defaultdict(list)
    for index, record in enumerate(records):
        by_prompt[record.prompt_id].append(index)
    found = []
    for prompt in sorted(by_prompt):
        group = [records[i] for i in by_prompt[prompt]]
        texts = [r.response if r.ok else None for r in group]
        answered = np.array([bool(valid_responses([t])) for t in texts], dtype=np.bool_)
        rows = np.zeros((len(group), 1))
        if answered.any():
            vectors = _unit(
                np.asarray(
                    embed([t or "" for t, a in zip(texts, answered, strict=True) if a]),
                    dtype=np.float64,
                )
            )
            rows = np.zeros((len(group), vectors.shape[1]))
            rows[answered] = vectors
        found.append(
            PromptTrials(
                current=np.array([is_current[i] for i in by_prompt[prompt]], dtype=np.bool_),
                similarity=np.asarray(rows @ rows.T, dtype=np.float64),
                answered=answered,
                performance=performance[by_prompt[prompt]],
                latency=np.array(
                    [
                        float(r.latency_seconds)
                        if r.ok and r.latency_seconds is not None
                        else math.nan
                        for r in group
                    ],
                    dtype=np.float64,
                ),
                failed=np.array([r.error_class is not None for r in group], dtype=np.bool_),
                cost=None
                if pricing is None
                else np.array(
                    [priced_cost(records[i], pricing[is_current[i]]) for i in by_prompt[prompt]],
                    dtype=np.float64,
                ),
            )
        )
    return found
