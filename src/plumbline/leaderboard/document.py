"""The leaderboard JSON file: validation, the rules a schema cannot say, atomic writing and reading.

A document is parsed into `LeaderboardDocument` (older versions upgraded first, see
`leaderboard.upgrade.upgrade_document`); its JSON Schema, `schemas/leaderboard.schema.json`, is
generated from that model. Beside what the model checks, a valid leaderboard obeys rules a
schema cannot say:

- every model's `overall` equals Σ weight × category value (a missing category counting 0);
- the category weights sum to 1;
- `_metadata.model_count` is the number of model rows;
- a category listed in a row's `missing` has no value, and `counts` names declared categories;
- `tie_groups` lists every row in the group its `tie_group` says.

The reference implementation published overall values from an old weighting under metadata that
claimed the new one; a file that disagrees with itself is never written.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal, overload

from pydantic import ValidationError

from plumbline.core.problems import ProblemsError
from plumbline.core.schema_files import model_schema
from plumbline.leaderboard.result import LeaderboardDocument
from plumbline.leaderboard.upgrade import upgrade_document
from plumbline.records.io import UnreadableFileError, read_json_file, write_json_atomic

OVERALL_TOLERANCE = 1e-9


class LeaderboardFileError(ProblemsError):
    """A leaderboard document that fails validation, with every problem as `path: field: why`."""


def generated_schema() -> dict[str, Any]:
    """The leaderboard document's JSON Schema, as shipped (`schemas/leaderboard.schema.json`)."""
    schema = model_schema(
        LeaderboardDocument,
        schema_id="https://plumbline.dev/schemas/leaderboard/2/leaderboard.schema.json",
        title="plumbline leaderboard",
    )
    schema["description"] = (
        "The SA Bench leaderboard JSON with plumbline's additions: per-model intervals, standard "
        "errors, half-widths and counts, tie groups, adjacent pairs and input problems. A missing "
        "category is absent from the model row (it counts 0 in overall) and listed in its "
        "`missing`. Not expressible here: overall = Σ weight × category value, weights sum to 1, "
        "model_count = number of rows."
    )
    return schema


def leaderboard_schema() -> dict[str, Any]:
    """The leaderboard document's JSON Schema (2020-12, generated from `LeaderboardDocument`)."""
    return generated_schema()


def _field(location: tuple[int | str, ...]) -> str:
    parts: list[str] = []
    for part in location:
        if isinstance(part, int):
            parts[-1:] = [f"{parts[-1]}[{part}]" if parts else f"[{part}]"]
        else:
            parts.append(str(part))
    return ".".join(parts) or "<document>"


def parse_document(document: Any) -> tuple[LeaderboardDocument | None, list[str]]:
    """The document as `LeaderboardDocument` (older versions upgraded), or every problem as
    `field: why`."""
    try:
        return LeaderboardDocument.model_validate(upgrade_document(document)), []
    except ValidationError as error:
        problems = [
            f"{_field(tuple(e['loc']))}: {e['msg']}"
            for e in sorted(error.errors(), key=lambda e: [str(p) for p in e["loc"]])
        ]
        return None, problems


def as_document(
    document: LeaderboardDocument | Any, source: str = "<leaderboard>"
) -> LeaderboardDocument:
    """The typed document: a JSON document is parsed (and upgraded when older) without the
    overall check (a stale published file is shown, and said to be stale, by its views);
    `LeaderboardFileError` when it is not a leaderboard."""
    if isinstance(document, LeaderboardDocument):
        return document
    parsed, problems = parse_document(document)
    if parsed is None:
        raise LeaderboardFileError(source, problems)
    return parsed


def recompute_overall(document: LeaderboardDocument, model: Any) -> float:
    """Σ weight × category value over the document's categories, a missing category counting 0.

    `model` is a row of `document.models`."""
    return math.fsum(
        meta.weight * (model.score(key) or 0.0) for key, meta in document.categories.items()
    )


