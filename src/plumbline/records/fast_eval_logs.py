"""The fast reader of local `.eval` logs: the header and the sample summaries, as Inspect reads
them, or `Declined` (then Inspect reads the log)."""

from __future__ import annotations

import json
import math
import zipfile
from collections.abc import Collection
from datetime import UTC, datetime
from typing import Any

import msgspec

from plumbline.core.prices import TokenCounts
from plumbline.core.timestamps import as_utc
from plumbline.records.eval_zip import Declined, read_members
from plumbline.records.log_scores import (
    NO_ANSWER_REASONS,
    LogHeader,
    SampleScore,
    ScoreColumns,
    UnreadableScore,
    sample_score,
    score_value_to_float,
    usage_by_model,
)

_STATUSES = frozenset({"started", "success", "cancelled", "error"})


def _decline(why: str) -> Declined:
    return Declined(why)


def _member(location: str, name: str) -> bytes:
    try:
        found = read_members(location, (name,))
    except OSError as error:
        raise _decline(f"cannot open: {error}") from error
    if name not in found:
        raise _decline(f"no {name}")
    return found[name]


def _field(data: Any, key: str, kinds: tuple[type, ...], default: Any = ...) -> Any:
    """`data[key]` when its exact type is one of `kinds` (None included when listed)."""
    if type(data) is not dict:
        raise _decline("not an object")
    if key not in data:
        if default is ...:
            raise _decline(f"no {key}")
        return default
    value = data[key]
    if type(value) not in kinds:
        raise _decline(f"{key}: unexpected type")
    return value


def _fast_created(text: str) -> datetime:
    """`eval.created` as Inspect normalises it (an aware time, to UTC), then as read here."""
    try:
        normal = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
        created = datetime.fromisoformat(normal)
    except ValueError as error:
        raise _decline("created is no ISO time") from error
    return datetime.fromisoformat(as_utc(created).astimezone(UTC).isoformat())


def fast_log_header(location: str) -> LogHeader:
    """The header of a local `.eval` log from its `header.json`. Raises `Declined`."""
    try:  # the standard parser, as Inspect's: a header's metrics may be NaN
        data = json.loads(_member(location, "header.json"))
    except ValueError as problem:
        raise _decline(f"not JSON: {problem}") from problem
    if _field(data, "version", (int,)) != 2:
        raise _decline("log version")
    status = _field(data, "status", (str,), "started")
    if status not in _STATUSES:
        raise _decline("status")
    spec = _field(data, "eval", (dict,))
    config = _field(spec, "config", (dict,))
    dataset = _field(spec, "dataset", (dict,))
    sample_ids = _field(dataset, "sample_ids", (list, type(None)), None)
    if sample_ids is not None and any(type(i) not in (int, str) for i in sample_ids):
        raise _decline("sample_ids")
    results = _field(data, "results", (dict, type(None)), None)
    scorers: tuple[str, ...] = ()
    if results is not None:
        if "scorer" in results:
            raise _decline("results in an older layout")
        scores = _field(results, "scores", (list,), [])
        scorers = tuple(_field(score, "name", (str,)) for score in scores)
    error = _field(data, "error", (dict, type(None)), None)
    eval_id = _field(spec, "eval_id", (str,))
    if not eval_id:
        raise _decline("no eval_id")  # Inspect derives one
    return LogHeader(
        path=location,
        format="eval",
        task=_field(spec, "task", (str,)),
        model=_field(spec, "model", (str,)),
        created=_fast_created(_field(spec, "created", (str,))),
        status=status,
        epochs=int(_field(config, "epochs", (int, type(None)), None) or 1),
        run_id=_field(spec, "run_id", (str,), ""),
        eval_id=eval_id,
        scorers=scorers,
        dataset_samples=(
            len(sample_ids)
            if sample_ids is not None
            else _field(dataset, "samples", (int, type(None)), None)
        ),
        error=None if error is None else _field(error, "message", (str,)),
    )


def _thin_equals(text: Any, words: Collection[str]) -> bool:
    """Whether Inspect's summary thinning (whitespace collapsed, long text shortened) leaves
    `text` one of `words`; declined where thinning could matter."""
    if type(text) is not str:
        return False
    if text in words:
        return True
    if any(word in text for word in words):
        raise _decline("text the summary would thin")
    return False


_Scalar = str | int | float | bool


class _Score(msgspec.Struct):
    """The fields of Inspect's `Score` read here, typed as its `Value` admits them."""

    value: _Scalar | list[_Scalar] | dict[str, _Scalar | None]
    answer: str | None = None
    explanation: str | None = None
    reason: str | None = None
    metadata: dict[str, Any] | None = None
    history: list[Any] = msgspec.field(default_factory=list)


class _Summary(msgspec.Struct):
    """The fields of Inspect's `EvalSampleSummary` read here (input and target: required)."""

    id: int | str
    epoch: int
    input: msgspec.Raw
    target: msgspec.Raw
    error: str | None = None
    scores: dict[str, _Score] | None = None
    model_usage: dict[str, dict[str, Any]] | None = None


_SUMMARIES = msgspec.json.Decoder(list[_Summary])


class _SampleUsage(msgspec.Struct):
    """The one field of a full sample read when its summary lacks it (logs of Inspect releases
    whose summaries carry no usage)."""

    model_usage: dict[str, dict[str, Any]] | None = None


_SAMPLE_USAGE = msgspec.json.Decoder(_SampleUsage)


