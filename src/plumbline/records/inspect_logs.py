"""Streaming reader of Inspect AI eval logs (`.eval` and `.json`) through inspect_ai's public API.

A log is read in two steps: its header (`read_eval_log(header_only=True)`: task, model, epochs,
status, scorer names) and its sample summaries (`read_eval_log_sample_summaries`: per sample and
epoch, the scores and the error). Full samples (messages, events) are never loaded, so reading a
directory of logs costs one log's summaries at a time, not every sample of every log.

Score values are converted to floats exactly as Inspect's own metrics do
(`inspect_ai.scorer.value_to_float`: "C"/"I"/"P"/"N" → 1/0/0.5/0, booleans, numbers, numeric
strings, "yes"/"no"); a list or dict value is the mean of its converted elements, the way
Inspect's reducers treat them. A sample with an error, or without the requested score, has no
value (`None`): what that means is the caller's policy, never this reader's.

Around it: `log_files` finds the logs, `log_scores` holds what is read (`LogHeader`,
`SampleScore`, `ScoreColumns`) and the conversion of score values, and `fast_eval_logs` reads a
local `.eval` log without Inspect when it can vouch for the result. Which logs and samples a
leaderboard keeps (the newest log wins) is `leaderboard.logs`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from plumbline.core.timestamps import as_utc
from plumbline.records.fast_eval_logs import (
    fast_log_header,
    fast_samples_and_names,
    fast_score_columns,
)
from plumbline.records.log_files import is_remote, local_path
from plumbline.records.log_scores import (
    LogHeader,
    LogReadError,
    LogScores,
    SampleScore,
    ScoreColumns,
    describe_error,
    no_answer_extracted,
    sample_score,
    usage_by_model,
)


def _parse_created(text: str, path: str) -> datetime:
    try:
        created = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        if is_remote(path):
            raise LogReadError(path, f"eval.created is not an ISO 8601 time: {text!r}") from None
        created = datetime.fromtimestamp(local_path(path).stat().st_mtime, tz=UTC)
    # a naive time is UTC, as `_fast_created` (and Inspect) read it (`core.timestamps`)
    return as_utc(created)


def read_log_header(path: str | Path, *, fast: bool = True) -> LogHeader:
    """Read a log's header only. Raises `LogReadError` when the log cannot be read.

    A local `.eval` log is read by `fast_log_header` when it can vouch for the log (the same
    header as Inspect reads); any other log, one it declines, or any log when `fast` is False,
    is read through Inspect.
    """
    location = str(path)
    return _fast_or_inspect(
        location, fast, lambda: fast_log_header(location), lambda: _inspect_log_header(location)
    )


def _inspect_log_header(location: str) -> LogHeader:
    from inspect_ai.log import read_eval_log

    try:
        log = read_eval_log(location, header_only=True)
    except Exception as error:  # inspect raises zip, JSON, pydantic and OS errors alike
        raise LogReadError(location, describe_error(error)) from error
    scorers: tuple[str, ...] = ()
    if log.results is not None:
        scorers = tuple(score.name for score in log.results.scores)
    sample_ids = log.eval.dataset.sample_ids
    return LogHeader(
        path=location,
        format=location.rpartition(".")[2] if "." in location.rpartition("/")[2] else "",
        task=log.eval.task,
        model=log.eval.model,
        created=_parse_created(log.eval.created, location),
        status=log.status,
        epochs=int(log.eval.config.epochs or 1),
        run_id=log.eval.run_id,
        eval_id=log.eval.eval_id,
        scorers=scorers,
        dataset_samples=len(sample_ids) if sample_ids is not None else log.eval.dataset.samples,
        error=log.error.message if log.error is not None else None,
    )


_T = TypeVar("_T")


def _fast_candidate(location: str) -> bool:
    return location.endswith(".eval") and not is_remote(location) and "://" not in location


def _fast_or_inspect(
    location: str, fast: bool, fast_read: Callable[[], _T], inspect_read: Callable[[], _T]
) -> _T:
    """`fast_read()` for a local `.eval` log when `fast`; when it declines the log, or fails in
    any unforeseen way, and for every other log, `inspect_read()` decides (and words any
    error)."""
    if fast and _fast_candidate(location):
        with contextlib.suppress(Exception):
            return fast_read()
    return inspect_read()


def read_score_columns(
    path: str | Path, scorers: Collection[str] | None, *, fast: bool = True
) -> tuple[ScoreColumns, frozenset[str]]:
    """`read_samples_and_names` by column (`ScoreColumns`): the scores of `scorers` (all when
    None) and every score name in the log. Raises `LogReadError`."""
    location = str(path)

    def through_samples() -> tuple[ScoreColumns, frozenset[str]]:
        samples, names = read_samples_and_names(location, scorers, fast=fast)
        return ScoreColumns.from_samples(samples), names

    return _fast_or_inspect(
        location, fast, lambda: fast_score_columns(location, scorers), through_samples
    )


def read_sample_scores(
    path: str | Path, scorers: Collection[str] | None = None
) -> list[SampleScore]:
    """Read every sample × epoch's scores from a log's sample summaries.

    `scorers` limits which score names are kept (all when None). Raises `LogReadError`.
    """
    return read_samples_and_names(path, scorers)[0]


def read_samples_and_names(
    path: str | Path, scorers: Collection[str] | None, *, fast: bool = True
) -> tuple[list[SampleScore], frozenset[str]]:
    """Sample scores (kept for `scorers`, all when None) and every score name in the log.

    A local `.eval` log is read by `fast_samples_and_names` when it can vouch for the log;
    any other log, one it declines, or any log when `fast` is False, is read through
    Inspect's sample summaries.
    """
    location = str(path)
    return _fast_or_inspect(
        location,
        fast,
        lambda: fast_samples_and_names(location, scorers),
        lambda: _inspect_samples_and_names(location, scorers),
    )


def _inspect_samples_and_names(
    location: str, scorers: Collection[str] | None
) -> tuple[list[SampleScore], frozenset[str]]:
    from inspect_ai.log import read_eval_log_sample_summaries

    try:
        summaries = read_eval_log_sample_summaries(location)
    except Exception as error:
        raise LogReadError(location, describe_error(error)) from error
    wanted = None if scorers is None else set(scorers)
    samples: list[SampleScore] = []
    names: set[str] = set()
    for summary in summaries:
        scores = [
            (name, score.value, no_answer_extracted(score))
            for name, score in (summary.scores or {}).items()
        ]
        names.update(name for name, _, _ in scores)
        usage = usage_by_model(getattr(summary, "model_usage", None))
        samples.append(
            sample_score(summary.id, summary.epoch, summary.error, scores, wanted, usage)
        )
    return samples, frozenset(names)


def read_log_scores(path: str | Path, scorers: Collection[str] | None = None) -> LogScores:
    """Read a log's header and sample scores. Raises `LogReadError`."""
    header = read_log_header(path)
    samples, names = read_samples_and_names(path, scorers)
    return LogScores(header, samples, names)


def iter_log_scores(
    paths: Iterable[str | Path], scorers: Collection[str] | None = None
) -> Iterator[LogScores | LogReadError]:
    """Read logs one at a time; an unreadable log is yielded as its `LogReadError`."""
    for path in paths:
        try:
            yield read_log_scores(path, scorers)
        except LogReadError as error:
            yield error
