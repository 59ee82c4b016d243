"""The three SA Bench datasets: typed records, JSON Schemas and validating loaders.

Each dataset is a JSONL file in `DATA_DIR` with a JSON Schema in `plumbline/schemas/`. A loader
reads every line, validates it against the schema and the pydantic model (which adds the checks a
schema cannot express, such as "the target letters exist among the choices"), checks ids are
unique and that referenced diagram PNGs exist, and raises one
`DatasetError` listing every problem as `file:line: field: problem`. Nothing is silently skipped:
a task whose diagram is missing is an error, not a smaller dataset.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Literal, TypeVar

from jsonschema import Draft202012Validator
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from plumbline.records.io import Located, RecordError, iter_json_values, read_records

DATA_DIR = Path(__file__).resolve().parent / "data"
"""The directory holding the packaged datasets; diagram and solution paths are relative to it."""

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schemas"

PRACTICE_EXAM_FILE = DATA_DIR / "practice_exam.jsonl"
ARCHITECTURE_DESIGN_FILE = DATA_DIR / "architecture_design.jsonl"
CDK_SYNTH_FILE = DATA_DIR / "cdk_synth.jsonl"

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# --------------------------------------------------------------------------------------------
# practice_exam
# --------------------------------------------------------------------------------------------

LETTERS = "ABCDEF"
"""Choice letters, in order; a question has 4–6 choices."""

SELECT_WORDS = {2: "TWO", 3: "THREE", 4: "FOUR", 5: "FIVE"}
"""How a multi-answer stem states the number to select: "(Select TWO.)"."""

ASSOCIATE_DOMAINS = (
    "design-secure-architectures",
    "design-resilient-architectures",
    "design-high-performing-architectures",
    "design-cost-optimized-architectures",
)
PROFESSIONAL_DOMAINS = (
    "design-for-organizational-complexity",
    "design-for-new-solutions",
    "continuous-improvement-for-existing-solutions",
    "accelerate-workload-migration-and-modernization",
)
DOMAINS_BY_LEVEL: dict[str, tuple[str, ...]] = {
    "associate": ASSOCIATE_DOMAINS,
    "professional": PROFESSIONAL_DOMAINS,
}

Level = Literal["associate", "professional"]
Domain = Literal[
    "design-secure-architectures",
    "design-resilient-architectures",
    "design-high-performing-architectures",
    "design-cost-optimized-architectures",
    "design-for-organizational-complexity",
    "design-for-new-solutions",
    "continuous-improvement-for-existing-solutions",
    "accelerate-workload-migration-and-modernization",
]


def _problem(field: str, problem: str) -> ValueError:
    """A cross-field check's failure, named by field; `_load` moves the field into its location
    (pydantic locates model-level errors at the record, not the field)."""
    return ValueError(f"{field}: {problem}")


_FIELD_PROBLEM = re.compile(
    r"^Value error, (?P<field>[A-Za-z_][\w.]*): (?P<problem>.+)$", re.DOTALL
)


def _relocate(error: RecordError) -> RecordError:
    match = _FIELD_PROBLEM.match(error.problem) if error.field == "<record>" else None
    if match is None:
        return error
    return RecordError(error.path, error.line, match["field"], match["problem"])


_LETTERED_CHOICE = re.compile(r"^\(?[A-F][).:]\s")
_SELECT_PHRASE = re.compile(r"\(Select ([A-Z]+)\.\)")


def select_phrase(count: int) -> str:
    """The phrase a multi-answer stem must contain, e.g. `(Select TWO.)` for two answers."""
    return f"(Select {SELECT_WORDS[count]}.)"


class PracticeExamQuestion(BaseModel):
    """One certification-style multiple-choice question.

    `target` is one letter for a single-answer question, or a list of two or more letters for a
    multi-answer question, whose stem then says how many to select ("(Select TWO.)"). Scoring is
    all-or-nothing: the selected set must equal the target set.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^pe-\d{2,3}$")
    question: str = Field(min_length=20)
    choices: list[str] = Field(min_length=4, max_length=6)
    target: str | list[str]
    level: Level
    difficulty: Literal["easy", "medium", "hard"]
    domain: Domain
    aws_services: list[str] = Field(min_length=1)
    rationale: str = Field(min_length=20)

    @property
    def is_multi_answer(self) -> bool:
        return isinstance(self.target, list)

    @property
    def target_letters(self) -> tuple[str, ...]:
        """The correct letters, sorted (one letter for a single-answer question)."""
        letters = [self.target] if isinstance(self.target, str) else self.target
        return tuple(sorted(letters))

    @property
    def correct_choices(self) -> tuple[str, ...]:
        """The text of the correct choices, in letter order."""
        return tuple(self.choices[LETTERS.index(letter)] for letter in self.target_letters)

    @model_validator(mode="after")
    def _check_consistency(self) -> PracticeExamQuestion:
        for index, choice in enumerate(self.choices):
            if not choice.strip():
                raise _problem(f"choices.{index}", "is empty")
            if _LETTERED_CHOICE.match(choice):
                raise _problem(
                    f"choices.{index}", "starts with a letter label; write choices without letters"
                )
        if len(set(self.choices)) != len(self.choices):
            raise _problem("choices", "contains a duplicate")
        valid = LETTERS[: len(self.choices)]
        letters = [self.target] if isinstance(self.target, str) else list(self.target)
        for letter in letters:
            if len(letter) != 1 or letter not in valid:
                raise _problem(
                    "target", f"{letter!r} is not one of the choice letters {', '.join(valid)}"
                )
        if len(set(letters)) != len(letters):
            raise _problem("target", "repeats a letter")
        stated = _SELECT_PHRASE.findall(self.question)
        if isinstance(self.target, list):
            if len(letters) < 2:
                raise _problem("target", "a list needs two or more letters; use a string for one")
            if len(letters) >= len(self.choices):
                raise _problem("target", "a multi-answer target must leave a wrong choice")
            if select_phrase(len(letters)) not in self.question:
                raise _problem(
                    "question",
                    f"the target has {len(letters)} answers but the stem does not say "
                    f"{select_phrase(len(letters))!r}",
                )
        elif stated:
            raise _problem("question", "a single-answer question must not say '(Select ...)'")
        if self.domain not in DOMAINS_BY_LEVEL[self.level]:
            raise _problem(
                "domain",
                f"{self.domain!r} is not a {self.level} domain "
                f"({', '.join(DOMAINS_BY_LEVEL[self.level])})",
            )
        if len(set(self.aws_services)) != len(self.aws_services):
            raise _problem("aws_services", "contains a duplicate")
        return self


