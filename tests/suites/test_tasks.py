"""The practice_exam and architecture_design tasks, end to end with scripted mockllm models."""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval
from inspect_ai.log import EvalLog
from inspect_ai.model import (
    ChatMessage,
    ContentImage,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.scorer import value_to_float

from plumbline.suites.sa_bench.datasets import (
    CREATION_SUBTYPES,
    INTERPRETATION_SUBTYPES,
    LETTERS,
    PracticeExamQuestion,
    load_architecture_design,
    load_practice_exam,
)
from plumbline.suites.sa_bench.tasks import (
    FORMAT_INSTRUCTIONS,
    architecture_design,
    practice_exam,
    select_samples,
)

QUESTIONS = load_practice_exam()
ARCHITECTURE = {item.id: item for item in load_architecture_design()}

Responder = Callable[[list[ChatMessage], Any, Any, GenerateConfig], ModelOutput]


def out(content: str) -> ModelOutput:
    """A scripted reply (usage set so mockllm does not try to count tokens)."""
    output = ModelOutput.from_content(model="mockllm/model", content=content)
    output.usage = ModelUsage(input_tokens=10, output_tokens=3, total_tokens=13)
    return output


def prompt_text(messages: list[ChatMessage]) -> str:
    return "\n".join(message.text for message in messages)


# ---------------------------------------------------------------------------------------------
# practice_exam

CHOICE_LINE = re.compile(r"^([A-F])\) (.*)$", re.MULTILINE)


def question_in(prompt: str) -> PracticeExamQuestion:
    [question] = [q for q in QUESTIONS if q.question in prompt]
    return question


def shown_choices(prompt: str) -> dict[str, str]:
    """The letter -> choice text the model was shown (after shuffling)."""
    return {letter: text.strip() for letter, text in CHOICE_LINE.findall(prompt)}


def exam_model(pick: Callable[[PracticeExamQuestion, dict[str, str]], list[str]]) -> Responder:
    """A scripted examinee: `pick` chooses letters from the question and the choices shown."""

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        prompt = prompt_text(messages)
        letters = pick(question_in(prompt), shown_choices(prompt))
        return out("ANSWER: " + ",".join(sorted(letters)))

    return respond


def correct_letters(question: PracticeExamQuestion, shown: dict[str, str]) -> list[str]:
    """The oracle: the letters whose text is a correct choice in the reference data."""
    return [letter for letter, text in shown.items() if text in question.correct_choices]


def wrong_letters(question: PracticeExamQuestion, shown: dict[str, str]) -> list[str]:
    wrong = [letter for letter, text in shown.items() if text not in question.correct_choices]
    return wrong[: len(question.target_letters)]


def run(task: Any, respond: Responder, log_dir: Path) -> EvalLog:
    model = get_model("mockllm/model", custom_outputs=respond, memoize=False)
    [log] = eval(task, model=model, log_dir=str(log_dir), display="none", max_samples=8)
    assert log.status == "success", log.error
    return log


def exam_scores(log: EvalLog) -> dict[str, float]:
    assert log.samples is not None
    return {str(s.id): value_to_float()(s.scores["choice"].value) for s in log.samples}


def test_the_oracle_scores_one_and_a_wrong_model_zero(tmp_path: Path) -> None:
    oracle = run(practice_exam(), exam_model(correct_letters), tmp_path / "oracle")
    assert len(exam_scores(oracle)) == 50
    assert set(exam_scores(oracle).values()) == {1.0}
    assert oracle.results is not None
    assert oracle.results.scores[0].metrics["accuracy"].value == 1.0

    wrong = run(practice_exam(), exam_model(wrong_letters), tmp_path / "wrong")
    assert set(exam_scores(wrong).values()) == {0.0}
    assert wrong.results is not None
    assert wrong.results.scores[0].metrics["accuracy"].value == 0.0


def test_multi_answer_questions_need_the_exact_set(tmp_path: Path) -> None:
    multi = [q for q in QUESTIONS if q.is_multi_answer]
    assert len(multi) >= 15

    def subset(question: PracticeExamQuestion, shown: dict[str, str]) -> list[str]:
        return correct_letters(question, shown)[:-1] if question.is_multi_answer else []

    def superset(question: PracticeExamQuestion, shown: dict[str, str]) -> list[str]:
        extra = wrong_letters(question, shown)[:1]
        return correct_letters(question, shown) + extra if question.is_multi_answer else []

    for name, pick in (("subset", subset), ("superset", superset)):
        scores = exam_scores(run(practice_exam(), exam_model(pick), tmp_path / name))
        assert {scores[q.id] for q in multi} == {0.0}, name


def test_multi_answer_template_only_where_the_target_is_a_list(tmp_path: Path) -> None:
    prompts: dict[str, str] = {}

    def record(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        prompt = prompt_text(messages)
        prompts[question_in(prompt).id] = prompt
        return out("ANSWER: A")

    run(practice_exam(), record, tmp_path)
    for question in QUESTIONS:
        says_multiple = "multiple answers may be correct" in prompts[question.id]
        assert says_multiple == question.is_multi_answer, question.id


def test_choices_are_shuffled_reproducibly_with_the_recorded_seed() -> None:
    def layout(seed: int) -> list[tuple[str, list[str], Any]]:
        task = practice_exam(seed=seed)
        return [(str(s.id), list(s.choices or []), s.target) for s in task.dataset]

    assert layout(7) == layout(7)
    assert layout(7) != layout(8)
    original = {q.id: q for q in QUESTIONS}
    moved = 0
    for sample_id, choices, target in layout(7):
        question = original[sample_id]
        letters = [target] if isinstance(target, str) else target
        # The remapped target still points at the correct choices' text.
        assert sorted(choices[LETTERS.index(letter)] for letter in letters) == sorted(
            question.correct_choices
        )
        moved += choices != question.choices
    assert moved >= 40
    task = practice_exam(seed=7)
    assert task.metadata is not None and task.metadata["choice_shuffle_seed"] == 7
    unshuffled = practice_exam(shuffle_choices=False)
    assert [list(s.choices or []) for s in unshuffled.dataset] == [q.choices for q in QUESTIONS]


def test_limit_takes_a_seeded_subset_in_dataset_order() -> None:
    first = [str(s.id) for s in practice_exam(limit=10, seed=3).dataset]
    assert len(first) == 10 and first == sorted(first)
    assert first == [str(s.id) for s in practice_exam(limit=10, seed=3).dataset]
    assert first != [str(s.id) for s in practice_exam(limit=10, seed=4).dataset]
    assert {q.level for q in QUESTIONS if q.id in first} == {"associate", "professional"}
    assert select_samples([], None, 1) == []


def test_task_arguments_are_validated() -> None:
    with pytest.raises(ValueError, match="limit"):
        practice_exam(limit=0)
    with pytest.raises(ValueError, match="epochs"):
        architecture_design(epochs=0)


def test_epochs_repeat_every_question(tmp_path: Path) -> None:
    log = run(practice_exam(limit=3, epochs=2), exam_model(correct_letters), tmp_path)
    assert log.samples is not None and len(log.samples) == 6
    assert {s.epoch for s in log.samples} == {1, 2}
    assert log.eval.task == "practice_exam"


# ---------------------------------------------------------------------------------------------
# architecture_design


def reference_model() -> Responder:
    """Answers each task with its reference answer (matched on the question text)."""

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        prompt = prompt_text(messages)
        [item] = [item for item in ARCHITECTURE.values() if item.question in prompt]
        return out(item.reference_answer)

    return respond


def test_architecture_samples_attach_diagrams_and_state_the_format() -> None:
    task = architecture_design()
    assert task.name == "architecture_design"
    samples = {str(s.id): s for s in task.dataset}
    assert samples.keys() == ARCHITECTURE.keys()
    for sample_id, sample in samples.items():
        item = ARCHITECTURE[sample_id]
        assert sample.target == item.reference_answer
        assert sample.metadata == item.metadata()
        if item.subtype in INTERPRETATION_SUBTYPES:
            assert not isinstance(sample.input, str)
            [message] = sample.input
            images = [c for c in message.content if isinstance(c, ContentImage)]
            assert len(images) == 1, sample_id
            header, data = images[0].image.split(",", 1)
            assert header == "data:image/png;base64"
            assert item.diagram_path is not None
            assert base64.b64decode(data) == item.diagram_path.read_bytes()
            assert item.question in message.text
        else:
            assert isinstance(sample.input, str)
            assert sample.input.startswith(item.question)
        if item.output_format is not None:
            text = sample.input if isinstance(sample.input, str) else sample.input[0].text
            assert FORMAT_INSTRUCTIONS[item.output_format] in text, sample_id
        if item.subtype in CREATION_SUBTYPES:
            assert item.output_format is not None


def test_reference_answers_score_high_with_the_heuristic(tmp_path: Path) -> None:
    log = run(architecture_design(), reference_model(), tmp_path)
    assert log.samples is not None and len(log.samples) == len(ARCHITECTURE)
    for sample in log.samples:
        assert set(sample.scores) == {"architecture_scorer"}
        assert sample.scores["architecture_scorer"].as_float() >= 0.8, sample.id
    # The diagram travelled to the model as an image.
    interpretation = [s for s in log.samples if ARCHITECTURE[str(s.id)].diagram is not None]
    assert interpretation
    for sample in interpretation:
        assert any(isinstance(c, ContentImage) for c in sample.messages[1].content)


def test_an_empty_answer_scores_zero(tmp_path: Path) -> None:
    log = run(architecture_design(limit=4), lambda *_: out(""), tmp_path)
    assert log.samples is not None
    assert [s.scores["architecture_scorer"].as_float() for s in log.samples] == [0.0] * 4


def test_a_judge_adds_the_llm_judge_scorer(tmp_path: Path) -> None:
    verdict = '{"accuracy": 0.9, "completeness": 0.8, "quality": 0.7, "reasoning": "sound"}'
    judge = get_model("mockllm/model", custom_outputs=lambda *_: out(verdict), memoize=False)
    task = architecture_design(limit=2, judge=[judge])
    assert task.metadata is not None and task.metadata["judges"] == ["mockllm/model"]
    log = run(task, reference_model(), tmp_path)
    assert log.samples is not None
    for sample in log.samples:
        assert set(sample.scores) == {"architecture_scorer", "llm_judge_scorer"}
        assert 0.0 < sample.scores["llm_judge_scorer"].as_float() <= 1.0
