"""Every scored sample behind a leaderboard, read from its Inspect logs: the drill-down result.

The leaderboard document says which categories exist, which tasks feed each (glob patterns) and
which scorer each reads; the logs hold the samples. A log counts when its model is on the board
and its task feeds a category; when two logs hold the same (model, task, sample id, epoch), the
newer wins, as it does when the leaderboard is built. Samples are streamed one log at a time
(`read_eval_log_samples`) without their event transcripts.

The result, `LeaderboardSamples`, is a document like the leaderboard itself
(`plumbline.leaderboard_samples/1`): the site writes it beside the leaderboard's copy and its
model pages and failure-mode tables render it, counts and shares included, computing nothing.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from plumbline.core.result import schema_version
from plumbline.leaderboard.result import (
    CORRECT,
    ERROR,
    GOOD_OUTCOMES,
    INCORRECT,
    NEUTRAL_OUTCOMES,
    PARTIAL,
    UNSCORED,
    FailureModes,
    LeaderboardDocument,
    LeaderboardSample,
    LeaderboardSamples,
    OutcomeCounts,
)
from plumbline.records.inspect_logs import (
    LogReadError,
    UnreadableScore,
    find_log_files,
    read_log_header,
    score_value_to_float,
)

SCHEMA_VERSION = schema_version("leaderboard_samples", 1)
assert SCHEMA_VERSION == "plumbline.leaderboard_samples/1"  # `LeaderboardSamples.schema_version`


def _task_matches(task: str, patterns: Iterable[str]) -> bool:
    names = (pattern.rpartition("@")[2] for pattern in patterns)
    return any(task == name or fnmatchcase(task, name) for name in names)


def categories_for_task(
    document: LeaderboardDocument, task: str
) -> list[tuple[str, tuple[str, ...]]]:
    """(category key, scorers in order of preference) of every category the task feeds."""
    found: list[tuple[str, tuple[str, ...]]] = []
    for key, meta in document.categories.items():
        if _task_matches(task, meta.tasks or [key]):
            scorers = meta.scorers or [meta.scorer or ""]
            found.append((key, tuple(scorers)))
    return found


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for item in content or []:
        kind = getattr(item, "type", "")
        if kind == "text":
            parts.append(str(getattr(item, "text", "")))
        elif kind == "reasoning":
            continue
        else:
            parts.append(f"[{kind or 'content'}]")
    return "\n".join(parts)


def question_text(sample: Any) -> str:
    """The sample's input as text (user messages joined; images shown as `[image]`), with the
    lettered choices of a multiple-choice question."""
    raw = sample.input
    if isinstance(raw, str):
        text = raw
    else:
        text = "\n\n".join(
            _content_text(message.content)
            for message in raw
            if getattr(message, "role", "user") in ("user", "system")
        )
    choices = getattr(sample, "choices", None)
    if choices:
        letters = [chr(ord("A") + index) for index in range(len(choices))]
        text += "\n\n" + "\n".join(
            f"{letter}) {choice}" for letter, choice in zip(letters, choices, strict=True)
        )
    return text


def _target_text(target: Any) -> str:
    if isinstance(target, list):
        return ", ".join(str(item) for item in target)
    return str(target or "")


def outcome_of(value: float | None, metadata: Mapping[str, Any], error: str | None) -> str:
    """A sample's outcome: the scorer's own (`metadata.outcome`, e.g. a CDK failure mode) when
    it gives one; otherwise error, unscored, correct (1), incorrect (0) or partial."""
    if error:
        return ERROR
    given = metadata.get("outcome")
    if isinstance(given, str) and given:
        return given
    if value is None or not math.isfinite(value):
        return UNSCORED
    if value >= 1.0:
        return CORRECT
    if value <= 0.0:
        return INCORRECT
    return PARTIAL


def highlights_of(metadata: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The parts of scorer metadata a reader looks for first: the CDK outcome and reason, the
    app's stderr, lint findings, each judge's reasoning or errors, applied factors."""
    found: list[tuple[str, str]] = []
    if metadata.get("outcome"):
        found.append(("outcome", str(metadata["outcome"])))
    if metadata.get("reason"):
        found.append(("reason", str(metadata["reason"])))
    if metadata.get("exception_type"):
        found.append(("exception", str(metadata["exception_type"])))
    if metadata.get("stderr_head"):
        found.append(("stderr", str(metadata["stderr_head"])))
    lint = metadata.get("lint")
    if isinstance(lint, list) and lint:
        lines = [
            f"{item.get('severity', '?')} {item.get('rule', '?')}: {item.get('message', '')}"
            for item in lint
            if isinstance(item, Mapping)
        ]
        found.append(("cfn-lint", "\n".join(lines)))
    judges = metadata.get("judges")
    if isinstance(judges, list):
        for judge in judges:
            if not isinstance(judge, Mapping):
                continue
            name = str(judge.get("model", "judge"))
            if judge.get("reasoning"):
                found.append((f"judge {name}", str(judge["reasoning"])))
            if judge.get("errors"):
                found.append((f"judge {name} errors", "\n".join(map(str, judge["errors"]))))
    factors = metadata.get("factors")
    if isinstance(factors, list) and factors:
        found.append(
            (
                "factors",
                "\n".join(
                    f"{f.get('name')}: ×{f.get('factor')} ({f.get('reason')})"
                    for f in factors
                    if isinstance(f, Mapping)
                ),
            )
        )
    return tuple(found)