# --------------------------------------------------------------------------------------------
# architecture_design
# --------------------------------------------------------------------------------------------

Subtype = Literal[
    "service_identification",
    "data_flow_analysis",
    "security_assessment",
    "scalability_analysis",
    "cost_optimization",
    "requirements_to_architecture",
    "pattern_implementation",
    "problem_solving",
    "architecture_critique",
]
OutputFormat = Literal["mermaid", "plantuml", "json"]

INTERPRETATION_SUBTYPES: tuple[str, ...] = (
    "service_identification",
    "data_flow_analysis",
    "security_assessment",
    "scalability_analysis",
    "cost_optimization",
)
"""Subtypes that interpret a diagram: each task has a diagram PNG that the model is shown."""

CREATION_SUBTYPES: tuple[str, ...] = ("requirements_to_architecture", "pattern_implementation")
"""Subtypes whose answer is a diagram: each task has an `output_format`."""

CRITIQUE_SUBTYPES: tuple[str, ...] = ("problem_solving", "architecture_critique")
"""Subtypes answered in prose; an `output_format` is optional."""

SUBTYPES: tuple[str, ...] = INTERPRETATION_SUBTYPES + CREATION_SUBTYPES + CRITIQUE_SUBTYPES

EXPECTED_KEY_BY_SUBTYPE: dict[str, str] = {
    "service_identification": "services",
    "data_flow_analysis": "flow_steps",
    "security_assessment": "security_components",
    "scalability_analysis": "bottlenecks",
    "cost_optimization": "cost_factors",
    "requirements_to_architecture": "services",
    "pattern_implementation": "services",
    "problem_solving": "issues",
    "architecture_critique": "issues",
}
"""The `expected` key each subtype must fill (other keys may be present as well)."""


class _Element(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_min_length=1)


class ExpectedService(_Element):
    name: str
    role: str


class ExpectedFlowStep(_Element):
    """One hop of a data flow; serialised with the key `from` (a Python keyword)."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        str_min_length=1,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )

    from_: str = Field(alias="from")
    to: str
    description: str


class ExpectedSecurityComponent(_Element):
    name: str
    purpose: str


class ExpectedBottleneck(_Element):
    component: str
    issue: str
    mitigation: str


class ExpectedCostFactor(_Element):
    component: str
    driver: str
    optimization: str


class ExpectedIssue(_Element):
    issue: str
    recommendation: str


class ExpectedElements(BaseModel):
    """The elements a complete answer names; which keys are filled depends on the subtype."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    services: list[ExpectedService] = Field(default_factory=list)
    flow_steps: list[ExpectedFlowStep] = Field(default_factory=list)
    security_components: list[ExpectedSecurityComponent] = Field(default_factory=list)
    bottlenecks: list[ExpectedBottleneck] = Field(default_factory=list)
    cost_factors: list[ExpectedCostFactor] = Field(default_factory=list)
    issues: list[ExpectedIssue] = Field(default_factory=list)
    key_concepts: list[str] = Field(default_factory=list)


