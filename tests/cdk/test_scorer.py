"""The cdk_verify scorer inside real Inspect evals, with mockllm scripted responses."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage
from inspect_ai.solver import generate

from plumbline.cdk import scorer as scorer_module
from plumbline.cdk.outcomes import Outcome, SynthReport
from plumbline.cdk.scorer import cdk_verify, report_to_score
from plumbline.cdk.synth import CdkSynthesizer, SynthOptions
from plumbline.sandbox import ResourceLimits, SandboxUnavailable
from plumbline.sandbox import bwrap as bwrap_module

GOOD_APP = (Path(__file__).parent / "apps/good/s3_bucket.py").read_text()

CRLF_APP = GOOD_APP.replace("\n", "\r\n")
RESPONSES = {
    "good": f"Here is the app.\r\n\r\n```python3  \r\n{CRLF_APP}```",
    "syntax": "```python\nimport aws_cdk as cdk\napp = cdk.App(\nthis is not python\n```",
    "nothing": "I am sorry, I cannot write CDK code.",
}


def scripted(inputs: list[Any], *_: Any) -> ModelOutput:
    prompt = inputs[-1].text
    output = ModelOutput.from_content(model="mockllm", content=RESPONSES[prompt])
    output.usage = ModelUsage(input_tokens=5, output_tokens=50, total_tokens=55)  # no tokenizer
    return output


def run_eval(tmp_path: Path, **scorer_args: Any) -> Any:
    task = Task(
        dataset=[Sample(input=name, target="synthesizes", id=name) for name in RESPONSES],
        solver=generate(),
        scorer=cdk_verify(**scorer_args),
    )
    (log,) = inspect_eval(
        task,
        model="mockllm/model",
        model_args={"custom_outputs": scripted},
        log_dir=str(tmp_path),
        display="none",
    )
    return log


@pytest.mark.slow
def test_cdk_verify_in_an_inspect_eval(tmp_path: Path) -> None:
    log = run_eval(tmp_path, workers=1, timeout=240)
    assert log.status == "success", log.error
    scores = {sample.id: sample.scores["cdk_verify"] for sample in log.samples}
    assert scores["good"].value == 1
    assert scores["good"].metadata["outcome"] == "passed"
    assert scores["good"].metadata["resource_count"] >= 2
    assert scores["good"].metadata["templates"] == ["StorageStack.template.json"]
    assert "app.synth()" in scores["good"].answer
    assert scores["syntax"].value == 0
    assert scores["syntax"].metadata["outcome"] == "python_error"
    assert scores["syntax"].metadata["exception_type"] == "SyntaxError"
    assert "SyntaxError" in scores["syntax"].metadata["stderr_head"]
    assert scores["nothing"].value == 0
    assert scores["nothing"].metadata["outcome"] == "extraction_failed"
    (result,) = log.results.scores
    assert result.name == "cdk_verify"
    assert result.metrics["accuracy"].value == pytest.approx(1 / 3)


@pytest.mark.slow
def test_infra_error_is_unscored_not_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A runtime that cannot start (here: a module missing from the warm-up) is infra_error:
    the sample is kept, reported and excluded from accuracy; it never counts as a 0."""
    broken = CdkSynthesizer(
        SynthOptions(
            pool_size=1,
            preload=("plumbline_module_that_does_not_exist",),
            limits=ResourceLimits(wall_seconds=60),
        )
    )
    monkeypatch.setattr(scorer_module, "shared_synthesizer", lambda options: broken)
    try:
        log = run_eval(tmp_path)
    finally:
        broken.close()
    assert log.status == "success", log.error
    scores = {sample.id: sample.scores["cdk_verify"] for sample in log.samples}
    assert math.isnan(scores["good"].value)
    assert scores["good"].reason == "infra_error"
    assert scores["good"].metadata["outcome"] == "infra_error"
    assert scores["good"].metadata["scored"] is False
    # Failures that need no runtime to establish are still the model's.
    assert scores["syntax"].value == 0 and scores["syntax"].metadata["outcome"] == "python_error"
    assert scores["nothing"].value == 0
    (result,) = log.results.scores
    assert result.metrics["accuracy"].value == 0.0  # over the two scored samples only


def test_report_to_score_values() -> None:
    passed = report_to_score(SynthReport(Outcome.PASSED, reason="ok", resource_count=3))
    assert passed.value == 1 and passed.metadata is not None
    assert passed.metadata["resource_count"] == 3
    for outcome in Outcome:
        score = report_to_score(SynthReport(outcome, reason="why"))
        if outcome is Outcome.INFRA_ERROR:
            assert isinstance(score.value, float) and math.isnan(score.value)
        else:
            assert score.value == (1 if outcome is Outcome.PASSED else 0)


def test_scorer_refuses_without_a_sandbox(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    bwrap_module.probe_sandbox.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="refusing to run model-written code"):
            cdk_verify(workers=1, timeout=13.5)
    finally:
        bwrap_module.probe_sandbox.cache_clear()