def read_leaderboard_samples(
    document: LeaderboardDocument | Mapping[str, Any], sources: Sequence[Path]
) -> LeaderboardSamples:
    """Every sample of the board's models in its categories, from the logs under `sources`,
    and the failure modes they show."""
    from inspect_ai.log import read_eval_log_samples

    from plumbline.leaderboard.document import as_document

    document = as_document(document)
    models = {entry.model for entry in document.models}
    files = find_log_files(sources)
    problems = [f"{path}: no such file or directory" for path in files.missing]
    headers = []
    for path in files.logs:
        try:
            header = read_log_header(path)
        except LogReadError as error:
            problems.append(f"{error.path}: {error.problem}")
            continue
        if header.model in models and categories_for_task(document, header.task):
            headers.append(header)
    headers.sort(key=lambda header: (header.created, header.path))
    chosen: dict[tuple[str, str, str, str, int], LeaderboardSample] = {}
    for header in headers:
        categories = categories_for_task(document, header.task)
        try:
            for sample in read_eval_log_samples(
                header.path,
                all_samples_required=False,
                resolve_attachments=True,
                exclude_fields={"events"},
            ):
                question = question_text(sample)
                response = sample.output.completion if sample.output is not None else ""
                failure = sample.error.message if sample.error is not None else None
                for key, scorers in categories:
                    held = sample.scores or {}
                    scorer = next((name for name in scorers if name in held), scorers[0])
                    score = held.get(scorer)
                    try:
                        value = None if score is None else score_value_to_float(score.value)
                    except UnreadableScore:
                        value = None  # reported by the leaderboard as unreadable_score
                    if failure is not None or (value is not None and not math.isfinite(value)):
                        value = None
                    metadata: dict[str, Any] = (
                        dict(score.metadata) if score is not None and score.metadata else {}
                    )
                    found = LeaderboardSample(
                        model=header.model,
                        category=key,
                        task=header.task,
                        sample_id=str(sample.id),
                        epoch=int(sample.epoch),
                        question=question,
                        response=response,
                        target=_target_text(sample.target),
                        value=value,
                        answer=None if score is None or score.answer is None else str(score.answer),
                        explanation=None if score is None else score.explanation,
                        outcome=outcome_of(value, metadata, failure),
                        error=failure,
                        metadata=metadata,
                        highlights=list(highlights_of(metadata)),
                        log=header.path,
                    )
                    chosen[(header.model, key, header.task, found.sample_id, found.epoch)] = found
        except Exception as problem:  # inspect raises zip, JSON, pydantic and OS errors alike
            problems.append(f"{header.path}: {type(problem).__name__}: {problem}")
    samples = sorted(
        chosen.values(), key=lambda s: (s.model, s.category, s.task, s.sample_id, s.epoch)
    )
    samples, disagreements = agreeing_samples(document, samples)
    problems += disagreements
    return LeaderboardSamples(
        samples=samples,
        failure_modes=failure_modes(document, samples),
        problems=problems,
        logs_read=len(headers),
    )


#: How far the mean of the samples may lie from the category value the leaderboard states.
AGREEMENT_TOLERANCE = 1e-6


