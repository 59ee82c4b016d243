"""A result as the store keeps it: validated and typed, with its kind, suite, subjects,
creation time, metrics and content digest.

    stored = read_result(json.loads(text))   # ResultDocumentError: every problem, `field: why`
    stored = stored_result(document)         # an in-process result, typed already: no parse

The store keeps the kinds `kinds.STORED_KINDS` names. Two digests identify a result (the store
keys it by them, see `store.result_key`): `digest`, SHA-256 of the document's canonical JSON
without the moment it was made (a leaderboard's `generated_at` and `run_id`: the same inputs and
settings make the same digest), and `document_digest`, SHA-256 of the whole canonical JSON (the
same file).
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from plumbline.core.result import document_kind
from plumbline.results.errors import ResultDocumentError
from plumbline.results.kinds import STORED_KINDS, ResultKind, kind, kind_of
from plumbline.results.rows import MetricRow


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


def _stored(definition: ResultKind[Any], result: Any, data: dict[str, Any]) -> ResultDocument:
    created = definition.created_at(result)
    return ResultDocument(
        kind=definition.name,
        schema_version=_schema_version(result),
        document=data,
        suite=definition.suite(result),
        subjects=definition.subjects(result),
        created_at=None if created is None else _timestamp(created),
        metrics=tuple(definition.metrics(result)),
        digest=content_digest(data),
        document_digest=document_digest(data),
    )


def _schema_version(result: Any) -> str:
    metadata = getattr(result, "metadata", None)
    version = getattr(metadata, "schema_version", None) or result.schema_version
    return str(version)


def stored_result(result: BaseModel, data: dict[str, Any] | None = None) -> ResultDocument:
    """An in-process result (typed, and checked by its producer) as the store keeps it;
    `data`: its JSON when the caller has it already."""
    definition = kind_of(result)
    if definition.name not in STORED_KINDS:
        raise ResultDocumentError([f"schema_version: a {definition.name} document is not stored"])
    return _stored(definition, result, definition.to_json(result) if data is None else data)


def result_kind(document: Any) -> str | None:
    """The kind a JSON document names (older leaderboards included), or None."""
    from plumbline.leaderboard.upgrade import is_older_leaderboard

    name = document_kind(document)
    if name is None and is_older_leaderboard(document):
        return "leaderboard"
    return name


def read_result(document: Any) -> ResultDocument:
    """The document validated and typed; `ResultDocumentError` when the store cannot keep it."""
    if not isinstance(document, dict):
        raise ResultDocumentError(["document: not a JSON object (a plumbline result is one)"])
    name = result_kind(document)
    if name is None:
        raise ResultDocumentError(
            ["schema_version: missing or not plumbline's: not a plumbline result document"]
        )
    if name not in STORED_KINDS:
        raise ResultDocumentError(
            [
                f"schema_version: a {name} document, not a result the store keeps "
                f"({', '.join(STORED_KINDS)})"
            ]
        )
    definition = kind(name)
    result = definition.read(document)
    return _stored(definition, result, definition.to_json(result))


__all__ = [
    "ResultDocument",
    "ResultDocumentError",
    "content_digest",
    "document_digest",
    "read_result",
    "result_kind",
    "stored_result",
]