def _summary_usage(location: str, summaries: list[_Summary]) -> list[dict[str, TokenCounts]]:
    """Each summary's usage; when no summary has any, each sample's own `model_usage` (read
    from its `samples/<id>_epoch_<n>.json` member, every other field skipped)."""
    if any(summary.model_usage is not None for summary in summaries):
        return [usage_by_model(summary.model_usage) for summary in summaries]
    usage: list[dict[str, TokenCounts]] = []
    try:
        with zipfile.ZipFile(location) as archive:
            names = set(archive.namelist())
            for summary in summaries:
                name = f"samples/{summary.id}_epoch_{summary.epoch}.json"
                raw = _SAMPLE_USAGE.decode(archive.read(name)) if name in names else None
                usage.append(usage_by_model(raw.model_usage if raw else None))
    except (OSError, zipfile.BadZipFile, msgspec.MsgspecError) as error:
        raise _decline(f"sample usage: {error}") from error
    return usage


def _decode_summaries(location: str) -> list[_Summary]:
    try:
        summaries: list[_Summary] = _SUMMARIES.decode(_member(location, "summaries.json"))
    except msgspec.MsgspecError as error:  # also NaN, which msgspec does not parse
        raise _decline(f"summaries: {error}") from error
    return summaries


def _no_answer(score: _Score) -> bool:
    """`no_answer_extracted` of the score Inspect's summary (lifted, thinned) would hold."""
    if score.history:
        raise _decline("score history")
    reason: Any = score.reason
    metadata = score.metadata
    if reason is None and metadata is not None and metadata.get("unscored_reason") is not None:
        reason = metadata["unscored_reason"]  # Inspect lifts the legacy key into `reason`
        if type(reason) is not str:
            raise _decline("unscored_reason")
    if reason is not None and _thin_equals(reason, NO_ANSWER_REASONS):
        return True
    return metadata is not None and _thin_equals(metadata.get("outcome"), ("extraction_failed",))


def fast_samples_and_names(
    location: str, scorers: Collection[str] | None
) -> tuple[list[SampleScore], frozenset[str]]:
    """`read_samples_and_names` of a local `.eval` log from its `summaries.json`, de-duplicated
    as Inspect does (the last row of each (id, epoch) wins). Raises `Declined`, also for
    non-finite numbers (JSON's NaN, which msgspec does not parse)."""
    summaries = _decode_summaries(location)
    wanted = None if scorers is None else set(scorers)
    by_key: dict[tuple[str, int], SampleScore] = {}
    names: set[str] = set()
    usages = _summary_usage(location, summaries)
    for summary, usage in zip(summaries, usages, strict=True):
        raw = summary.scores or {}
        scores = [(name, score.value, _no_answer(score)) for name, score in raw.items()]
        names.update(raw)
        by_key[(str(summary.id), summary.epoch)] = sample_score(
            summary.id,
            summary.epoch,
            summary.error,
            scores,
            wanted,
            usage,
        )
    return list(by_key.values()), frozenset(names)


#: Score words already converted (a log repeats a few thousands of times); bounded, as
#: numeric strings could fill it with values seen once.
_CONVERTED: dict[str, float | None] = {}


_CONVERTED_MAX = 4096


def _score_float(value: Any) -> float | None:
    """`score_value_to_float(value)`, with its common cases first."""
    kind = type(value)
    if kind is float or kind is bool or (kind is int and -(2**53) <= value <= 2**53):
        number = float(value)
        return number if math.isfinite(number) else None
    if kind is not str:
        return score_value_to_float(value)
    try:
        return _CONVERTED[value]
    except KeyError:
        converted = score_value_to_float(value)  # raises UnreadableScore: nothing remembered
        if len(_CONVERTED) < _CONVERTED_MAX:
            _CONVERTED[value] = converted
        return converted


def fast_score_columns(
    location: str, scorers: Collection[str] | None
) -> tuple[ScoreColumns, frozenset[str]]:
    """`read_score_columns` of a local `.eval` log from its `summaries.json`. Raises
    `Declined` (also when an (id, epoch) repeats: `fast_samples_and_names` de-duplicates)."""
    summaries = _decode_summaries(location)
    count = len(summaries)
    ids = [summary.id for summary in summaries]
    epochs = [summary.epoch for summary in summaries]
    if len(set(zip(map(str, ids), epochs, strict=True))) != count:
        raise _decline("repeated (id, epoch)")
    wanted = None if scorers is None else set(scorers)
    values: dict[str, list[float]] = {}
    errors: dict[int, str] = {}
    unreadable: dict[str, dict[int, str]] = {}
    no_answer: dict[str, list[int]] = {}
    names: set[str] = set()
    for row, summary in enumerate(summaries):
        if summary.error:
            errors[row] = summary.error
        for name, score in (summary.scores or {}).items():
            plain = score.reason is None and score.metadata is None and not score.history
            found_none = not plain and _no_answer(score)
            names.add(name)
            if wanted is not None and name not in wanted:
                continue
            column = values.get(name) or values.setdefault(name, [math.nan] * count)
            try:
                value = _score_float(score.value)
            except UnreadableScore as problem:
                unreadable.setdefault(name, {})[row] = str(problem)
            else:
                if value is not None:
                    column[row] = value
            if found_none:
                no_answer.setdefault(name, []).append(row)
    usage = _summary_usage(location, summaries)
    columns = ScoreColumns(ids, epochs, values, errors, unreadable, no_answer, usage)
    return columns, frozenset(names)
