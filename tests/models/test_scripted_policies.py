"""The scripted models' pieces without Inspect evals: prompt matching, letters, CDK variants."""

from __future__ import annotations

import ast
import asyncio
import random

import pytest
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, get_model
from inspect_ai.solver._multiple_choice import MULTIPLE_ANSWER_TEMPLATE, SINGLE_ANSWER_TEMPLATE

from plumbline.models.policies import (
    WEAK_CDK_VARIANTS,
    break_cdk,
    oracle_exam,
    prompt_rng,
    weak_cdk_variant,
    weak_exam,
)
from plumbline.models.reference import (
    ArchitectureMatch,
    CdkMatch,
    ExamMatch,
    packaged_index,
    read_choice_letters,
)
from plumbline.suites.sa_bench.datasets import (
    LETTERS,
    PracticeExamQuestion,
    load_architecture_design,
    load_cdk_synth,
    load_practice_exam,
)
from plumbline.suites.sa_bench.tasks import architecture_prompt

QUESTIONS = {question.id: question for question in load_practice_exam()}
SOLUTIONS = [prompt.solution for prompt in load_cdk_synth()]


def exam_prompt(question: PracticeExamQuestion, order: list[int]) -> str:
    """The prompt Inspect's multiple_choice builds, with the choices in `order`."""
    template = MULTIPLE_ANSWER_TEMPLATE if question.is_multi_answer else SINGLE_ANSWER_TEMPLATE
    shown = [question.choices[index] for index in order]
    return template.format(
        question=question.question,
        choices="\n".join(f"{LETTERS[i]}) {text}" for i, text in enumerate(shown)),
        letters=",".join(LETTERS[: len(shown)]),
    )


def test_every_sample_is_recognised_from_its_prompt() -> None:
    index = packaged_index()
    for question in QUESTIONS.values():
        match = index.match(exam_prompt(question, list(range(len(question.choices)))))
        assert isinstance(match, ExamMatch) and match.sample_id == question.id
    for task in load_architecture_design():
        match = index.match(architecture_prompt(task))
        assert isinstance(match, ArchitectureMatch) and match.sample_id == task.id
    for prompt in load_cdk_synth():
        match = index.match(prompt.prompt)
        assert isinstance(match, CdkMatch) and match.sample_id == prompt.id
    assert index.match("What is the capital of France?") is None


@pytest.mark.parametrize("question_id", ["pe-01", "pe-13", "pe-36"])
def test_oracle_letters_follow_the_shuffled_order_in_the_prompt(question_id: str) -> None:
    question = QUESTIONS[question_id]
    order = list(range(len(question.choices)))
    random.Random(7).shuffle(order)
    match = packaged_index().match(exam_prompt(question, order))
    assert isinstance(match, ExamMatch)
    shown_at = {question.choices[original]: LETTERS[i] for i, original in enumerate(order)}
    expected = sorted(shown_at[text] for text in question.correct_choices)
    assert oracle_exam(match).content == "ANSWER: " + ",".join(expected)


def test_a_choice_that_prefixes_another_is_placed_by_the_letter_that_follows() -> None:
    base = QUESTIONS["pe-01"]
    question = base.model_copy(
        update={"choices": ["Use Amazon S3", "Use Amazon S3 Glacier", "Use EFS", "Use EBS"]}
    )
    letters = read_choice_letters(exam_prompt(question, [1, 0, 3, 2]), question)
    assert letters == {
        "Use Amazon S3 Glacier": "A",
        "Use Amazon S3": "B",
        "Use EBS": "C",
        "Use EFS": "D",
    }


def test_weak_exam_answers_are_valid_and_right_about_55_percent_of_the_time() -> None:
    single = QUESTIONS["pe-01"]
    multi = QUESTIONS["pe-13"]
    kinds: dict[str, set[str]] = {"single": set(), "multi": set()}
    right = 0
    trials = 400
    for seed in range(trials):
        for kind, question in (("single", single), ("multi", multi)):
            prompt = exam_prompt(question, list(range(len(question.choices))))
            match = packaged_index().match(prompt)
            assert isinstance(match, ExamMatch)
            reply = weak_exam(match, prompt_rng(seed, "weak", prompt))
            kinds[kind].add(reply.behaviour)
            letters = reply.content.removeprefix("ANSWER: ").split(",")
            assert set(letters) <= set(match.shown_letters)
            if kind == "single":
                assert len(letters) == 1
                right += reply.behaviour == "correct"
                assert (letters == match.correct_letters) == (reply.behaviour == "correct")
    assert kinds["single"] == {"correct", "wrong"}
    assert kinds["multi"] == {
        "correct",
        "subset of the correct answers",
        "one correct answer swapped",
    }
    assert 0.45 < right / trials < 0.65


def test_prompt_rng_depends_on_seed_policy_and_prompt_only() -> None:
    draws = [prompt_rng(3, "weak", "a prompt").random() for _ in range(2)]
    assert draws[0] == draws[1]
    assert prompt_rng(4, "weak", "a prompt").random() != draws[0]
    assert prompt_rng(3, "weak", "another prompt").random() != draws[0]


@pytest.mark.parametrize("source", SOLUTIONS, ids=[p.id for p in load_cdk_synth()])
def test_each_cdk_failure_mode_breaks_every_reference_solution(source: str) -> None:
    assert break_cdk(source, "reference") == source
    with pytest.raises(SyntaxError):
        ast.parse(break_cdk(source, "syntax_error"))
    missing = break_cdk(source, "missing_synth")
    ast.parse(missing)
    assert "app.synth()" in source and "app.synth()" not in missing
    v1 = break_cdk(source, "cdk_v1_import")
    ast.parse(v1)
    assert "from aws_cdk.core import" in v1 and "from aws_cdk.core import" not in source


def test_weak_cdk_variants_all_occur_with_their_weights() -> None:
    rng = random.Random(0)
    counts: dict[str, int] = {}
    for _ in range(2000):
        variant = weak_cdk_variant(rng)
        counts[variant] = counts.get(variant, 0) + 1
    for variant, weight in WEAK_CDK_VARIANTS:
        assert abs(counts[variant] / 2000 - weight) < 0.05


def test_provider_is_found_through_the_entry_point_and_rejects_other_names() -> None:
    model = get_model("scripted/oracle", memoize=False)
    assert str(model) == "scripted/oracle"
    with pytest.raises(ValueError, match=r"scripted/oracle, scripted/weak"):
        get_model("scripted/genius", memoize=False)


def test_outputs_are_labelled_scripted_and_unknown_prompts_say_so() -> None:
    model = get_model("scripted/weak", memoize=False)
    cdk = load_cdk_synth()[0]
    output = asyncio.run(
        model.generate(
            [ChatMessageSystem(content="system"), ChatMessageUser(content=cdk.prompt)],
            config=GenerateConfig(seed=5),
        )
    )
    assert output.model == "scripted/weak"
    assert output.metadata is not None
    assert output.metadata["scripted"] is True
    assert output.metadata["sample"] == cdk.id
    assert output.metadata["seed"] == 5
    assert output.metadata["behaviour"] in {variant for variant, _ in WEAK_CDK_VARIANTS}
    assert output.completion.startswith("```python\n")

    unknown = asyncio.run(model.generate("What is the capital of France?"))
    assert "scripted model" in unknown.completion
    assert unknown.metadata is not None and unknown.metadata["sample"] is None
