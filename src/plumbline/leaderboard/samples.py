"""Every scored sample behind a leaderboard, read from its Inspect logs: the drill-down result.

The leaderboard document says which categories exist, which tasks feed each (glob patterns) and
which scorer each reads; the logs hold the samples. A log counts when its model is on the board
and its task feeds a category. The logs, the scorer each is read with and the samples kept where
logs are reruns of one another are the leaderboard's own (`leaderboard.logs`: the newest log
wins each question and epoch), so the samples add up to the board's numbers. The kept samples
are streamed one log at a time (`read_eval_log_samples`) without their event transcripts.

The result, `LeaderboardSamples`, is a document like the leaderboard itself
(`plumbline.leaderboard_samples/1`): the site writes it beside the leaderboard's copy and its
model pages and failure-mode tables render it, counts and shares included, computing nothing.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plumbline.core.result import schema_version
from plumbline.leaderboard.logs import (
    Categories,
    SuiteLog,
    newest_rows,
    question_key,
    suite_log,
)
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
from plumbline.leaderboard.suite import BUILTIN_SUITES, Category, load_suite
from plumbline.records.log_pool import LogReader
from plumbline.records.log_scores import (
    LogHeader,
    UnreadableScore,
    sample_id_key,
    score_value_to_float,
)

SCHEMA_VERSION = schema_version("leaderboard_samples", 1)
assert SCHEMA_VERSION == "plumbline.leaderboard_samples/1"  # `LeaderboardSamples.schema_version`


@dataclass(frozen=True)
class DocumentCategories:
    """The categories a leaderboard document states, as its logs are read for them
    (`leaderboard.logs.Categories`)."""

    name: str
    categories: tuple[Category, ...]

    def categories_for_task(self, task: str) -> list[Category]:
        return [category for category in self.categories if category.matches(task)]


def document_categories(document: LeaderboardDocument) -> DocumentCategories:
    """Each category of a document with the tasks (glob patterns) and scorers that feed it.

    A document does not state its suite's task aliases (`Category.task_aliases`); when it
    names a built-in suite (`sa-bench`) whose category has the same tasks, that category's
    aliases apply, so a question run by several tasks is one question, as the leaderboard
    counted it. A category whose scorer the document does not state is left out.
    """
    suite = document.metadata.suite
    builtin = {}
    if suite is not None and suite.name in BUILTIN_SUITES:
        builtin = {category.key: category for category in load_suite(suite.name).categories}
    categories = []
    for key, meta in document.categories.items():
        scorers = meta.scorers or ([meta.scorer] if meta.scorer else [])
        if not scorers:
            continue
        tasks = tuple(meta.tasks or [key])
        known = builtin.get(key)
        aliases = known.task_aliases if known is not None and known.tasks == tasks else {}
        # not validated again: the document was, and a published document's category may lack
        # what a suite's must have (a description, say)
        categories.append(
            Category.model_construct(
                key=key,
                name=meta.name,
                description=meta.description,
                weight=meta.weight,
                scoring=meta.scoring,
                tasks=tasks,
                scorers=tuple(scorers),
                task_aliases=aliases,
            )
        )
    return DocumentCategories(suite.name if suite is not None else "leaderboard", tuple(categories))


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


def _category_sample(
    header: LogHeader,
    sample: Any,
    key: str,
    scorers: Sequence[str],
    question: str,
    response: str,
    failure: str | None,
) -> LeaderboardSample:
    """One sample of a log as the board sees it in one category, scored by its first scorer held."""
    held = sample.scores or {}
    scorer = next((name for name in scorers if name in held), scorers[0])
    score = held.get(scorer)
    try:
        value = None if score is None else score_value_to_float(score.value)
    except UnreadableScore:
        value = None  # reported by the leaderboard as unreadable_score
    if failure is not None or (value is not None and not math.isfinite(value)):
        value = None
    metadata: dict[str, Any] = dict(score.metadata) if score is not None and score.metadata else {}
    return LeaderboardSample(
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


def read_leaderboard_samples(
    document: LeaderboardDocument | Mapping[str, Any],
    sources: Sequence[Path],
    *,
    suite: Categories | None = None,
) -> LeaderboardSamples:
    """Every sample of the board's models in its categories, from the logs under `sources`,
    and the failure modes they show. The logs and samples are those the leaderboard used
    (`leaderboard.logs`: the same logs, scorer and newest-log rule); `suite` gives the
    categories (default: the document's, `document_categories`)."""
    from plumbline.leaderboard.document import as_document

    document = as_document(document)
    categories = suite if suite is not None else document_categories(document)
    models = {entry.model for entry in document.models}
    used, problems = _board_logs(sources, categories, models)
    kept = _newest_samples(used)
    chosen: list[LeaderboardSample] = []
    for log in used:
        if any((log.header.path, category.key) in kept for category, _ in log.parts):
            problems += _log_samples(log, kept, chosen)
    samples = sorted(chosen, key=lambda s: (s.model, s.category, s.task, s.sample_id, s.epoch))
    samples, disagreements = agreeing_samples(document, samples)
    problems += disagreements
    return LeaderboardSamples(
        samples=samples,
        failure_modes=failure_modes(document, samples),
        problems=problems,
        logs_read=len(used),
    )


def _board_logs(
    sources: Sequence[Path], categories: Categories, models: set[str]
) -> tuple[list[SuiteLog], list[str]]:
    """The logs of the board's models whose task feeds a category (read as the leaderboard
    reads them), and the problems: missing paths, unreadable logs."""
    used: list[SuiteLog] = []
    problems: list[str] = []
    with LogReader(sources) as reader:
        problems += [f"{path}: no such file or directory" for path in reader.files.missing]
        for read in reader:
            if read.header is None:
                problems.append(f"{read.path}: {read.header_problem}")
                continue
            if read.header.model not in models:
                continue
            if not categories.categories_for_task(read.header.task):
                continue
            if read.columns is None:
                problems.append(f"{read.path}: {read.samples_problem}")
                continue
            used.append(suite_log(read, categories))
    return used, problems


def _newest_samples(used: Sequence[SuiteLog]) -> dict[tuple[str, str], set[tuple[str, int]]]:
    """(log path, category) -> the (sample id key, epoch) the newest-log rule keeps there."""
    rows: list[tuple[str, str, str, int]] = []
    keys: list[tuple[str, str, str, str]] = []
    epochs: list[int] = []
    headers: list[LogHeader] = []
    for log in used:
        for category, _ in log.parts:
            for id_key, epoch in zip(log.columns.id_keys, log.columns.epochs, strict=True):
                rows.append((log.header.path, category.key, id_key, epoch))
                keys.append(question_key(category, log.header, id_key))
                epochs.append(epoch)
                headers.append(log.header)
    kept: dict[tuple[str, str], set[tuple[str, int]]] = {}
    for (path, key, id_key, epoch), keep in zip(
        rows, newest_rows(keys, epochs, headers), strict=True
    ):
        if keep:
            kept.setdefault((path, key), set()).add((id_key, epoch))
    return kept


def _log_samples(
    log: SuiteLog,
    kept: Mapping[tuple[str, str], set[tuple[str, int]]],
    chosen: list[LeaderboardSample],
) -> list[str]:
    """Append the kept samples of one log (streamed without their event transcripts) to
    `chosen`; the problem when the log cannot be read."""
    from inspect_ai.log import read_eval_log_samples

    header = log.header
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
            wanted = (sample_id_key(sample.id), int(sample.epoch))
            for category, scorer in log.parts:
                if wanted in kept.get((header.path, category.key), ()):
                    chosen.append(
                        _category_sample(
                            header, sample, category.key, (scorer,), question, response, failure
                        )
                    )
    except Exception as problem:  # inspect raises zip, JSON, pydantic and OS errors alike
        return [f"{header.path}: {type(problem).__name__}: {problem}"]
    return []


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
    "DocumentCategories",
    "FailureModes",
    "LeaderboardSample",
    "LeaderboardSamples",
    "OutcomeCounts",
    "agreeing_samples",
    "document_categories",
    "failure_modes",
    "generated_schema",
    "highlights_of",
    "outcome_of",
    "question_text",
    "read_leaderboard_samples",
]
