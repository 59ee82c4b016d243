"""What is read of an Inspect log: its header (`LogHeader`), its sample scores (`SampleScore`,
`ScoreColumns`), and score values converted to floats as Inspect's metrics convert them."""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from plumbline.core.prices import TokenCounts


class LogReadError(Exception):
    """A log that could not be read (unreadable, truncated, not an Inspect log)."""

    def __init__(self, path: str | Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = str(path)
        self.problem = problem


@dataclass(frozen=True)
class LogHeader:
    """What a log says about itself, without its samples."""

    path: str
    format: str
    task: str
    model: str
    created: datetime
    status: str
    epochs: int
    run_id: str
    eval_id: str
    scorers: tuple[str, ...]
    dataset_samples: int | None
    error: str | None = None


@dataclass(frozen=True)
class SampleScore:
    """One sample × epoch: the converted value of each requested score, and any error."""

    id: int | str
    epoch: int
    values: Mapping[str, float | None]
    error: str | None = None
    unreadable: Mapping[str, str] = field(default_factory=dict)
    """Scores whose value is no score (scorer -> why); their value is None."""
    no_answer: frozenset[str] = frozenset()
    """Scorers (among those kept) that found no answer to grade (see `no_answer_extracted`)."""
    usage: Mapping[str, TokenCounts] = field(default_factory=dict)
    """The sample's `model_usage`: model -> tokens as the provider reported them."""

    def value(self, scorer: str) -> float | None:
        """The value of `scorer`, or None when the sample errored or lacks that score."""
        if self.error is not None:
            return None
        return self.values.get(scorer)


def sample_id_key(sample_id: int | str) -> str:
    """A sample id with its type (`int:1`, `str:1`): 1 and "1" are different samples."""
    return f"{type(sample_id).__name__}:{sample_id}"


@dataclass(frozen=True)
class ScoreColumns:
    """A log's sample scores by column: row i is its i-th sample × epoch.

    The same content as a list of `SampleScore`s (`from_samples`), for readers that reduce a
    log to arrays: building thousands of `SampleScore`s costs more than reading the log.
    """

    ids: list[int | str]
    epochs: list[int]
    values: dict[str, list[float]]
    """Kept scorer -> its value in each row (NaN: no value), whether or not the row errored."""
    errors: dict[int, str]
    """Row -> error, for the rows that errored."""
    unreadable: dict[str, dict[int, str]]
    """Kept scorer -> row -> why its value is no score (see `SampleScore.unreadable`)."""
    no_answer: dict[str, list[int]]
    """Kept scorer -> the rows in which it found no answer (see `SampleScore.no_answer`)."""
    usage: list[dict[str, TokenCounts]] = field(default_factory=list)
    """Each row's `model_usage` (model -> its tokens, as the provider reported them); empty
    when the log has none (rows missing from the list have no usage)."""

    def __len__(self) -> int:
        return len(self.ids)

    @cached_property
    def id_keys(self) -> list[str]:
        """Each row's sample id with its type (1 and "1" are different samples)."""
        return [sample_id_key(sample_id) for sample_id in self.ids]

    def values_of(self, scorer: str) -> npt.NDArray[np.float64]:
        """`SampleScore.value(scorer)` of every row, NaN for None (errored rows included)."""
        column = self.values.get(scorer)
        values = np.full(len(self), np.nan) if column is None else np.array(column, np.float64)
        if self.errors:
            values[list(self.errors)] = np.nan
        return values

    def usage_of(self, row: int) -> dict[str, TokenCounts]:
        """Row `row`'s tokens by model (empty: no usage recorded)."""
        return self.usage[row] if row < len(self.usage) else {}

    @classmethod
    def from_samples(cls, samples: list[SampleScore]) -> ScoreColumns:
        """The columns of a list of `SampleScore`s."""
        values: dict[str, list[float]] = {}
        unreadable: dict[str, dict[int, str]] = {}
        no_answer: dict[str, list[int]] = {}
        for row, sample in enumerate(samples):
            for name, value in sample.values.items():
                column = values.setdefault(name, [math.nan] * len(samples))
                column[row] = math.nan if value is None else value
            for name, why in sample.unreadable.items():
                unreadable.setdefault(name, {})[row] = why
            for name in sorted(sample.no_answer):
                no_answer.setdefault(name, []).append(row)
        return cls(
            ids=[sample.id for sample in samples],
            epochs=[sample.epoch for sample in samples],
            values=values,
            errors={row: s.error for row, s in enumerate(samples) if s.error is not None},
            unreadable=unreadable,
            no_answer=no_answer,
            usage=[dict(sample.usage) for sample in samples],
        )


def token_counts(usage: Any) -> TokenCounts:
    """An Inspect `ModelUsage` (object or its JSON) as `TokenCounts`."""

    def get(name: str) -> int | None:
        value = usage.get(name) if isinstance(usage, Mapping) else getattr(usage, name, None)
        return (
            int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        )

    return TokenCounts(
        input=get("input_tokens"),
        output=get("output_tokens"),
        cache_read=get("input_tokens_cache_read"),
        cache_write=get("input_tokens_cache_write"),
        reasoning=get("reasoning_tokens"),
    )


def usage_by_model(model_usage: Mapping[str, Any] | None) -> dict[str, TokenCounts]:
    """A sample's `model_usage` as model -> `TokenCounts`."""
    return {model: token_counts(usage) for model, usage in (model_usage or {}).items()}


@dataclass(frozen=True)
class LogScores:
    """A log's header and its per-sample scores."""

    header: LogHeader
    samples: list[SampleScore] = field(default_factory=list)
    score_names: frozenset[str] = frozenset()
    """Every score name found on any sample (whether or not it was kept)."""


class UnreadableScore(ValueError):
    """A score value that is no score: Inspect would read it as 0 with only a log warning."""

    def __init__(self, value: Any) -> None:
        shown = repr(value)
        super().__init__(
            f"score value {shown[:60] + '...' if len(shown) > 60 else shown} is not a number, "
            "a boolean or one of Inspect's C/I/P/N/yes/no/true/false"
        )
        self.value = value


_SCORE_WORDS = {"c": 1.0, "i": 0.0, "p": 0.5, "n": 0.0, "yes": 1.0, "true": 1.0, "no": 0.0}
_SCORE_WORDS["false"] = 0.0


def score_value_to_float(value: Any) -> float | None:
    """Convert a score value as Inspect does; None when there is no value at all.

    Scalars are read as `inspect_ai.scorer.value_to_float()` reads them (numbers, booleans,
    numeric strings, C/I/P/N, yes/no/true/false); lists and dicts average their elements (the
    way Inspect's reducers apply the conversion element-wise). Anything else raises
    `UnreadableScore`, where Inspect would silently read 0.
    """
    if value is None:
        return None
    if isinstance(value, Mapping):
        value = list(value.values())
    if isinstance(value, list | tuple):
        converted = [score_value_to_float(element) for element in value]
        numbers = [number for number in converted if number is not None]
        return math.fsum(numbers) / len(numbers) if numbers else None
    if isinstance(value, bool | int | float):
        try:
            number = float(value)
        except OverflowError:  # an integer past float's range is no score either
            raise UnreadableScore(value) from None
    elif isinstance(value, str):
        word = value.strip().lower()
        if word in _SCORE_WORDS:
            number = _SCORE_WORDS[word]
        else:
            try:
                number = float(word)
            except ValueError:
                raise UnreadableScore(value) from None
    else:
        raise UnreadableScore(value)
    return number if math.isfinite(number) else None


NO_ANSWER_REASONS = frozenset({"invalid_response_format", "no_response"})
"""Inspect's `choice()` reasons for a completion in which it found no selected choice."""


_UNSUPPORTED = re.compile(
    r"UnsupportedInputError|text-only model|does not support (multimodal|image|vision)"
    r"|(image|vision|multimodal) (input|content)s? (is |are )?not supported",
    re.IGNORECASE,
)


def no_answer_extracted(score: Any) -> bool:
    """Whether the scorer found no answer in the completion (not the same as a wrong answer).

    Inspect's `choice()` marks it with reason `invalid_response_format` (no `ANSWER: X` line)
    or `no_response` (empty completion); `cdk_verify` with the outcome `extraction_failed`
    (no Python code block). The sample still scores 0 (the SA Bench contract); this only
    tells the reader why.
    """
    if getattr(score, "reason", None) in NO_ANSWER_REASONS:
        return True
    metadata = getattr(score, "metadata", None) or {}
    return isinstance(metadata, Mapping) and metadata.get("outcome") == "extraction_failed"


def is_unsupported_input(error: str | None) -> bool:
    """Whether a sample's error says the model cannot take its input (an image, say)."""
    return bool(error) and _UNSUPPORTED.search(error or "") is not None


def sample_score(
    sample_id: int | str,
    epoch: int,
    error: str | None,
    scores: Iterable[tuple[str, Any, bool]],
    wanted: Collection[str] | None,
    usage: Mapping[str, TokenCounts] | None = None,
) -> SampleScore:
    """One summary's `SampleScore` from its (score name, value, no answer found) triples."""
    values: dict[str, float | None] = {}
    unreadable: dict[str, str] = {}
    no_answer: set[str] = set()
    for name, value, found_none in scores:
        if wanted is None or name in wanted:
            try:
                values[name] = score_value_to_float(value)
            except UnreadableScore as problem:
                values[name] = None
                unreadable[name] = str(problem)
            if found_none:
                no_answer.add(name)
    return SampleScore(
        id=sample_id,
        epoch=int(epoch),
        values=values,
        error=error or None,
        unreadable=unreadable,
        no_answer=frozenset(no_answer),
        usage=dict(usage or {}),
    )


def describe_error(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    first = text[0] if text else ""
    name = type(error).__name__
    return f"{name}: {first}" if first else name