def consistency_problems(document: LeaderboardDocument, *, check_overall: bool = True) -> list[str]:
    """The rules a schema cannot say, broken by a parsed document, as `field: why`."""
    problems: list[str] = []
    categories = document.categories
    total = math.fsum(meta.weight for meta in categories.values())
    if categories and abs(total - 1.0) > OVERALL_TOLERANCE:
        problems.append(f"_metadata.categories: weights sum to {total:.10g}, not 1")
    count = document.metadata.model_count
    if count != len(document.models):
        problems.append(
            f"_metadata.model_count: says {count}, but models has {len(document.models)}"
        )
    for index, model in enumerate(document.models):
        for key in model.missing or []:
            if model.score(key) is not None:
                problems.append(f"models[{index}].{key}: listed as missing but has a value")
        expected = recompute_overall(document, model)
        if check_overall and abs(expected - model.overall) > OVERALL_TOLERANCE:
            problems.append(
                f"models[{index}].overall: {model.overall!r} is not Σ weight × category "
                f"value = {expected!r}"
            )
        for key in model.counts or {}:
            if key not in categories:
                problems.append(f"models[{index}].counts.{key}: not a declared category")
    problems += _tie_group_problems(document)
    return problems


def _tie_group_problems(document: LeaderboardDocument) -> list[str]:
    """`tie_groups` lists each row, in the group its `tie_group` says, with the right size."""
    if not document.tie_groups:
        return []
    problems: list[str] = []
    listed = {name: group.group for group in document.tie_groups for name in group.models}
    for index, group in enumerate(document.tie_groups):
        if group.size != len(group.models):
            problems.append(
                f"tie_groups[{index}].size: says {group.size}, but lists {len(group.models)}"
            )
    for index, model in enumerate(document.models):
        if model.tie_group is not None and listed.get(model.model) != model.tie_group:
            problems.append(
                f"models[{index}].tie_group: {model.tie_group}, but tie_groups lists "
                f"{model.model!r} in {listed.get(model.model)}"
            )
    return problems


def document_problems(document: Any, *, check_overall: bool = True) -> list[str]:
    """Every schema violation and inconsistency of a leaderboard document, as `field: why`.

    `check_overall=False` leaves out overalls that are not Σ weight × category value: a
    published file may be valid yet stale (its overalls from older weights), and the views that
    read it say so model by model instead (`leaderboard.check.review_document`)."""
    parsed, problems = parse_document(document)
    if parsed is None:
        return problems
    return consistency_problems(parsed, check_overall=check_overall)


def validate_document(document: Any, source: str = "<leaderboard>") -> LeaderboardDocument:
    """The parsed document; `LeaderboardFileError` unless it is a valid, self-consistent
    leaderboard."""
    parsed, problems = parse_document(document)
    if parsed is not None:
        problems = consistency_problems(parsed)
    if parsed is None or problems:
        raise LeaderboardFileError(source, problems)
    return parsed


def write_leaderboard(path: str | Path, document: LeaderboardDocument | dict[str, Any]) -> None:
    """Validate, then write atomically (temp file + rename); an invalid document is not written."""
    data = document.to_json() if isinstance(document, LeaderboardDocument) else document
    validate_document(data, str(path))
    write_json_atomic(path, data)


def _load(path: str | Path) -> Any:
    source = str(path)
    try:
        return read_json_file(path)
    except OSError as error:
        raise LeaderboardFileError(source, [f"cannot read: {error.strerror or error}"]) from None
    except UnreadableFileError as error:
        raise LeaderboardFileError(source, [f"line {error.line}: {error.problem}"]) from None


@overload
def read_leaderboard(
    path: str | Path, *, validate: Literal[True] = True
) -> LeaderboardDocument: ...


@overload
def read_leaderboard(path: str | Path, *, validate: Literal[False]) -> Any: ...


def read_leaderboard(path: str | Path, *, validate: bool = True) -> Any:
    """Read a leaderboard JSON file as a validated `LeaderboardDocument` (older versions
    upgraded), or with `validate=False` as the JSON value, requiring only what the
    reproducibility check needs: a `models` array of objects with a `model` name and a numeric
    `overall`.
    """
    source = str(path)
    document = _load(path)
    if validate:
        return validate_document(document, source)
    if not isinstance(document, dict) or not isinstance(document.get("models"), list):
        raise LeaderboardFileError(source, ["models: a leaderboard needs a 'models' array"])
    problems: list[str] = []
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
    return document
