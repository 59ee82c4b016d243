"""Both scorers through a real Inspect eval, with mockllm models scripted per sample."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from arch_helpers import keyword_salad, metadata
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.solver import generate

from plumbline.suites.sa_bench.scorers import architecture_scorer
from plumbline.suites.sa_bench.scorers.judge import llm_judge_scorer

Responder = Callable[[list[ChatMessage], Any, Any, GenerateConfig], ModelOutput]


def out(content: str) -> ModelOutput:
    """A scripted reply; usage is set so mockllm does not count tokens (tiktoken downloads)."""
    output = ModelOutput.from_content(model="mockllm/model", content=content)
    output.usage = ModelUsage(input_tokens=10, output_tokens=3, total_tokens=13)
    return output


def _text(messages: list[ChatMessage]) -> str:
    return "\n".join(m.text for m in messages)


def answering_model(answers: dict[str, str]) -> Responder:
    """A scripted candidate: answers each question with the response given for it."""

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        prompt = _text(messages)
        for question, answer in answers.items():
            if question in prompt:
                return out(answer)
        raise AssertionError(f"no scripted answer for {prompt[:80]!r}")

    return respond


def _task(tasks: list[dict[str, Any]], scorer: Any) -> Task:
    samples = [
        Sample(
            id=t["id"],
            input=t["question"],
            target=t["reference_answer"],
            metadata=metadata(t),
        )
        for t in tasks
    ]
    return Task(dataset=MemoryDataset(samples), solver=generate(), scorer=scorer)


def _run(task: Task, answers: dict[str, str], log_dir: Path) -> Any:
    model = get_model("mockllm/model", custom_outputs=answering_model(answers), memoize=False)
    [log] = eval(task, model=model, log_dir=str(log_dir), display="none")
    assert log.status == "success", log.error
    return log


def test_architecture_scorer_in_an_eval(tasks: list[dict[str, Any]], tmp_path: Path) -> None:
    chosen = tasks[:3]
    answers = {
        chosen[0]["question"]: chosen[0]["reference_answer"],
        chosen[1]["question"]: keyword_salad(chosen[1]),
        chosen[2]["question"]: "",
    }
    log = _run(_task(chosen, architecture_scorer()), answers, tmp_path)
    by_id = {s.id: s.scores["architecture_scorer"] for s in log.samples}
    assert by_id[chosen[0]["id"]].value >= 0.8
    assert by_id[chosen[1]["id"]].value < 0.35
    assert by_id[chosen[2]["id"]].value == 0
    meta = by_id[chosen[0]["id"]].metadata
    assert {"accuracy", "completeness", "quality", "elements"} <= set(meta)
    metrics = log.results.scores[0].metrics
    expected_mean = sum(s.value for s in by_id.values()) / 3
    assert metrics["mean"].value == pytest.approx(expected_mean)
    assert log.results.scores[0].unscored_samples in (None, 0)


def verdict(a: float, c: float, q: float, reasoning: str = "graded") -> str:
    return json.dumps({"accuracy": a, "completeness": c, "quality": q, "reasoning": reasoning})


def scripted_judge(replies: list[str]) -> Any:
    return get_model(
        "mockllm/model",
        custom_outputs=[out(r) for r in replies],
        memoize=False,
    )


def test_judge_scorer_in_an_eval(tasks: list[dict[str, Any]], tmp_path: Path) -> None:
    task = tasks[0]
    seen: list[str] = []

    def judge_reply(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        seen.append(_text(messages))
        return out(verdict(1.0, 0.9, 0.8))

    judge = get_model("mockllm/model", custom_outputs=judge_reply, memoize=False)
    log = _run(
        _task([task], llm_judge_scorer([judge])),
        {task["question"]: task["reference_answer"]},
        tmp_path,
    )
    score = log.samples[0].scores["llm_judge_scorer"]
    heuristic = score.metadata["heuristic"]
    assert score.metadata["heuristic_weight"] == 0.3
    assert score.metadata["factors"] == []  # 80+ words, no diagram required
    assert score.metadata["accuracy"] == pytest.approx(0.7 * 1.0 + 0.3 * heuristic["accuracy"])
    assert score.metadata["quality"] == pytest.approx(0.7 * 0.8 + 0.3 * heuristic["quality"])
    assert score.value == pytest.approx(
        (score.metadata["accuracy"] + score.metadata["completeness"] + score.metadata["quality"])
        / 3
    )
    # the judge saw the question, the reference answer, the expected elements and the rubric
    [prompt] = seen
    assert task["question"] in prompt and task["reference_answer"] in prompt
    assert "stores the uploaded images and thumbnails" in prompt
    assert "Rubric v1 for subtype service_identification" in prompt


def test_unscored_samples_are_nan_and_counted(tasks: list[dict[str, Any]], tmp_path: Path) -> None:
    chosen = tasks[:2]

    # first judge call fails twice (retry included) for one sample; the other gets a verdict
    def judge_reply(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        prompt = _text(messages)
        if chosen[0]["question"] in prompt:
            return out("I would give it 8/10.")
        return out(verdict(0.5, 0.5, 0.5))

    judge = get_model("mockllm/model", custom_outputs=judge_reply, memoize=False)
    answers = {t["question"]: t["reference_answer"] for t in chosen}
    log = _run(_task(chosen, llm_judge_scorer([judge])), answers, tmp_path)
    by_id = {s.id: s.scores["llm_judge_scorer"] for s in log.samples}
    bad = by_id[chosen[0]["id"]]
    assert math.isnan(bad.value)
    assert bad.metadata["unscored"] is True
    assert bad.metadata["judges"][0]["attempts"] == 2
    assert "no JSON object" in bad.metadata["judges"][0]["errors"][0]
    metrics = log.results.scores[0].metrics
    assert log.results.scores[0].unscored_samples == 1
    assert metrics["mean"].value == pytest.approx(by_id[chosen[1]["id"]].value)
    assert re.match(r"unscored", bad.explanation or "")


def test_several_judges_are_averaged_and_their_agreement_reported(
    tasks: list[dict[str, Any]], tmp_path: Path
) -> None:
    chosen = tasks[:4]
    levels = {t["question"]: i / 4 for i, t in enumerate(chosen)}

    def judge_with_offset(offset: float) -> Any:
        def reply(messages: list[ChatMessage], *_: Any) -> ModelOutput:
            prompt = _text(messages)
            level = next(v for q, v in levels.items() if q in prompt)
            x = min(1.0, level + offset)
            return out(verdict(x, x, x))

        return get_model("mockllm/model", custom_outputs=reply, memoize=False, judge_offset=offset)

    judges = [judge_with_offset(0.0), judge_with_offset(0.1)]
    answers = {t["question"]: t["reference_answer"] for t in chosen}
    log = _run(_task(chosen, llm_judge_scorer(judges, heuristic_weight=0.0)), answers, tmp_path)
    for sample in log.samples:
        score = sample.scores["llm_judge_scorer"]
        per_judge = [j["accuracy"] for j in score.metadata["judges"]]
        assert len(per_judge) == 2
        assert score.metadata["accuracy"] == pytest.approx(sum(per_judge) / 2)
    alpha = log.results.scores[0].metrics["judge_agreement"].value
    assert 0.5 < alpha < 1.0


def test_the_judge_sees_the_diagram_of_an_interpretation_task(
    tasks: list[dict[str, Any]], tmp_path: Path
) -> None:
    from inspect_ai.model import ChatMessageUser, ContentImage, ContentText

    from plumbline.suites.sa_bench.datasets import DATA_DIR

    task = tasks[0]
    diagram = DATA_DIR / "diagrams" / "arch-01.png"
    sample = Sample(
        id=task["id"],
        input=[
            ChatMessageUser(
                content=[ContentText(text=task["question"]), ContentImage(image=str(diagram))]
            )
        ],
        target=task["reference_answer"],
        metadata=metadata(task),
    )
    images_seen: list[int] = []

    def judge_reply(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        images_seen.append(
            sum(
                isinstance(c, ContentImage)
                for m in messages
                if not isinstance(m.content, str)
                for c in m.content
            )
        )
        return out(verdict(0.9, 0.9, 0.9))

    judge = get_model("mockllm/model", custom_outputs=judge_reply, memoize=False)
    task_object = Task(
        dataset=MemoryDataset([sample]), solver=generate(), scorer=llm_judge_scorer([judge])
    )
    log = _run(task_object, {task["question"]: task["reference_answer"]}, tmp_path)
    assert log.samples[0].scores["llm_judge_scorer"].value > 0.8
    assert images_seen == [1]


def test_without_judges_the_judge_role_is_used(tasks: list[dict[str, Any]], tmp_path: Path) -> None:
    task = tasks[0]
    judge = scripted_judge([verdict(0.6, 0.6, 0.6)])
    candidate = get_model(
        "mockllm/model",
        custom_outputs=answering_model({task["question"]: task["reference_answer"]}),
        memoize=False,
    )
    [log] = eval(
        _task([task], llm_judge_scorer()),
        model=candidate,
        model_roles={"judge": judge},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    score = log.samples[0].scores["llm_judge_scorer"]
    assert [j["accuracy"] for j in score.metadata["judges"]] == [0.6]
