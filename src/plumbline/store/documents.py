"""A result document as the store keeps it: validated and typed, with its kind, suite,
subjects, creation time, metrics and content digest.

    stored = read_result(json.loads(text))   # ResultDocumentError: every problem, `field: why`

The store keeps four kinds: `leaderboard` (older leaderboards are upgraded first), `compare`,
`reliability` and `agent_run`. Two digests identify a result (the store keys it by them, see
`store.result_key`): `digest`, SHA-256 of the document's canonical JSON without the moment it
was made (a leaderboard's `generated_at` and `run_id`: the same inputs and settings make the
same digest), and `document_digest`, SHA-256 of the whole canonical JSON (the same file).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ValidationError

from plumbline.core.result import document_kind
from plumbline.store.metrics import (
    agent_run_metrics,
    compare_metrics,
    compare_subject,
    leaderboard_metrics,
    reliability_metrics,
)
from plumbline.store.rows import MetricRow

#: The kinds of result the store keeps.
STORED_KINDS = ("leaderboard", "compare", "reliability", "agent_run")


class ResultDocumentError(ValueError):
    """A document the store cannot keep; `problems` are `field: why` lines."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


@dataclass(frozen=True)
class ResultDocument:
    """A validated result: its JSON, kind, schema version, suite, subjects (models or arms),
    the time it records (None when it records none), metrics and digests (see the module)."""

    kind: str
    schema_version: str
    document: dict[str, Any]
    suite: str | None
    subjects: tuple[str, ...]
    created_at: datetime | None
    metrics: tuple[MetricRow, ...]
    digest: str
    document_digest: str


def _problems(error: ValidationError) -> list[str]:
    return [
        f"{'.'.join(str(part) for part in problem['loc']) or 'document'}: {problem['msg']}"
        for problem in error.errors()[:20]
    ]


def _validate(model: type[BaseModel], document: Any) -> Any:
    try:
        return model.model_validate(document)
    except ValidationError as error:
        raise ResultDocumentError(_problems(error)) from None


def content_digest(document: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of `document` without the moment it was made."""
    content = copy.deepcopy(document)
    metadata = content.get("_metadata")
    if isinstance(metadata, dict):
        metadata.pop("generated_at", None)
        metadata.pop("run_id", None)
    return document_digest(content)


def document_digest(document: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of the whole `document`."""
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _timestamp(text: str, field: str = "_metadata.generated_at") -> datetime:
    """An ISO 8601 time in UTC (a time without a zone is UTC); `ResultDocumentError` for one
    that is not a time or falls outside 0001-01-01 to 9999-12-31 in UTC."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ResultDocumentError([f"{field}: {text!r} is not an ISO 8601 time"]) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise ResultDocumentError(
            [f"{field}: {text!r} is outside 0001-01-01 to 9999-12-31 in UTC"]
        ) from None


def _leaderboard(document: Any) -> ResultDocument:
    from plumbline.leaderboard.document import consistency_problems, parse_document

    parsed, problems = parse_document(document)
    if parsed is None:
        raise ResultDocumentError(problems)
    problems = consistency_problems(parsed, check_overall=False)
    if problems:
        raise ResultDocumentError(problems)
    data = parsed.to_json()
    suite = parsed.metadata.suite
    return ResultDocument(
        kind="leaderboard",
        schema_version=parsed.metadata.schema_version,
        document=data,
        suite=suite.name if suite is not None else None,
        subjects=tuple(row.model for row in parsed.models),
        created_at=_timestamp(parsed.metadata.generated_at),
        metrics=tuple(leaderboard_metrics(parsed)),
        digest=content_digest(data),
        document_digest=document_digest(data),
    )


def _compare(document: Any) -> ResultDocument:
    from plumbline.compare.result import CompareReport, document_problems

    problems = document_problems(document)
    if problems:
        raise ResultDocumentError(problems)
    report = CompareReport.model_validate(document)
    data = report.model_dump(mode="json")
    return ResultDocument(
        kind="compare",
        schema_version=report.schema_version,
        document=data,
        suite=None,
        subjects=tuple(compare_subject(c.treatment, c.control) for c in report.comparisons),
        created_at=None,
        metrics=tuple(compare_metrics(report)),
        digest=content_digest(data),
        document_digest=document_digest(data),
    )


def _reliability(document: Any) -> ResultDocument:
    from plumbline.reliability.result import ReliabilityReport

    report: ReliabilityReport = _validate(ReliabilityReport, document)
    data = report.json_document()
    return ResultDocument(
        kind="reliability",
        schema_version=report.schema_version,
        document=data,
        suite=None,
        subjects=tuple(model.model for model in report.models),
        created_at=None,
        metrics=tuple(reliability_metrics(report)),
        digest=content_digest(data),
        document_digest=document_digest(data),
    )


def _agent_run(document: Any) -> ResultDocument:
    from plumbline.agent.result import AgentRunDocument
    from plumbline.compare.result import document_problems

    run: AgentRunDocument = _validate(AgentRunDocument, document)
    if run.compare is not None:
        problems = document_problems(run.compare)
        if problems:
            raise ResultDocumentError([f"compare.{problem}" for problem in problems])
    data = run.model_dump(mode="json")
    return ResultDocument(
        kind="agent_run",
        schema_version=run.schema_version,
        document=data,
        suite=None,
        subjects=tuple(run.arms),
        created_at=None,
        metrics=tuple(agent_run_metrics(run)),
        digest=content_digest(data),
        document_digest=document_digest(data),
    )


_READERS: dict[str, Callable[[Any], ResultDocument]] = {
    "leaderboard": _leaderboard,
    "compare": _compare,
    "reliability": _reliability,
    "agent_run": _agent_run,
}


def result_kind(document: Any) -> str | None:
    """The stored kind of a JSON document (older leaderboards included), or None."""
    from plumbline.leaderboard.result import is_older_leaderboard

    kind = document_kind(document)
    if kind is None and is_older_leaderboard(document):
        return "leaderboard"
    return kind


def read_result(document: Any) -> ResultDocument:
    """The document validated and typed; `ResultDocumentError` when the store cannot keep it."""
    if not isinstance(document, dict):
        raise ResultDocumentError(["document: not a JSON object (a plumbline result is one)"])
    kind = result_kind(document)
    if kind is None:
        raise ResultDocumentError(
            ["schema_version: missing or not plumbline's: not a plumbline result document"]
        )
    if kind not in _READERS:
        raise ResultDocumentError(
            [
                f"schema_version: a {kind} document, not a result the store keeps "
                f"({', '.join(STORED_KINDS)})"
            ]
        )
    return _READERS[kind](document)