def agreeing_samples(
    document: LeaderboardDocument, samples: Sequence[LeaderboardSample]
) -> tuple[list[LeaderboardSample], list[str]]:
    """The samples of every (model, category) whose figures are the leaderboard's, and a
    problem for each other one, whose samples are left out.

    Logs given beside a leaderboard may not be the ones it was built from (a rerun, another
    model's run): their samples would then show numbers that contradict the document. A
    (model, category) agrees when its scored questions are the `n` the document states and the
    mean over questions of each question's mean over epochs (errored sample-epochs as 0 under
    the `zero` errors policy, left out otherwise) is its stated value."""
    zero = document.metadata.errors_policy == "zero"
    groups: dict[tuple[str, str], list[LeaderboardSample]] = {}
    for sample in samples:
        groups.setdefault((sample.model, sample.category), []).append(sample)
    rows = {entry.model: entry for entry in document.models}
    kept: list[LeaderboardSample] = []
    problems: list[str] = []
    for (model, key), group in groups.items():
        row = rows.get(model)
        stated = row.score(key) if row is not None else None
        counts = (row.counts or {}).get(key) if row is not None else None
        by_question: dict[tuple[str, str], list[float]] = {}
        for sample in group:
            if sample.value is not None or zero:
                value = 0.0 if sample.value is None else sample.value
                by_question.setdefault((sample.task, sample.sample_id), []).append(value)
        means = [math.fsum(values) / len(values) for values in by_question.values()]
        found = math.fsum(means) / len(means) if means else None
        n_stated = counts.n if counts is not None else None
        if row is None or (n_stated is not None and n_stated != len(means)):
            agree = row is None and not means
        elif stated is None or found is None:
            agree = stated is None and found is None
        else:
            agree = abs(found - stated) <= AGREEMENT_TOLERANCE
        if agree:
            kept.extend(group)
            continue
        problems.append(
            f"{model}: {key}: the logs given hold {len(means)} scored question(s) with mean "
            f"{'none' if found is None else f'{found:.6g}'}, but the leaderboard states "
            f"{'?' if n_stated is None else n_stated} question(s) with "
            f"{'none' if stated is None else f'{stated:.6g}'}: these are not the logs it was "
            "built from, so their samples are not shown"
        )
    return kept, problems


def failure_modes(
    document: LeaderboardDocument, samples: Sequence[LeaderboardSample]
) -> list[FailureModes]:
    """Outcome counts per model (in the document's order) for every category whose scorer
    reports outcomes (`metadata.outcome`, as the CDK scorer does); outcomes that are
    successes come first, then the most frequent."""
    tables: list[FailureModes] = []
    for key, meta in document.categories.items():
        in_category = [sample for sample in samples if sample.category == key]
        if not any("outcome" in sample.metadata for sample in in_category):
            continue
        overall = Counter(sample.outcome for sample in in_category)
        order = sorted(overall, key=lambda o: (o not in GOOD_OUTCOMES, -overall[o], o))
        rows: list[OutcomeCounts] = []
        for entry in document.models:
            counts = Counter(s.outcome for s in in_category if s.model == entry.model)
            total = sum(counts.values())
            rows.append(
                OutcomeCounts(
                    model=entry.model,
                    total=total,
                    counts=[counts[outcome] for outcome in order],
                    shares=[counts[outcome] / total if total else None for outcome in order],
                )
            )
        tables.append(FailureModes(category=key, name=meta.name, outcomes=order, rows=rows))
    return tables


def generated_schema() -> dict[str, Any]:
    """The drill-down document's JSON Schema, as shipped
    (`schemas/leaderboard_samples.schema.json`)."""
    from plumbline.core.schema_files import model_schema

    return model_schema(
        LeaderboardSamples,
        schema_id="https://plumbline.dev/schemas/leaderboard_samples/1/"
        "leaderboard_samples.schema.json",
        title="plumbline leaderboard samples",
    )


__all__ = [
    "GOOD_OUTCOMES",
    "NEUTRAL_OUTCOMES",
    "SCHEMA_VERSION",
    "FailureModes",
    "LeaderboardSample",
    "LeaderboardSamples",
    "OutcomeCounts",
    "agreeing_samples",
    "categories_for_task",
    "failure_modes",
    "generated_schema",
    "highlights_of",
    "outcome_of",
    "question_text",
    "read_leaderboard_samples",
]
