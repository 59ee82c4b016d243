"""The SA Bench datasets: counts, invariants, and loaders that reject bad records by location."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from plumbline.suites.sa_bench.datasets import (
    ASSOCIATE_DOMAINS,
    CDK_PROMPT_ENDING,
    CDK_SYNTH_FILE,
    CREATION_SUBTYPES,
    DATA_DIR,
    EXPECTED_KEY_BY_SUBTYPE,
    INTERPRETATION_SUBTYPES,
    LETTERS,
    PROFESSIONAL_DOMAINS,
    SCHEMA_DIR,
    SUBTYPES,
    ArchitectureTask,
    DatasetError,
    PracticeExamQuestion,
    load_architecture_design,
    load_cdk_synth,
    load_practice_exam,
    select_phrase,
)

REPO = Path(__file__).resolve().parents[2]
LOCATED = re.compile(r"^(?P<file>.+):(?P<line>\d+): (?P<field>[^:]+): (?P<problem>.+)$")


@pytest.fixture(scope="module")
def questions() -> list[PracticeExamQuestion]:
    return load_practice_exam()


@pytest.fixture(scope="module")
def tasks() -> list[ArchitectureTask]:
    return load_architecture_design()


# ------------------------------------------------------------------------------ practice_exam


def test_practice_exam_counts(questions: list[PracticeExamQuestion]) -> None:
    assert len(questions) == 50
    assert Counter(question.level for question in questions) == {
        "associate": 25,
        "professional": 25,
    }
    assert sum(question.is_multi_answer for question in questions) >= 15
    assert all(4 <= len(question.choices) <= 6 for question in questions)
    assert {len(question.choices) for question in questions} >= {4, 5, 6}
    assert {question.difficulty for question in questions} == {"easy", "medium", "hard"}
    for level in ("associate", "professional"):
        assert any(q.is_multi_answer for q in questions if q.level == level)


def test_practice_exam_covers_every_domain(questions: list[PracticeExamQuestion]) -> None:
    domains = Counter(question.domain for question in questions)
    assert set(domains) == set(ASSOCIATE_DOMAINS) | set(PROFESSIONAL_DOMAINS)
    assert min(domains.values()) >= 4


def test_practice_exam_correct_positions_vary(questions: list[PracticeExamQuestion]) -> None:
    single = Counter(q.target_letters[0] for q in questions if not q.is_multi_answer)
    # No letter is a safe guess: every one of A–D is the key several times, none dominates.
    assert all(single[letter] >= 4 for letter in "ABCD"), single
    assert max(single.values()) <= 0.35 * sum(single.values()), single
    multi = Counter(letter for q in questions if q.is_multi_answer for letter in q.target_letters)
    assert all(multi[letter] >= 3 for letter in "ABCDE"), multi


def test_practice_exam_correct_choice_is_not_the_longest_every_time(
    questions: list[PracticeExamQuestion],
) -> None:
    longest = 0
    for question in questions:
        if not question.is_multi_answer:
            lengths = [len(choice) for choice in question.choices]
            longest += len(question.correct_choices[0]) == max(lengths)
    single = sum(not question.is_multi_answer for question in questions)
    assert longest <= 0.6 * single, (longest, single)


def test_practice_exam_targets_are_letters_of_existing_choices(
    questions: list[PracticeExamQuestion],
) -> None:
    for question in questions:
        valid = LETTERS[: len(question.choices)]
        assert question.target_letters, question.id
        assert all(letter in valid for letter in question.target_letters), question.id
        assert len(question.correct_choices) == len(question.target_letters)


def test_practice_exam_multi_answer_stems_state_the_count(
    questions: list[PracticeExamQuestion],
) -> None:
    for question in questions:
        if question.is_multi_answer:
            assert select_phrase(len(question.target_letters)) in question.question, question.id
        else:
            assert "(Select" not in question.question, question.id


def test_practice_exam_ids_are_unique_and_sequential(
    questions: list[PracticeExamQuestion],
) -> None:
    ids = [question.id for question in questions]
    assert len(set(ids)) == len(ids)
    assert ids == [f"pe-{index:02d}" for index in range(1, len(ids) + 1)]


def test_practice_exam_rationales_are_one_or_two_sentences(
    questions: list[PracticeExamQuestion],
) -> None:
    for question in questions:
        sentences = re.findall(r"[.!?](?=\s|$)", question.rationale.strip())
        assert 1 <= len(sentences) <= 2, (question.id, question.rationale)


def test_practice_exam_is_safe_to_shuffle(questions: list[PracticeExamQuestion]) -> None:
    # The Inspect task shuffles choices, so nothing may refer to a choice by letter or position.
    above = re.compile(r"\b(all|none|both) of the above\b", re.IGNORECASE)
    lettered = re.compile(r"\b([Oo]ption|[Cc]hoice|[Aa]nswer)s? [A-F]\b")
    for question in questions:
        for text in (question.question, question.rationale, *question.choices):
            assert not above.search(text), (question.id, text)
            assert not lettered.search(text), (question.id, text)


def _word_set(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def test_practice_exam_has_no_near_duplicate_questions(
    questions: list[PracticeExamQuestion],
) -> None:
    stems = [(question.id, _word_set(question.question)) for question in questions]
    for index, (first_id, first) in enumerate(stems):
        for second_id, second in stems[index + 1 :]:
            similarity = len(first & second) / len(first | second)
            assert similarity < 0.5, (first_id, second_id, round(similarity, 2))


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("practice_exam", DATA_DIR / "practice_exam.jsonl"),
        ("architecture_design", DATA_DIR / "architecture_design.jsonl"),
    ],
)
def test_packaged_records_satisfy_the_json_schema_on_its_own(name: str, path: Path) -> None:
    schema = json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines
    for number, line in enumerate(lines, start=1):
        errors = [error.message for error in validator.iter_errors(json.loads(line))]
        assert not errors, (path.name, number, errors)


def test_json_schema_rejects_what_the_model_rejects() -> None:
    schema = json.loads((SCHEMA_DIR / "architecture_design.schema.json").read_text("utf-8"))
    validator = Draft202012Validator(schema)
    record = json.loads((DATA_DIR / "architecture_design.jsonl").read_text("utf-8").splitlines()[0])
    assert validator.is_valid(record)
    assert not validator.is_valid(dict(record, diagram=None))
    assert not validator.is_valid(dict(record, output_format="mermaid"))
    creation = dict(record, subtype="pattern_implementation", diagram=None, output_format=None)
    assert not validator.is_valid(creation)
    assert validator.is_valid(dict(creation, output_format="json"))
    assert not validator.is_valid(dict(record, extra_field=1))


# ------------------------------------------------------------------------------ architecture


def test_architecture_counts(tasks: list[ArchitectureTask]) -> None:
    assert len(tasks) == 28
    subtypes = Counter(task.subtype for task in tasks)
    assert set(subtypes) == set(SUBTYPES)
    assert all(3 <= count <= 4 for count in subtypes.values()), subtypes
    assert sum(task.is_interpretation for task in tasks) == 15
    assert {task.output_format for task in tasks if task.subtype in CREATION_SUBTYPES} == {
        "mermaid",
        "plantuml",
        "json",
    }
    assert {task.difficulty for task in tasks} == {"associate", "professional"}


def test_architecture_ids_are_unique_and_sequential(tasks: list[ArchitectureTask]) -> None:
    assert [task.id for task in tasks] == [f"arch-{index:02d}" for index in range(1, 29)]


def test_architecture_subtype_requirements(tasks: list[ArchitectureTask]) -> None:
    for task in tasks:
        key = EXPECTED_KEY_BY_SUBTYPE[task.subtype]
        assert getattr(task.expected, key), task.id
        if task.subtype in INTERPRETATION_SUBTYPES:
            assert task.diagram_path is not None and task.diagram_path.is_file(), task.id
            assert task.output_format is None
        else:
            assert task.diagram is None
        if task.subtype in CREATION_SUBTYPES:
            assert task.output_format in ("mermaid", "plantuml", "json"), task.id


def test_question_texts_fit_how_the_task_presents_them(tasks: list[ArchitectureTask]) -> None:
    for task in tasks:
        text = task.question.lower()
        if task.is_interpretation:
            # The model sees the PNG beside the text, so the text must point at it.
            assert "diagram" in text, task.id
        # The Inspect task appends the output-format instruction; the question must not
        # state (or contradict) it.
        assert not re.search(r"\b(mermaid|plantuml|json)\b", text), task.id


def test_every_diagram_exists_is_small_and_has_its_source(tasks: list[ArchitectureTask]) -> None:
    for task in tasks:
        if task.diagram is None:
            continue
        assert task.diagram_source is not None
        png = DATA_DIR / task.diagram
        source = DATA_DIR / task.diagram_source
        assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n"), task.id
        assert png.stat().st_size < 150_000, (task.id, png.stat().st_size)
        assert source.is_file(), task.id
        assert png.stem == source.stem == task.id


def test_every_diagram_source_is_used(tasks: list[ArchitectureTask]) -> None:
    used = {task.diagram_source for task in tasks if task.diagram_source}
    on_disk = {f"diagrams/{path.name}" for path in (DATA_DIR / "diagrams").glob("*.dot")}
    assert on_disk == used


def test_make_diagrams_check_passes() -> None:
    completed = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "make_diagrams.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "0 problem(s)" in completed.stdout


def _prose(text: str) -> str:
    """The answer without its fenced diagram block (or a raw JSON document)."""
    return re.sub(r"```.*?```", " ", text, flags=re.DOTALL)


def test_reference_answers_are_120_to_300_words_of_prose(tasks: list[ArchitectureTask]) -> None:
    for task in tasks:
        words = len(_prose(task.reference_answer).split())
        assert 120 <= words <= 300, (task.id, words)


def _named_elements(task: ArchitectureTask) -> list[str]:
    expected = task.expected
    return (
        [service.name for service in expected.services]
        + [step.from_ for step in expected.flow_steps]
        + [step.to for step in expected.flow_steps]
        + [component.name for component in expected.security_components]
        + [bottleneck.component for bottleneck in expected.bottlenecks]
        + [factor.component for factor in expected.cost_factors]
        + list(expected.key_concepts)
    )


def test_reference_answers_name_every_expected_element(tasks: list[ArchitectureTask]) -> None:
    for task in tasks:
        answer = task.reference_answer.lower()
        for name in _named_elements(task):
            assert name.lower() in answer, (task.id, name)


def _fenced(text: str, tag: str) -> str | None:
    match = re.search(rf"```{tag}[ \t]*\r?\n(.*?)```", text, flags=re.DOTALL)
    return match.group(1) if match else None


def _valid_mermaid(text: str) -> bool:
    body = _fenced(text, "mermaid")
    if body is None:
        return False
    lines = [line.strip() for line in body.strip().splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("%%")]
    if not lines or not re.match(r"^(flowchart|graph)\s+(TB|TD|BT|LR|RL)\b", lines[0]):
        return False
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack: list[str] = []
    for char in body:
        if char in pairs:
            stack.append(pairs[char])
        elif char in pairs.values() and (not stack or stack.pop() != char):
            return False
    nodes = set(re.findall(r"^\s*([A-Za-z][\w]*)\s*[\[({]", body, flags=re.MULTILINE))
    return not stack and "-->" in body and len(nodes) >= 2


def _valid_plantuml(text: str) -> bool:
    body = _fenced(text, "plantuml")
    if body is None:
        return False
    body = body.strip()
    return (
        body.startswith("@startuml")
        and body.endswith("@enduml")
        and re.search(r"-+>", body) is not None
        and re.search(r"^\s*(rectangle|node|component|database|queue|actor|cloud)\b", body, re.M)
        is not None
    )


def _valid_json_architecture(text: str) -> bool:
    body = _fenced(text, "json")
    if body is None:
        return False
    document: Any = json.loads(body)
    architecture = document["architecture"]
    components = architecture["components"]
    ids = {component["id"] for component in components}
    return (
        len(components) >= 2
        and all({"id", "type"} <= set(component) for component in components)
        and len(architecture["relationships"]) >= 1
        and all(
            relation["from"] in ids and relation["to"] in ids
            for relation in architecture["relationships"]
        )
    )


def test_creation_reference_answers_contain_a_valid_diagram(tasks: list[ArchitectureTask]) -> None:
    validators = {
        "mermaid": _valid_mermaid,
        "plantuml": _valid_plantuml,
        "json": _valid_json_architecture,
    }
    for task in tasks:
        if task.output_format is not None:
            assert validators[task.output_format](task.reference_answer), task.id


@pytest.mark.slow
def test_reference_answers_earn_at_least_0_8_from_the_heuristic_scorer(
    tasks: list[ArchitectureTask],
) -> None:
    from plumbline.suites.sa_bench.scorers.architecture import score_architecture

    for task in tasks:
        score = score_architecture(task.reference_answer, task.metadata(), task.reference_answer)
        assert score.value >= 0.8, (task.id, score.dimensions())


def test_architecture_metadata_uses_the_agreed_keys(tasks: list[ArchitectureTask]) -> None:
    for task in tasks:
        metadata = task.metadata()
        assert set(metadata) == {
            "id",
            "subtype",
            "expected",
            "output_format",
            "difficulty",
            "question",
        }
        json.dumps(metadata)
        for step in metadata["expected"]["flow_steps"]:
            assert set(step) == {"from", "to", "description"}


# ------------------------------------------------------------------------------ loaders


def _write_lines(path: Path, records: list[Any]) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records),
        encoding="utf-8",
    )
    return path


def _question(**changes: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": "pe-01",
        "question": "Which service stores objects durably at any scale?",
        "choices": ["Amazon S3", "Amazon EC2", "AWS Lambda", "Amazon VPC"],
        "target": "A",
        "level": "associate",
        "difficulty": "easy",
        "domain": "design-resilient-architectures",
        "aws_services": ["Amazon S3"],
        "rationale": "Amazon S3 is object storage designed for eleven nines of durability.",
    }
    record.update(changes)
    return record


def _problems(error: DatasetError) -> list[tuple[str, int, str, str]]:
    located = []
    for line in str(error).splitlines()[1:]:
        match = LOCATED.match(line)
        assert match, line
        located.append(
            (match["file"], int(match["line"]), match["field"], match["problem"]),
        )
    return located


def test_practice_exam_loader_reports_file_line_field_problem(tmp_path: Path) -> None:
    path = _write_lines(
        tmp_path / "exam.jsonl",
        [
            _question(),
            _question(id="pe-02", target="E"),
            _question(id="pe-03", level="expert"),
            "{not json",
            _question(id="pe-05", target=["A", "B"]),
            _question(id="pe-01"),
            {key: value for key, value in _question(id="pe-07").items() if key != "rationale"},
        ],
    )
    with pytest.raises(DatasetError) as raised:
        load_practice_exam(path)
    assert isinstance(raised.value, ValueError)
    problems = _problems(raised.value)
    assert {(file, line, field) for file, line, field, _ in problems} == {
        (str(path), 2, "target"),
        (str(path), 3, "level"),
        (str(path), 4, "<json>"),
        (str(path), 5, "question"),
        (str(path), 6, "id"),
        (str(path), 7, "rationale"),
    }
    by_line = {line: problem for _, line, _, problem in problems}
    assert "(Select TWO.)" in by_line[5]
    assert "duplicate id 'pe-01' (first at line 1)" in by_line[6]
    assert "'E'" in by_line[2]


def test_practice_exam_loader_accepts_a_valid_multi_answer_record(tmp_path: Path) -> None:
    path = _write_lines(
        tmp_path / "exam.jsonl",
        [_question(question="Which two are AWS services? (Select TWO.)", target=["C", "A"])],
    )
    (question,) = load_practice_exam(path)
    assert question.is_multi_answer
    assert question.target_letters == ("A", "C")
    assert question.correct_choices == ("Amazon S3", "AWS Lambda")


def test_practice_exam_model_rejects_lettered_choices_and_wrong_domain(tmp_path: Path) -> None:
    path = _write_lines(
        tmp_path / "exam.jsonl",
        [
            _question(choices=["A) Amazon S3", "Amazon EC2", "AWS Lambda", "Amazon VPC"]),
            _question(id="pe-02", domain="design-for-new-solutions"),
        ],
    )
    with pytest.raises(DatasetError) as raised:
        load_practice_exam(path)
    problems = {line: problem for _, line, _, problem in _problems(raised.value)}
    assert "letter label" in problems[1]
    assert "not a associate domain" in problems[2]


def _task(tmp_path: Path, **changes: Any) -> dict[str, Any]:
    record = json.loads(
        (DATA_DIR / "architecture_design.jsonl").read_text(encoding="utf-8").splitlines()[0]
    )
    record.update(changes)
    return record


def test_architecture_loader_errors_when_a_diagram_is_missing(tmp_path: Path) -> None:
    record = _task(tmp_path)
    assert record["subtype"] in INTERPRETATION_SUBTYPES
    path = _write_lines(tmp_path / "arch.jsonl", [record])
    with pytest.raises(DatasetError) as raised:
        load_architecture_design(path)
    ((file, line, field, problem),) = _problems(raised.value)
    assert (file, line, field) == (str(path), 1, "diagram")
    assert "diagram image not found" in problem
    assert str(tmp_path / record["diagram"]) in problem


def test_architecture_loader_resolves_diagrams_next_to_the_file(tmp_path: Path) -> None:
    record = _task(tmp_path)
    (tmp_path / "diagrams").mkdir()
    (tmp_path / record["diagram"]).write_bytes((DATA_DIR / record["diagram"]).read_bytes())
    path = _write_lines(tmp_path / "arch.jsonl", [record])
    (task,) = load_architecture_design(path)
    assert task.diagram_path == tmp_path / record["diagram"]
    (tmp_path / record["diagram"]).write_text("not an image", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"arch.jsonl:1: diagram: not a PNG"):
        load_architecture_design(path)


def test_architecture_loader_rejects_subtype_mismatches(tmp_path: Path) -> None:
    base = _task(tmp_path)
    records = [
        dict(base, id="arch-01", diagram=None),
        dict(base, id="arch-02", subtype="pattern_implementation", diagram=None),
        dict(base, id="arch-03", subtype="architecture_critique", diagram=None),
        dict(base, id="arch-04", expected={"services": [{"name": "Amazon S3"}]}),
    ]
    path = _write_lines(tmp_path / "arch.jsonl", records)
    with pytest.raises(DatasetError) as raised:
        load_architecture_design(path)
    fields = {(line, field) for _, line, field, _ in _problems(raised.value)}
    assert (1, "diagram") in fields
    assert (2, "output_format") in fields
    assert any(line == 3 for line, _ in fields)
    assert (4, "expected.services.0.role") in fields


def _cdk(**changes: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": "cdk-01",
        "level": "beginner",
        "prompt": f"Create a versioned S3 bucket. {CDK_PROMPT_ENDING}",
        "solution": "from aws_cdk import App\n\napp = App()\napp.synth()\n",
        "services": ["Amazon S3"],
    }
    record.update(changes)
    return record


def test_cdk_loader_validates_prompts_and_solutions(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "cdk.jsonl", [_cdk()])
    (prompt,) = load_cdk_synth(path)
    assert prompt.solution.endswith("app.synth()\n")

    bad = _write_lines(
        tmp_path / "bad.jsonl",
        [
            _cdk(),
            _cdk(id="cdk-02", solution="app = App()\n"),
            _cdk(id="cdk-03", prompt="Create a versioned S3 bucket, please."),
            _cdk(id="cdk-04", level="expert"),
        ],
    )
    with pytest.raises(DatasetError) as raised:
        load_cdk_synth(bad)
    fields = {(line, field) for _, line, field, _ in _problems(raised.value)}
    assert fields == {(2, "solution"), (3, "prompt"), (4, "level")}


def test_packaged_cdk_synth_is_valid_when_present() -> None:
    if not CDK_SYNTH_FILE.exists():
        with pytest.raises(FileNotFoundError, match="dataset file not found"):
            load_cdk_synth()
        return
    prompts = load_cdk_synth()
    assert all(prompt.prompt.rstrip().endswith(CDK_PROMPT_ENDING) for prompt in prompts)
    assert all(prompt.solution.rstrip().endswith("app.synth()") for prompt in prompts)


def test_empty_dataset_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"empty.jsonl:1: <file>: the dataset has no records"):
        load_practice_exam(path)


def test_subtype_tables_cover_all_nine_subtypes() -> None:
    assert len(SUBTYPES) == 9
    assert set(EXPECTED_KEY_BY_SUBTYPE) == set(SUBTYPES)
    assert Counter(EXPECTED_KEY_BY_SUBTYPE.values())["issues"] == 2