class ArchitectureTask(BaseModel):
    """One architecture design task (diagram interpretation, creation or critique).

    Interpretation subtypes carry a `diagram` PNG (relative to the data directory) generated from
    `diagram_source`; creation subtypes carry the `output_format` the answer's diagram must use
    (the question text itself does not state it: the Inspect task adds the instruction).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^arch-\d{2,3}$")
    subtype: Subtype
    question: str = Field(min_length=20)
    diagram: str | None = Field(default=None, pattern=r"^diagrams/[A-Za-z0-9_.-]+\.png$")
    diagram_source: str | None = Field(
        default=None, pattern=r"^diagrams/[A-Za-z0-9_.-]+\.(dot|gv|py|mmd|puml)$"
    )
    output_format: OutputFormat | None = None
    difficulty: Level
    expected: ExpectedElements
    reference_answer: str = Field(min_length=50)

    _data_dir: Path = PrivateAttr(default=DATA_DIR)

    @property
    def is_interpretation(self) -> bool:
        return self.subtype in INTERPRETATION_SUBTYPES

    @property
    def diagram_path(self) -> Path | None:
        """Absolute path of the diagram PNG (resolved against the file the task was loaded from)."""
        return None if self.diagram is None else self._data_dir / self.diagram

    def metadata(self) -> dict[str, Any]:
        """The sample metadata the scorers read: id, subtype, expected, output_format, ..."""
        return {
            "id": self.id,
            "subtype": self.subtype,
            "expected": self.expected.model_dump(mode="json", by_alias=True),
            "output_format": self.output_format,
            "difficulty": self.difficulty,
            "question": self.question,
        }

    @model_validator(mode="after")
    def _check_subtype(self) -> ArchitectureTask:
        if self.subtype in INTERPRETATION_SUBTYPES:
            for field in ("diagram", "diagram_source"):
                if getattr(self, field) is None:
                    raise _problem(field, f"{self.subtype} is an interpretation subtype: set it")
            if self.output_format is not None:
                raise _problem("output_format", "an interpretation task must not set it")
        else:
            if self.diagram is not None:
                raise _problem("diagram", f"{self.subtype} tasks take no diagram; set it to null")
            if self.subtype in CREATION_SUBTYPES and self.output_format is None:
                raise _problem(
                    "output_format",
                    f"{self.subtype} is a creation subtype: set mermaid, plantuml or json",
                )
        key = EXPECTED_KEY_BY_SUBTYPE[self.subtype]
        if not getattr(self.expected, key):
            raise _problem(f"expected.{key}", f"{self.subtype} tasks need at least one element")
        return self


# --------------------------------------------------------------------------------------------
# cdk_synth
# --------------------------------------------------------------------------------------------

CDK_PROMPT_ENDING = "Emit a complete CDK app that can be synthesized."


class CdkPrompt(BaseModel):
    """One CDK synthesis prompt with a reference solution: the source of a complete Python CDK
    app that synthesizes, kept inline as HumanEval keeps its canonical solutions."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^cdk-\d{2,3}$")
    level: Literal["beginner", "intermediate", "advanced"]
    prompt: str = Field(min_length=20)
    solution: str = Field(min_length=1)
    services: list[str] = Field(min_length=1)

    @model_validator(mode="after")
    def _check_prompt(self) -> CdkPrompt:
        if not self.prompt.rstrip().endswith(CDK_PROMPT_ENDING):
            raise _problem("prompt", f"must end with {CDK_PROMPT_ENDING!r}")
        return self

    @model_validator(mode="after")
    def _check_solution(self) -> CdkPrompt:
        if "\n" not in self.solution.strip() and self.solution.strip().endswith(".py"):
            raise _problem(
                "solution", f"holds the app's source, not a path: put the text of {self.solution}"
            )
        try:
            tree = ast.parse(self.solution)
        except SyntaxError as error:
            where = "" if error.lineno is None else f" (solution line {error.lineno})"
            raise _problem("solution", f"not Python source: {error.msg}{where}") from None
        last = tree.body[-1] if tree.body else None
        if not (isinstance(last, ast.Expr) and ast.unparse(last).endswith(".synth()")):
            raise _problem(
                "solution", "must be a complete CDK app whose last statement is `app.synth()`"
            )
        return self


