"""Provider answers are data (issue 27): a provider answering HTTP 200 with `"choices": []`,
a choice without a message, or an error object crashed `probe` with an IndexError (exit 3:
the other model's trials lost, `--resume` never finishing) or lost the provider's message; the
judge and `run` had the same weakness. Each such answer is now a failed trial of its own class,
`MalformedResponseError`, HTTP status 200, the provider's words kept (secrets redacted)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.probe.helpers import FAKE_KEY, cli_env, model_name, read_jsonl, run_cli
from tests.support.openai_server import ERROR_BODY_MESSAGE, Latency, ModelProfile

from plumbline.core.answer_guard import answer_problem
from plumbline.probe.errors import classify_exception
from plumbline.probe.runner import run_probe
from plumbline.probe.settings import ProbeSettings, Prompt
from plumbline.records.trial_record import ErrorClass, TrialRecord

QUICK = Latency("constant", 0.01)
BAD_ANSWERS = ["empty_choices", "no_message", "error_body"]
# the provider's message carries a secret: kept, redacted
LEAKY = f"upstream model overloaded; key {FAKE_KEY} rejected"


def test_answer_problem_names_what_is_missing() -> None:
    assert answer_problem({"choices": [{"message": {"content": "hi"}}]}) is None
    assert "no choices" in str(answer_problem({"id": "x", "choices": []}))
    assert "no message" in str(answer_problem({"choices": [{"index": 0}]}))
    problem = str(answer_problem({"error": {"message": "quota gone"}}))
    assert problem == "the answer is an error object, not a completion: quota gone"
    assert "not a JSON object" in str(answer_problem("overloaded"))


def test_a_failure_to_read_an_answer_is_a_malformed_response() -> None:
    """Without the guard (a provider whose client is not httpx), the IndexError Inspect raises
    on an empty answer is still classified as the answer's fault, not an unknown error."""
    try:
        try:
            [][0]
        except IndexError as inner:
            raise RuntimeError("generate failed") from inner
    except RuntimeError as error:
        found = classify_exception(error)
    assert found.error_class is ErrorClass.MALFORMED_RESPONSE
    assert "IndexError" in found.message


def _probe_args(out: Path, *models: str) -> list[str]:
    args = ["probe", "--prompt", "Explain retries.", "--trials", "6", "--concurrency", "4"]
    for name in models:
        args += ["--model", model_name(name)]
    return [*args, "--timeout", "20", "-o", str(out), "--no-progress", "--json"]


@pytest.mark.slow
def test_probe_records_bad_answers_keeps_the_other_model_and_resumes(
    server_factory: Any, tmp_path: Path
) -> None:
    server = server_factory(
        {
            "bad": ModelProfile(latency=QUICK, faults=BAD_ANSWERS * 2, error_message=LEAKY),
            "good": ModelProfile(latency=QUICK),
        }
    )
    out = tmp_path / "trials.jsonl"
    first = run_cli(_probe_args(out, "bad", "good"), cli_env(server))
    assert first.returncode == 0, first.stderr
    records = read_jsonl(out)
    assert len(records) == 12
    good = [r for r in records if r["model"] == model_name("good")]
    assert len(good) == 6 and all(r["error_class"] is None for r in good)
    bad = [r for r in records if r["model"] == model_name("bad")]
    assert {(r["error_class"], r["http_status"]) for r in bad} == {("MalformedResponseError", 200)}
    messages = " ".join(r["error_message"] for r in bad)
    assert "the answer has no choices" in messages
    assert "the answer's choice has no message" in messages
    assert "the answer is an error object, not a completion: upstream model overloaded" in messages
    assert FAKE_KEY not in out.read_text() and FAKE_KEY not in first.stdout + first.stderr
    for record in records:
        TrialRecord.model_validate(record)

    again = run_cli(_probe_args(out, "bad", "good"), cli_env(server))
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert (summary["planned"], summary["already_done"], summary["completed"]) == (12, 12, 0)

    report = run_cli(["reliability", str(out), "--json"], cli_env(server))
    assert report.returncode == 0, report.stderr
    assert "MalformedResponseError" in report.stdout


