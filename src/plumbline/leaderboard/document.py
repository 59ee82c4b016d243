"""The leaderboard JSON file: the shipped schema, validation, and atomic writing and reading.

Validation is the JSON Schema (`schemas/leaderboard.schema.json`, draft-07) plus the rules a
schema cannot say: every model's `overall` equals Σ weight × category value (a missing category
counting 0), weights sum to 1, `model_count` matches, and category keys are declared. The
reference implementation published overall values from an old weighting under metadata that
claimed the new one; a file that disagrees with itself is never written.
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator, FormatChecker

from plumbline.records.io import UnreadableFileError, read_json_file, write_json_atomic

OVERALL_TOLERANCE = 1e-9


class LeaderboardFileError(ValueError):
    """A leaderboard document that fails validation, with every problem as `path: field: why`."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("\n".join(f"{source}: {problem}" for problem in problems))


@cache
def leaderboard_schema() -> dict[str, Any]:
    """The shipped leaderboard JSON Schema (draft-07)."""
    text = (
        resources.files("plumbline").joinpath("schemas/leaderboard.schema.json").read_text("utf-8")
    )
    schema: dict[str, Any] = json.loads(text)
    return schema


_FORMATS = FormatChecker()


@_FORMATS.checks("date-time", raises=ValueError)
def _is_date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if "T" not in value:
        raise ValueError("not an ISO 8601 date-time (no 'T')")
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        raise ValueError("an ISO 8601 date-time needs a time zone (e.g. 'Z')")
    return True


def _field(path: Any) -> str:
    parts: list[str] = []
    for part in path:
        if isinstance(part, int):
            parts[-1:] = [f"{parts[-1]}[{part}]" if parts else f"[{part}]"]
        else:
            parts.append(str(part))
    return ".".join(parts) or "<document>"


def recompute_overall(document: dict[str, Any], model: dict[str, Any]) -> float:
    """Σ weight × category value over the document's categories, a missing category counting 0."""
    categories = document["_metadata"]["categories"]
    return math.fsum(
        float(meta["weight"]) * float(model.get(key, 0.0)) for key, meta in categories.items()
    )


def document_problems(document: Any, *, check_overall: bool = True) -> list[str]:
    """Every schema violation and inconsistency of a leaderboard document, as `field: why`.

    `check_overall=False` leaves out overalls that are not Σ weight × category value: a
    published file may be valid yet stale (its overalls from older weights), and the views that
    read it say so model by model instead (`leaderboard.check.review_document`)."""
    validator = Draft7Validator(leaderboard_schema(), format_checker=_FORMATS)
    problems = [
        f"{_field(error.absolute_path)}: {error.message}"
        for error in sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    ]
    if problems:
        return problems
    metadata = document["_metadata"]
    categories: dict[str, Any] = metadata["categories"]
    models: list[dict[str, Any]] = document["models"]
    total = math.fsum(float(meta["weight"]) for meta in categories.values())
    if categories and abs(total - 1.0) > OVERALL_TOLERANCE:
        problems.append(f"_metadata.categories: weights sum to {total:.10g}, not 1")
    if metadata["model_count"] != len(models):
        problems.append(
            f"_metadata.model_count: says {metadata['model_count']}, but models has {len(models)}"
        )
    for index, model in enumerate(models):
        for key in model.get("missing", []):
            if key in model:
                problems.append(f"models[{index}].{key}: listed as missing but has a value")
        expected = recompute_overall(document, model)
        if check_overall and abs(expected - float(model["overall"])) > OVERALL_TOLERANCE:
            problems.append(
                f"models[{index}].overall: {model['overall']!r} is not Σ weight × category "
                f"value = {expected!r}"
            )
        for key in model.get("counts", {}):
            if key not in categories:
                problems.append(f"models[{index}].counts.{key}: not a declared category")
    return problems


def validate_document(document: Any, source: str = "<leaderboard>") -> None:
    """Raise `LeaderboardFileError` unless the document is a valid, self-consistent leaderboard."""
    problems = document_problems(document)
    if problems:
        raise LeaderboardFileError(source, problems)


def write_leaderboard(path: str | Path, document: dict[str, Any]) -> None:
    """Validate, then write atomically (temp file + rename); an invalid document is not written."""
    validate_document(document, str(path))
    write_json_atomic(path, document)


def read_leaderboard(path: str | Path, *, validate: bool = True) -> dict[str, Any]:
    """Read a leaderboard JSON file, validated against the schema unless `validate` is False.

    With `validate=False` only the minimum the reproducibility check needs is required: a
    `models` array of objects with a `model` name and a numeric `overall`.
    """
    source = str(path)
    try:
        document = read_json_file(path)
    except OSError as error:
        raise LeaderboardFileError(source, [f"cannot read: {error.strerror or error}"]) from None
    except UnreadableFileError as error:
        raise LeaderboardFileError(source, [f"line {error.line}: {error.problem}"]) from None
    if validate:
        validate_document(document, source)
        return dict(document)
    problems: list[str] = []
    if not isinstance(document, dict) or not isinstance(document.get("models"), list):
        raise LeaderboardFileError(source, ["models: a leaderboard needs a 'models' array"])
    for index, model in enumerate(document["models"]):
        if not isinstance(model, dict):
            problems.append(f"models[{index}]: not an object")
            continue
        if not isinstance(model.get("model"), str):
            problems.append(f"models[{index}].model: missing or not a string")
        overall = model.get("overall")
        if isinstance(overall, bool) or not isinstance(overall, int | float):
            problems.append(f"models[{index}].overall: missing or not a number")
    if problems:
        raise LeaderboardFileError(source, problems)
    return dict(document)