# --------------------------------------------------------------------------------------------
# loading
# --------------------------------------------------------------------------------------------


class DatasetError(ValueError):
    """A dataset file with invalid records; `errors` lists each as `file:line: field: problem`."""

    def __init__(self, path: Path, errors: Sequence[RecordError]) -> None:
        self.path = path
        self.errors = list(errors)
        listing = "\n".join(str(error) for error in self.errors)
        super().__init__(f"{len(self.errors)} problem(s) in dataset {path}:\n{listing}")


R = TypeVar("R", PracticeExamQuestion, ArchitectureTask, CdkPrompt)


@cache
def schema_validator(name: str) -> Draft202012Validator:
    """The JSON Schema validator for a dataset (`practice_exam`, `architecture_design`, ...)."""
    schema = json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _schema_errors(name: str, item: Located) -> list[RecordError]:
    problems = []
    for error in schema_validator(name).iter_errors(item.value):
        parts = [str(part) for part in error.absolute_path]
        if error.validator == "required" and isinstance(error.instance, dict):
            missing = [key for key in error.validator_value if key not in error.instance]
            parts.extend(missing[:1])
        field = ".".join(parts) or "<record>"
        problems.append(RecordError(item.path, item.line, field, error.message))
    return problems


def _load(
    path: str | Path | None,
    default: Path,
    schema_name: str,
    model: type[R],
    check_files: Callable[[R, Located], list[RecordError]] | None = None,
) -> list[R]:
    source = Path(path) if path is not None else default
    if not source.is_file():
        raise FileNotFoundError(f"dataset file not found: {source}")
    errors: list[RecordError] = []
    schema_failed: set[int] = set()
    for item in iter_json_values(source):
        if isinstance(item, Located) and isinstance(item.value, dict):
            found = _schema_errors(schema_name, item)
            if found:
                schema_failed.add(item.line)
                errors.extend(found)
    result = read_records([source], model)
    # The schema and the model often agree on a bad field: report the schema's wording once,
    # and the model's only for what the schema cannot express.
    errors.extend(_relocate(error) for error in result.errors if error.line not in schema_failed)
    records: list[R] = []
    first_line: dict[str, int] = {}
    for record, located in zip(result.records, result.locations, strict=True):
        if located.line in schema_failed:
            continue
        if record.id in first_line:
            errors.append(
                RecordError(
                    located.path,
                    located.line,
                    "id",
                    f"duplicate id {record.id!r} (first at line {first_line[record.id]})",
                )
            )
            continue
        first_line[record.id] = located.line
        if isinstance(record, ArchitectureTask):
            record._data_dir = source.resolve().parent
        if check_files is not None:
            errors.extend(check_files(record, located))
        records.append(record)
    if not records and not errors:
        errors.append(RecordError(str(source), 1, "<file>", "the dataset has no records"))
    if errors:
        errors.sort(key=lambda error: error.line)
        raise DatasetError(source, errors)
    return records


def _check_diagram(task: ArchitectureTask, located: Located) -> list[RecordError]:
    diagram = task.diagram_path
    if diagram is None:
        return []
    if not diagram.is_file():
        return [
            RecordError(
                located.path,
                located.line,
                "diagram",
                f"diagram image not found: {diagram} (generate it with scripts/make_diagrams.py)",
            )
        ]
    with diagram.open("rb") as handle:
        if handle.read(len(PNG_SIGNATURE)) != PNG_SIGNATURE:
            return [RecordError(located.path, located.line, "diagram", f"not a PNG: {diagram}")]
    return []


def load_practice_exam(path: str | Path | None = None) -> list[PracticeExamQuestion]:
    """Load and validate the practice exam questions (default: the packaged dataset).

    Raises `DatasetError` (a `ValueError`) listing every invalid record as `file:line: field:
    problem`, and `FileNotFoundError` when the file does not exist.
    """
    return _load(path, PRACTICE_EXAM_FILE, "practice_exam", PracticeExamQuestion)


def load_architecture_design(path: str | Path | None = None) -> list[ArchitectureTask]:
    """Load and validate the architecture design tasks (default: the packaged dataset).

    Diagram paths resolve against the directory of the loaded file; a task whose diagram PNG is
    missing (or is not a PNG) is an error, never silently skipped.
    """
    return _load(
        path, ARCHITECTURE_DESIGN_FILE, "architecture_design", ArchitectureTask, _check_diagram
    )


def load_cdk_synth(path: str | Path | None = None) -> list[CdkPrompt]:
    """Load and validate the CDK synthesis prompts (default: the packaged dataset)."""
    return _load(path, CDK_SYNTH_FILE, "cdk_synth", CdkPrompt)