def test_a_caller_that_raises_costs_one_trial_not_the_run(tmp_path: Path) -> None:
    settings = ProbeSettings(models=("a/ok", "a/broken"), prompts=(Prompt("p", "hi"),), trials=3)

    async def caller(model: str, prompt: Prompt, trial: int) -> TrialRecord:
        if model == "a/broken":
            return [][0]  # type: ignore[no-any-return]  # a defect reading an answer
        return TrialRecord(
            model=model,
            provider="a",
            prompt_id=prompt.id,
            prompt=prompt.text,
            trial=trial,
            response="fine",
            latency_seconds=0.1,
            attempts=1,
            timestamp="2026-01-01T00:00:00Z",
            config=settings.generation(trial),
        )

    out = tmp_path / "t.jsonl"
    summary = asyncio.run(run_probe(settings, out, caller=caller))
    assert summary.completed == 6 and summary.errors == {"MalformedResponseError": 3}
    records = read_jsonl(out)
    assert sum(r["response"] == "fine" for r in records) == 3


def test_the_judge_reports_a_bad_answer_with_the_providers_message(
    server_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model

    from plumbline.suites.sa_bench.scorers.judge import run_judge

    verdict = json.dumps({"accuracy": 0.5, "completeness": 0.5, "quality": 0.5, "reasoning": "ok"})
    broken_answers = ["empty_choices", "error_body"]
    server = server_factory(
        {
            "broken": ModelProfile(latency=QUICK, faults=broken_answers),
            "recovers": ModelProfile(latency=QUICK, faults=["no_message"], responses=[verdict]),
        }
    )
    monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
    monkeypatch.setenv("LOCAL_API_KEY", FAKE_KEY)

    def judge(name: str) -> Any:
        return get_model(model_name(name), config=GenerateConfig(max_retries=0), memoize=False)

    messages: list[Any] = [ChatMessageUser(content="Grade this.")]
    broken = asyncio.run(run_judge(judge("broken"), messages))
    assert broken.verdict is None and broken.attempts == 2
    assert broken.errors[0].startswith("attempt 1: model error: MalformedResponseError: ")
    assert "no choices" in broken.errors[0]
    assert ERROR_BODY_MESSAGE in broken.errors[1]
    recovered = asyncio.run(run_judge(judge("recovers"), messages))
    assert recovered.verdict is not None and recovered.verdict.value == pytest.approx(0.5)
    assert "choice has no message" in recovered.errors[0]


TASK = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


@task
def echo(size: int = 3) -> Task:
    samples = [Sample(id=f"q{i}", input=f"Say hello ({i}).", target="hello") for i in range(size)]
    return Task(dataset=samples, solver=generate(), scorer=includes())
"""

SUITE = """
[suite]
name = "echo-suite"

[[category]]
key = "echo"
name = "Echo"
description = "Says hello."
weight = 1.0
scoring = "binary"
tasks = ["evals/mine.py@echo"]
scorer = "includes"
"""


@pytest.mark.slow
def test_run_records_a_bad_answer_with_the_providers_message_and_finishes(
    server_factory: Any, tmp_path: Path
) -> None:
    server = server_factory(
        {
            "error-body": ModelProfile(latency=QUICK, fault_rates={"error_body": 1.0}),
            "no-choices": ModelProfile(latency=QUICK, fault_rates={"empty_choices": 1.0}),
            "good": ModelProfile(latency=QUICK, responses=["hello there"]),
        }
    )
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "mine.py").write_text(TASK, encoding="utf-8")
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE, encoding="utf-8")
    logs = tmp_path / "logs"
    args = [sys.executable, "-m", "plumbline", "run", str(suite), "--log-dir", str(logs)]
    for name in ("error-body", "no-choices", "good"):
        args += ["--model", model_name(name)]
    args += ["--max-retries", "0", "--display", "none", "--json"]
    env = {**cli_env(server), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        args, env=env, capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    [good] = document["models"]
    assert good["model"] == model_name("good") and good["counts"]["echo"]["errors"] == 0
    failed = {entry["model"]: entry["errors"] for entry in document["failed_models"]}
    assert failed == {model_name("error-body"): 3, model_name("no-choices"): 3}
    from inspect_ai.log import read_eval_log

    errors: dict[str, list[str]] = {}
    for path in logs.glob("*.eval"):
        log = read_eval_log(str(path))
        errors[log.eval.model] = [s.error.message for s in log.samples or [] if s.error]
    assert all(ERROR_BODY_MESSAGE in m for m in errors[model_name("error-body")]), errors
    assert len(errors[model_name("no-choices")]) == 3
    assert all("the answer has no choices" in m for m in errors[model_name("no-choices")])
