"""Adapters from real agent output to run records.

An agent's own output knows its tokens, cost and duration, but not the experiment around it:
which task, which arm, which repeat, and whether the acceptance check passed. Those come, in
order of precedence, from keys the harness put in the object itself (`task_id`, `arm`, `repeat`,
`success` or `acceptance_exit_code`, `timed_out`, `infra_failure`, …), from the file's path
matched against a template such as `{arm}/{task_id}/{repeat}.json`, and from constants given on
the command line; then an outcomes file (JSON records keyed by `task_id`, `arm`, `repeat`, as a
harness writes them after running the acceptance command) adds the acceptance result.
Every converted record is validated against `RunRecord`; a record that cannot
be completed is reported as `file:line: field: problem`, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from plumbline.core.timestamps import parse_utc
from plumbline.records.io import RecordError, iter_json_objects
from plumbline.records.run_record import RunRecord

# Harness keys copied through from the agent's output object when present.
HARNESS_KEYS = (
    "task_id",
    "arm",
    "repeat",
    "success",
    "run_id",
    "timed_out",
    "infra_failure",
    "infra_failure_reason",
    "acceptance_exit_code",
    "acceptance_cmd_count",
    "acceptance_first_pass",
    "agent_exit_code",
    "setup_exit_code",
    "arm_setup_exit_code",
    "started_at_utc",
    "ended_at_utc",
    "duration_seconds",
    "prompt_file",
    "acceptance_command",
    "workspace",
)

_PLACEHOLDER = re.compile(r"\{(task_id|arm|repeat)\}")


def _template_regex(template: str) -> re.Pattern[str]:
    parts: list[str] = []
    position = 0
    for match in _PLACEHOLDER.finditer(template):
        parts.append(re.escape(template[position : match.start()]))
        name = match.group(1)
        parts.append(rf"(?P<{name}>\d+)" if name == "repeat" else rf"(?P<{name}>[^/]+?)")
        position = match.end()
    parts.append(re.escape(template[position:]))
    return re.compile(r"(?:^|/)" + "".join(parts) + r"$")


@dataclass(frozen=True)
class RunContext:
    """Where the experiment's keys come from when the agent output lacks them."""

    arm: str | None = None
    task_id: str | None = None
    repeat: int | None = None
    path_template: str | None = None
    defaults: dict[str, Any] = field(default_factory=dict)
    outcomes: dict[tuple[str, str, int], dict[str, Any]] = field(default_factory=dict)

    def from_path(self, path: str | Path) -> dict[str, Any]:
        """Keys parsed from `path` by the template (matched against the end of the path)."""
        if not self.path_template:
            return {}
        text = Path(path).as_posix()
        match = _template_regex(self.path_template).search(text)
        if match is None:
            return {}
        found: dict[str, Any] = dict(match.groupdict())
        if "repeat" in found:
            found["repeat"] = int(found["repeat"])
        return found

    def fill(self, fields: dict[str, Any], source: dict[str, Any], path: str | Path) -> None:
        """Complete `fields` in precedence order: harness keys, the path, the constants."""
        for key in HARNESS_KEYS:
            if key in source:
                fields[key] = source[key]
        for key, value in self.from_path(path).items():
            fields.setdefault(key, value)
        for key, value in (("arm", self.arm), ("task_id", self.task_id), ("repeat", self.repeat)):
            if value is not None:
                fields.setdefault(key, value)
        for key, value in self.defaults.items():
            fields.setdefault(key, value)
        outcome_key = (str(fields.get("task_id")), str(fields.get("arm")), fields.get("repeat"))
        outcome: dict[str, Any] = self.outcomes.get(outcome_key, {})  # type: ignore[arg-type]
        for name, value in outcome.items():
            if name in HARNESS_KEYS and fields.get(name) is None:
                fields[name] = value
        if "success" not in fields and isinstance(fields.get("acceptance_exit_code"), int):
            fields["success"] = fields["acceptance_exit_code"] == 0
        if fields.get("duration_seconds") is None:
            fields["duration_seconds"] = _between(
                fields.get("started_at_utc"), fields.get("ended_at_utc")
            )


def _between(started: Any, ended: Any) -> float | None:
    """Seconds from `started` to `ended` (ISO 8601 times), or None when either is missing or
    unreadable (validation then names the missing duration)."""
    if not isinstance(started, str) or not isinstance(ended, str):
        return None
    try:
        return (parse_utc(ended) - parse_utc(started)).total_seconds()
    except ValueError:
        return None


def load_outcomes(
    path: str | Path,
) -> tuple[dict[tuple[str, str, int], dict[str, Any]], list[RecordError]]:
    """Read an outcomes file: records with `task_id`, `arm`, `repeat` and the acceptance result."""
    outcomes: dict[tuple[str, str, int], dict[str, Any]] = {}
    errors: list[RecordError] = []
    for item in iter_json_objects(path, errors):
        value = item.value
        missing = [k for k in ("task_id", "arm", "repeat") if k not in value]
        if missing:
            for name in missing:
                errors.append(RecordError(item.path, item.line, name, "Field required"))
            continue
        key = (str(value["task_id"]), str(value["arm"]), value["repeat"])
        if key in outcomes:
            errors.append(
                RecordError(item.path, item.line, "<record>", f"second outcome for {key}")
            )
            continue
        outcomes[key] = value
    return outcomes, errors


@dataclass
class Conversion:
    """Converted records, the problems found, in input order, and notes: what was read but
    gave no record, or was set aside, without being wrong (a log that holds no samples, a run
    superseded by a rerun)."""

    records: list[RunRecord] = field(default_factory=list)
    errors: list[RecordError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def extend(self, other: Conversion) -> None:
        self.records.extend(other.records)
        self.errors.extend(other.errors)
        self.notes.extend(other.notes)


_HINTS = {
    "success": "the agent output has no acceptance result; give --outcomes, or add `success` "
    "or `acceptance_exit_code` to the object",
    "task_id": "add `task_id` to the object, use --path-template, or pass --task-id",
    "arm": "add `arm` to the object, use --path-template, or pass --arm",
    "repeat": "add `repeat` to the object, use --path-template, or pass --repeat",
    "duration_seconds": "the agent output has no duration; give `duration_seconds` or "
    "`started_at_utc` and `ended_at_utc` in --outcomes or on a line of the output",
}


def validate(fields: dict[str, Any], path: str, line: int, conversion: Conversion) -> None:
    """Validate one converted record; add it, or add its problems."""
    try:
        conversion.records.append(RunRecord.model_validate(fields))
    except ValidationError as error:
        for detail in error.errors():
            name = ".".join(str(part) for part in detail["loc"]) or "<record>"
            problem = detail["msg"]
            absent = detail["type"] == "missing" or (
                name == "duration_seconds" and fields.get(name) is None
            )
            if absent and name in _HINTS:
                problem = f"missing: {_HINTS[name]}"
            conversion.errors.append(RecordError(path, line, name, problem))


__all__ = ["HARNESS_KEYS", "Conversion", "RunContext", "load_outcomes", "validate"]
