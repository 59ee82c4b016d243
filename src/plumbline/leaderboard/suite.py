"""Suites are data: a TOML file names the categories, their weights and which logs feed them.

```toml
[suite]
name = "sa-bench"
title = "SA Bench"

[[category]]
key = "practice_exam"      # the key used in the leaderboard JSON
name = "Practice Exam"
description = "AWS certification-style MCQ questions ..."
weight = 0.34
scoring = "binary"         # binary | rubric
tasks = ["practice_exam"]  # Inspect task names (glob patterns allowed)
scorer = "choice"          # the score name read from the log
```

Weights must sum to 1 (SA Bench's weight normalisation) and keys must be unique. A category may
name several scorers, `scorers = ["cdk_verify", "cdk_verify_local"]`: they are aliases of one
measurement (the same score under the names different task versions give it), and each log
contributes the value of the *first* of them it holds, never a blend: blending a heuristic and a
judge variant of one category is how the reference implementation mixed incomparable numbers.
`scorer = "x"` is short for `scorers = ["x"]`. The file's JSON Schema, generated from `Suite`,
ships as `schemas/leaderboard_suite.schema.json`.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Collection
from fnmatch import fnmatchcase
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from plumbline.core.problems import ProblemsError
from plumbline.records.io import UnreadableFileError, read_text_file

Scoring = Literal["binary", "rubric"]

#: Built-in suites: name -> package holding its `suite.toml`.
BUILTIN_SUITES: dict[str, str] = {"sa-bench": "plumbline.suites.sa_bench"}

# Keys a category may not take: they are the model entry's own fields in the leaderboard JSON.
RESERVED_KEYS = frozenset(
    {
        "model",
        "overall",
        "rank",
        "tie_group",
        "sa_bench_group",
        "missing",
        "errors",
        "intervals",
        "standard_errors",
        "half_widths",
        "counts",
    }
)

WEIGHT_TOLERANCE = 1e-9


class SuiteError(ProblemsError):
    """A suite file that cannot be used, with every problem listed as `source: field: problem`."""


class Category(BaseModel):
    """One leaderboard category: its metadata, its weight, and the logs and scorer that feed it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str = Field(
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        max_length=64,
        description="The category's key in the leaderboard JSON (unique in the suite).",
    )
    name: str = Field(min_length=1, description="Display name.")
    description: str = Field(min_length=1, description="What the category measures.")
    weight: float = Field(
        ge=0, le=1, allow_inf_nan=False, description="Weight in overall (weights sum to 1)."
    )
    scoring: Scoring = Field(
        description="binary: each sample scores 0 or 1; rubric: any value in [0, 1]."
    )
    tasks: tuple[str, ...] = Field(
        min_length=1,
        description="Inspect task names whose logs feed this category (exact or glob pattern).",
    )
    scorers: tuple[str, ...] = Field(
        min_length=1,
        validation_alias=AliasChoices("scorers", "scorer"),
        description=(
            "Score names read from the logs, in order of preference: each log contributes the "
            "first of them it holds (aliases of one measurement, never blended). "
            '`scorer = "x"` is accepted as `scorers = ["x"]`.'
        ),
    )

    task_aliases: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Tasks that are versions of another task on the same dataset "
            '(`{ aws_cdk_synth_local = "aws_cdk_synth" }`): their samples are the same '
            "questions (by sample id) for pairing and de-duplication. Other tasks' questions "
            "are told apart by task name."
        ),
    )

    def question_set(self, task: str) -> str:
        """The name questions of `task` are identified under (its alias target, else itself)."""
        return self.task_aliases.get(task, task)

    @field_validator("scorers", mode="before")
    @classmethod
    def _one_scorer(cls, value: Any) -> Any:
        """`scorer = "x"` (or `scorers = "x"`) is `scorers = ["x"]`."""
        return [value] if isinstance(value, str) else value

    @field_validator("scorers")
    @classmethod
    def _scorers_valid(cls, scorers: tuple[str, ...]) -> tuple[str, ...]:
        if any(not scorer.strip() for scorer in scorers):
            raise ValueError("scorer names must not be empty")
        if len(set(scorers)) != len(scorers):
            raise ValueError("scorer names must be unique")
        return scorers

    @property
    def scorer(self) -> str:
        """The preferred (first) scorer."""
        return self.scorers[0]

    def scorer_in(self, names: Collection[str]) -> str | None:
        """The first of this category's scorers found among `names` (a log's score names)."""
        return next((scorer for scorer in self.scorers if scorer in names), None)

    @field_validator("key")
    @classmethod
    def _not_reserved(cls, key: str) -> str:
        if key in RESERVED_KEYS:
            raise ValueError(f"{key!r} is reserved (a model entry's own field); choose another key")
        return key

    @field_validator("tasks")
    @classmethod
    def _tasks_not_blank(cls, tasks: tuple[str, ...]) -> tuple[str, ...]:
        if any(not task.strip() for task in tasks):
            raise ValueError("task names and patterns must not be empty")
        return tasks

    def matches(self, task: str) -> bool:
        """Whether an Inspect task name feeds this category (exact name or glob pattern).

        An entry that points at a task file (`tasks.py@name`) matches the task's own name,
        which is what Inspect records in the log.
        """
        patterns = (pattern.rpartition("@")[2] for pattern in self.tasks)
        return any(task == pattern or fnmatchcase(task, pattern) for pattern in patterns)


