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

import math
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import url2pathname

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

    def value(self, scorer: str) -> float | None:
        """The value of `scorer`, or None when the sample errored or lacks that score."""
        if self.error is not None:
            return None
        return self.values.get(scorer)


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
        number = float(value)
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
            candidates = sorted(_local(name) for name in _listed(str(path)))
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
        created = datetime.fromtimestamp(_local(path).stat().st_mtime)
    if created.tzinfo is None:
        created = created.astimezone()
    return created


def read_log_header(path: str | Path) -> LogHeader:
    """Read a log's header only. Raises `LogReadError` when the log cannot be read."""
    from inspect_ai.log import read_eval_log

    location = str(path)
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


def read_sample_scores(
    path: str | Path, scorers: Collection[str] | None = None
) -> list[SampleScore]:
    """Read every sample × epoch's scores from a log's sample summaries.

    `scorers` limits which score names are kept (all when None). Raises `LogReadError`.
    """
    return read_samples_and_names(path, scorers)[0]


def read_samples_and_names(
    path: str | Path, scorers: Collection[str] | None
) -> tuple[list[SampleScore], frozenset[str]]:
    """Sample scores (kept for `scorers`, all when None) and every score name in the log."""
    from inspect_ai.log import read_eval_log_sample_summaries

    location = str(path)
    try:
        summaries = read_eval_log_sample_summaries(location)
    except Exception as error:
        raise LogReadError(location, _describe(error)) from error
    wanted = None if scorers is None else set(scorers)
    samples: list[SampleScore] = []
    names: set[str] = set()
    for summary in summaries:
        values: dict[str, float | None] = {}
        unreadable: dict[str, str] = {}
        no_answer: set[str] = set()
        for name, score in (summary.scores or {}).items():
            names.add(name)
            if wanted is None or name in wanted:
                try:
                    values[name] = score_value_to_float(score.value)
                except UnreadableScore as error:
                    values[name] = None
                    unreadable[name] = str(error)
                if no_answer_extracted(score):
                    no_answer.add(name)
        samples.append(
            SampleScore(
                id=summary.id,
                epoch=int(summary.epoch),
                values=values,
                error=summary.error or None,
                unreadable=unreadable,
                no_answer=frozenset(no_answer),
            )
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


def _describe(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    first = text[0] if text else ""
    name = type(error).__name__
    return f"{name}: {first}" if first else name
