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
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import zipfile
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlparse
from urllib.request import url2pathname

import msgspec
import numpy as np
import numpy.typing as npt

from plumbline.core.prices import TokenCounts
from plumbline.core.timestamps import as_utc
from plumbline.records.eval_zip import Declined, read_members

# Inspect's `.json` logs are named `<ISO timestamp>_<task>_<id>.json`; other `.json` files in a
# log directory (eval-set manifests, listings, our own outputs) must not be mistaken for logs.
_LOG_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}.*\.json$")
_JSON_LOG_START = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d')

LOG_SUFFIXES = (".eval", ".json")


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
        return [f"{type(sample_id).__name__}:{sample_id}" for sample_id in self.ids]

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


def _looks_like_json_log(path: Path) -> bool:
    if _LOG_NAME.match(path.name):
        return True
    try:
        with path.open("rb") as handle:
            start = handle.read(64)
    except OSError:
        return True  # let the reader report why it cannot be opened
    return _JSON_LOG_START.match(start) is not None


@dataclass
class LogFiles:
    """The log files found under some paths, and the `.json` files passed over as non-logs.

    Local logs are `Path`s; logs in a remote store (`s3://...`) are their URLs as strings.
    """

    logs: list[Path | str] = field(default_factory=list)
    ignored: list[Path] = field(default_factory=list)
    missing: list[Path | str] = field(default_factory=list)
    unreachable: list[tuple[str, str]] = field(default_factory=list)
    """Remote locations that could not be listed: (location, why)."""


def is_remote(location: str | Path) -> bool:
    """Whether a location names a remote store (`s3://`, `gs://`, ...), not a local path."""
    text = str(location)
    scheme, separator, _ = text.partition("://")
    return bool(separator) and scheme not in ("", "file") and "/" not in scheme


def _local(location: str | Path) -> Path:
    text = str(location)
    if text.startswith("file://"):
        return Path(url2pathname(urlparse(text).path))
    return Path(location)


def _listed(directory: str) -> list[str]:
    """Inspect's own listing of the logs under a directory (local or remote), oldest first."""
    from inspect_ai.log import list_eval_logs

    return [info.name for info in list_eval_logs(directory, recursive=True, descending=False)]


#: Inspect's rule (`inspect_ai.log._file.is_log_file`): `.eval` files, and `.json` files whose
#: name starts with a timestamp.
_INSPECT_LOG_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}.*$")


def _listed_local(directory: str) -> list[str]:
    """`_listed` of a local directory, walked as Inspect walks it (fsspec's `walk`), without
    importing Inspect or reading any header (Inspect reads one for each `.eval` log whose name
    is not its own, to show its task)."""
    import fsspec

    fs, root = fsspec.core.url_to_fs(directory)
    names: list[str] = []
    try:
        for _, _, files in fs.walk(root, detail=True, on_error="raise"):
            for info in files.values():
                base = info["name"].replace("\\", "/").split("/")[-1]
                if info["type"] == "file" and (
                    base.endswith(".eval")
                    or (_INSPECT_LOG_NAME.match(base) and base.endswith((".eval", ".json")))
                ):
                    names.append(fs.unstrip_protocol(info["name"]))
    except FileNotFoundError:
        return []
    return names


def _find_remote(location: str, found: LogFiles, seen: set[str]) -> None:
    import fsspec

    try:
        fs, root = fsspec.core.url_to_fs(location)
        is_dir = fs.isdir(root)
        exists = is_dir or fs.exists(root)
    except Exception as error:  # fsspec backends raise their own client errors
        found.unreachable.append((location, _describe(error)))
        return
    if not exists:
        found.missing.append(location)
        return
    names = _listed(location) if is_dir else [location]
    for name in sorted(names):
        if name not in seen:
            seen.add(name)
            found.logs.append(name)


def find_log_files(paths: Iterable[str | Path]) -> LogFiles:
    """Find Inspect logs: files given directly, and `.eval`/`.json` logs under directories.

    Directories (local, or remote such as `s3://bucket/logs`) are listed recursively with
    Inspect's `list_eval_logs`, which finds `.eval` logs and `.json` logs under Inspect's file
    name. In a local directory a `.json` file under another name counts as a log when it starts
    like an Inspect log; other `.json` files (manifests, our own outputs) are listed in
    `ignored`. Files named explicitly are always treated as logs. A remote store that cannot be
    reached is listed in `unreachable`.
    """
    found = LogFiles()
    seen: set[str] = set()
    for raw in paths:
        if is_remote(raw):
            _find_remote(str(raw), found, seen)
            continue
        path = _local(raw)
        if path.is_dir():
            candidates = sorted(_local(name) for name in _listed_local(str(path)))
            listed = set(candidates)
            # Inspect lists .json logs by file name; one renamed is found by its first bytes.
            for other in sorted(path.rglob("*.json")):
                if other in listed or not other.is_file():
                    continue
                if _looks_like_json_log(other):
                    candidates.append(other)
                else:
                    found.ignored.append(other)
            for candidate in candidates:
                key = str(candidate.resolve())
                if key not in seen:
                    seen.add(key)
                    found.logs.append(candidate)
        elif path.is_file():
            key = str(path.resolve())
            if key not in seen:
                seen.add(key)
                found.logs.append(path)
        else:
            found.missing.append(path)
    return found


def _parse_created(text: str, path: str) -> datetime:
    try:
        created = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        if is_remote(path):
            raise LogReadError(path, f"eval.created is not an ISO 8601 time: {text!r}") from None
        created = datetime.fromtimestamp(_local(path).stat().st_mtime, tz=UTC)
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
        raise LogReadError(location, _describe(error)) from error
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


# The fast reader of local `.eval` logs. It reads `header.json` and `summaries.json` only
# (orjson parses them) and builds from the fields the leaderboard uses the same `LogHeader` and
# `SampleScore`s as Inspect's own readers (pydantic models of every field) would. Each field it
# uses is checked as Inspect's models check it; whatever it cannot vouch for (an older log
# version, a running log without `summaries.json`, a value Inspect would reject or rewrite)
# raises `Declined`, and the log is read through Inspect, which also words every error.

_STATUSES = frozenset({"started", "success", "cancelled", "error"})


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
        by_key[(str(summary.id), summary.epoch)] = _sample_score(
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
        raise LogReadError(location, _describe(error)) from error
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
            _sample_score(summary.id, summary.epoch, summary.error, scores, wanted, usage)
        )
    return samples, frozenset(names)


def _sample_score(
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


def _describe(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    first = text[0] if text else ""
    name = type(error).__name__
    return f"{name}: {first}" if first else name
