"""The cdk_synth task end to end: scripted answers synthesized by the sandboxed cdk_verify scorer.

Synthesis is CPU-heavy, so this runs three samples: the reference solution (passes), a broken
variant of another reference (fails in Python), and prose without code (fails to extract).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval
from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import value_to_float

from plumbline.suites.sa_bench.datasets import CDK_PROMPT_ENDING, load_cdk_synth
from plumbline.suites.sa_bench.tasks import CDK_SYSTEM_PROMPT, cdk_synth

PROMPTS = {prompt.id: prompt for prompt in load_cdk_synth()}

pytestmark = pytest.mark.slow


def out(content: str) -> ModelOutput:
    output = ModelOutput.from_content(model="mockllm/model", content=content)
    output.usage = ModelUsage(input_tokens=10, output_tokens=3, total_tokens=13)
    return output


def fenced(source: str) -> str:
    return f"Here is the app.\n\n```python\n{source}```\n"


def test_cdk_synth_scores_the_reference_one_and_broken_answers_zero(tmp_path: Path) -> None:
    reference = PROMPTS["cdk-01"].solution
    broken = PROMPTS["cdk-03"].solution
    broken = broken.replace("sns.Topic(", "sns.Topicc(")
    answers = {
        "cdk-01": fenced(reference),
        "cdk-03": fenced(broken),
        "cdk-02": "I would use an SQS queue with a redrive policy.",
    }
    seen: dict[str, list[str]] = {}

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        text = messages[-1].text
        [sample_id] = [i for i in answers if PROMPTS[i].prompt == text]
        seen[sample_id] = [m.role for m in messages]
        assert messages[0].text == CDK_SYSTEM_PROMPT
        return out(answers[sample_id])

    task = cdk_synth(timeout=120, workers=1)
    assert task.name == "cdk_synth"
    assert len(task.dataset) == 40
    for sample in task.dataset:
        assert isinstance(sample.input, str) and sample.input.endswith(CDK_PROMPT_ENDING)
    model = get_model("mockllm/model", custom_outputs=respond, memoize=False)
    [log] = eval(
        task,
        model=model,
        sample_id=list(answers),
        log_dir=str(tmp_path),
        display="none",
        max_samples=1,
    )
    assert log.status == "success", log.error
    assert log.samples is not None
    scores = {str(s.id): s.scores["cdk_verify"] for s in log.samples}
    assert {i: value_to_float()(s.value) for i, s in scores.items()} == {
        "cdk-01": 1.0,
        "cdk-02": 0.0,
        "cdk-03": 0.0,
    }
    assert scores["cdk-01"].metadata is not None
    assert scores["cdk-01"].metadata["outcome"] == "passed"
    assert scores["cdk-02"].metadata is not None
    assert scores["cdk-02"].metadata["outcome"] == "extraction_failed"
    assert scores["cdk-03"].metadata is not None
    assert scores["cdk-03"].metadata["outcome"] == "python_error"
    assert seen["cdk-01"] == ["system", "user"]