class SuiteInfo(BaseModel):
    """The `[suite]` table: the suite's name (shown in outputs) and optional title/description."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    title: str | None = None
    description: str | None = None


class Suite(BaseModel):
    """A validated suite: categories with unique keys whose weights sum to 1."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    suite: SuiteInfo
    categories: tuple[Category, ...] = Field(
        alias="category", min_length=1, description="The `[[category]]` tables, in order."
    )

    @property
    def name(self) -> str:
        return self.suite.name

    @property
    def title(self) -> str:
        return self.suite.title or self.suite.name

    @property
    def keys(self) -> list[str]:
        return [category.key for category in self.categories]

    @property
    def weights(self) -> dict[str, float]:
        return {category.key: category.weight for category in self.categories}

    def category(self, key: str) -> Category:
        for category in self.categories:
            if category.key == key:
                return category
        raise KeyError(key)

    def categories_for_task(self, task: str) -> list[Category]:
        """Every category a task feeds (usually one)."""
        return [category for category in self.categories if category.matches(task)]

    def scorer_names(self) -> set[str]:
        """Every score name any category reads."""
        return {scorer for category in self.categories for scorer in category.scorers}

    def formula(self) -> str:
        """The overall formula, as SA Bench writes it."""
        terms = " + ".join(f"({c.key} × {c.weight:g})" for c in self.categories)
        return f"overall = {terms}"


SCHEMA_ID = "plumbline/leaderboard_suite.schema.json"


def generated_schema() -> dict[str, Any]:
    """The suite file's JSON Schema, generated from `Suite` (the shipped file equals this).

    The shorthand `scorer = "x"` is folded into `scorers` before validation, so the schema
    states it with a `oneOf`: a category gives `scorers` or `scorer`.
    """
    from plumbline.core.schema_files import model_schema

    schema = model_schema(Suite, schema_id=SCHEMA_ID, title="plumbline leaderboard suite")
    category = schema["$defs"]["Category"]
    category["properties"]["scorer"] = {
        "type": "string",
        "minLength": 1,
        "description": "Shorthand for `scorers = [scorer]`.",
    }
    category["required"] = [name for name in category["required"] if name != "scorers"]
    category["oneOf"] = [{"required": ["scorers"]}, {"required": ["scorer"]}]
    return schema


def suite_schema() -> dict[str, Any]:
    """The suite JSON Schema shipped with the package."""
    import json

    text = resources.files("plumbline").joinpath("schemas/leaderboard_suite.schema.json")
    schema: dict[str, Any] = json.loads(text.read_text(encoding="utf-8"))
    return schema


def _format_location(location: tuple[int | str, ...]) -> str:
    parts: list[str] = []
    for part in location:
        if isinstance(part, int):
            parts[-1] = f"{parts[-1]}[{part}]" if parts else f"[{part}]"
        else:
            parts.append(part)
    return ".".join(parts) or "<suite>"


def parse_suite(data: dict[str, Any], source: str = "<suite>") -> Suite:
    """Validate a suite from its parsed TOML. Raises `SuiteError` listing every problem."""
    try:
        suite = Suite.model_validate(data)
    except ValidationError as error:
        problems = []
        for detail in error.errors():
            location = _format_location(tuple(detail["loc"]))
            message = detail["msg"].removeprefix("Value error, ")
            problems.append(f"{location}: {message}")
        raise SuiteError(source, problems) from None

    problems = []
    seen: dict[str, int] = {}
    for index, category in enumerate(suite.categories):
        if category.key in seen:
            problems.append(
                f"category[{index}].key: {category.key!r} is already used by "
                f"category[{seen[category.key]}]; keys must be unique"
            )
        seen.setdefault(category.key, index)
    total = math.fsum(category.weight for category in suite.categories)
    if abs(total - 1.0) > WEIGHT_TOLERANCE:
        terms = " + ".join(f"{category.weight:g}" for category in suite.categories)
        problems.append(
            f"category.weight: weights sum to {total:.10g} ({terms}); they must sum to 1 "
            "(divide each weight by the sum to normalise)"
        )
    if problems:
        raise SuiteError(source, problems)
    return suite


def load_suite(name_or_path: str | Path) -> Suite:
    """Load a built-in suite by name (`sa-bench`) or a suite TOML file by path."""
    source = str(name_or_path)
    path = Path(name_or_path)
    if isinstance(name_or_path, str) and name_or_path in BUILTIN_SUITES:
        resource = resources.files(BUILTIN_SUITES[name_or_path]).joinpath("suite.toml")
        data = parse_toml(resource.read_text(encoding="utf-8"), source)
    elif path.is_file():
        data = read_suite_toml(path)
    else:
        known = ", ".join(sorted(BUILTIN_SUITES))
        raise SuiteError(
            source, [f"no such suite file, and not a built-in suite (built-in: {known})"]
        )
    return parse_suite(data, source)


def read_suite_toml(path: Path) -> dict[str, Any]:
    """A suite file's TOML as a table. Raises `SuiteError` (`file: line N: problem`) for a file
    that is not UTF-8 or not TOML."""
    source = str(path)
    try:
        text = read_text_file(path)
    except UnreadableFileError as error:
        raise SuiteError(source, [f"line {error.line}: {error.problem}"]) from None
    except OSError as error:
        raise SuiteError(source, [f"cannot read: {error.strerror or error}"]) from None
    return parse_toml(text, source)


def parse_toml(text: str, source: str) -> dict[str, Any]:
    """Parse suite TOML; raises `SuiteError` for text that is not TOML."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SuiteError(source, [f"invalid TOML: {error}"]) from None
    except RecursionError:
        raise SuiteError(source, ["invalid TOML: nested too deeply"]) from None
