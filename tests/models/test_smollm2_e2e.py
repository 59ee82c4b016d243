"""End to end on a real model: `plumbline/smollm2` (SmolLM2-135M-Instruct, in process, CPU).

Nothing here is scripted: what the model says is whatever it generates, so the tests assert what
must hold for any model (every sample scored or classified, numbers in range, the same seed
giving the same answer, no traceback), never particular answers. Each failure a real model
caused before (issue 20) is one of these checks, run on the real model's real output:

- a timeout left the generation running and the process aborted at exit;
- latencies came rounded to whole seconds, and every sample of a batch reported the batch's
  tokens and time;
- the same seed did not give the same answer;
- the diagram sample (an image) crashed the task, or was retried without end;
- multiple-choice replies without `ANSWER: X` were indistinguishable from wrong answers;
- a judge's unparseable verdicts were printed as "FOOLED" (checked on the demo's real judge,
  batched and one call at a time: tests/cli/test_demo.py).

Kept small (a few samples, a few tokens each): the model makes 3-15 tokens/s on two cores.
One model is loaded per test process and shared (`plumbline.models.local.shared_engine`).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import (
    ChatMessageUser,
    ContentImage,
    ContentText,
    GenerateConfig,
    Model,
    get_model,
)

from plumbline.cli.main import main
from plumbline.cli.output import parse_model_args
from plumbline.models import local
from plumbline.models.smollm2 import UnsupportedInputError
from plumbline.records.log_scores import (
    NO_ANSWER_REASONS,
    is_unsupported_input,
    score_value_to_float,
)
from plumbline.records.trial_record import ErrorClass, read_trial_records

# one xdist worker runs them all (`--dist loadgroup` in the Makefile): one model load, one run
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("smollm2")]

MODEL = "plumbline/smollm2"
MAX_TOKENS = 12
SCORERS = {
    "practice_exam": "choice",
    "architecture_design": "architecture_scorer",
    "cdk_synth": "cdk_verify",
}
PROMPTS = ("Name one AWS storage service.", "What is Amazon SQS?")


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def model() -> Model:
    return get_model(MODEL, memoize=False)


def generate(model: Model, prompt: Any, **config: Any) -> Any:
    return asyncio.run(model.generate(prompt, config=GenerateConfig(**config)))


# ---------------------------------------------------------------------------------------------
# the model itself


def test_same_seed_same_answer_and_each_call_reports_its_own_tokens_and_time(
    model: Model,
) -> None:
    settings = {"temperature": 1.0, "max_tokens": 10}
    first = generate(model, "Describe the sky in a few words.", seed=11, **settings)
    again = generate(model, "Describe the sky in a few words.", seed=11, **settings)
    assert first.completion == again.completion
    assert first.metadata["seed"] == again.metadata["seed"] == 11
    short = generate(model, "Count from one to fifty in words.", seed=11, max_tokens=3)
    for output in (first, again, short):
        assert output.usage is not None and output.usage.input_tokens > 0
        assert output.time is not None and output.time > 0
    assert first.usage.output_tokens <= 10
    assert short.usage.output_tokens <= 3 and short.stop_reason == "max_tokens"
    # the time is measured, not polled once a second
    assert any(output.time != round(output.time) for output in (first, again, short))


def test_a_timeout_stops_the_generation_and_the_model_carries_on(model: Model) -> None:
    async def cut_short() -> None:
        async with asyncio.timeout(0.5):
            await model.generate(
                "Write a long essay about clouds.", config=GenerateConfig(max_tokens=400)
            )

    with pytest.raises(TimeoutError):
        asyncio.run(cut_short())
    assert not local._LIVE  # no generation left running
    after = generate(model, "Say yes.", max_tokens=2, seed=1)
    assert after.usage is not None and after.usage.output_tokens <= 2


def test_an_image_is_unsupported_input_not_a_crash(model: Model) -> None:
    message = ChatMessageUser(
        content=[
            ContentText(text="What does this diagram show?"),
            ContentImage(image="data:image/png;base64,iVBORw0KGgo="),
        ]
    )
    with pytest.raises(UnsupportedInputError) as raised:
        generate(model, [message], max_tokens=4)
    assert is_unsupported_input(f"{type(raised.value).__name__}({raised.value})")


def test_model_args_are_json_in_every_command() -> None:
    # `-M do_sample=false` reached a judge as the string "false", which is true
    assert parse_model_args(("do_sample=false", "threads=2", "device=cpu")) == {
        "do_sample": False,
        "threads": 2,
        "device": "cpu",
    }


# ---------------------------------------------------------------------------------------------
# run sa-bench, the leaderboard, and compare on converted records


@pytest.fixture(scope="module")
def sa_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    logs = tmp_path_factory.mktemp("smollm2-run") / "logs"
    # seed 42 with --limit 2 takes the diagram task arch-04, which a text-only model cannot see
    code, stdout, stderr = invoke(
        "run", "sa-bench", "--model", MODEL, "--model", "scripted/weak", "--limit", "2",
        "--max-tokens", str(MAX_TOKENS), "--timeout", "300", "--log-dir", str(logs), "--json",
    )  # fmt: skip
    assert code == 0, stderr
    assert "Traceback" not in stderr
    return logs, json.loads(stdout)


def real_logs(logs: Path) -> dict[str, EvalLog]:
    found = {}
    for path in sorted(logs.glob("*.eval")):
        log = read_eval_log(str(path))
        if log.eval.model == MODEL:
            found[log.eval.task] = log
    return found


def test_run_scores_or_classifies_every_sample_of_every_category(
    sa_run: tuple[Path, dict[str, Any]],
) -> None:
    logs, document = sa_run
    by_task = real_logs(logs)
    assert set(by_task) == set(SCORERS)
    problems = [p for p in document["problems"] if p.get("model") == MODEL]
    unsupported: list[str] = []
    no_answer: list[str] = []
    times: list[float] = []
    for task, log in by_task.items():
        assert log.status == "success" and log.samples
        for sample in log.samples:
            label = f"{sample.id}#{sample.epoch}"
            if sample.error is not None:
                # the only error a text-only model may have: an input it cannot take
                assert is_unsupported_input(sample.error.message), sample.error.message
                unsupported.append(label)
                continue
            score = (sample.scores or {})[SCORERS[task]]
            value = score_value_to_float(score.value)
            assert value is not None and 0.0 <= value <= 1.0
            output = sample.output
            assert output.usage is not None and output.usage.output_tokens <= MAX_TOKENS
            assert output.time is not None and output.time > 0
            times.append(output.time)
            if score.reason in NO_ANSWER_REASONS:
                no_answer.append(label)
            if task == "cdk_synth" and "```" not in output.completion:
                assert (score.metadata or {}).get("outcome") == "extraction_failed"
    assert "arch-04#1" in unsupported
    # each sample reports its own time, not its batch's
    assert len(set(times)) == len(times)
    [listed] = [p for p in problems if p["kind"] == "unsupported_input"]
    assert listed["count"] == len(unsupported)
    listed_no_answer = [p for p in problems if p["kind"] == "no_answer_extracted"]
    assert sum(p["count"] for p in listed_no_answer) == len(no_answer)
    for label in no_answer:
        assert any(label in p["message"] for p in listed_no_answer)


def test_the_leaderboard_of_a_real_model_stays_in_range(
    sa_run: tuple[Path, dict[str, Any]],
) -> None:
    _, document = sa_run
    [entry] = [m for m in document["models"] if m["model"] == MODEL]
    assert 0.0 <= entry["overall"] <= 1.0
    for key, interval in entry["intervals"].items():
        assert 0.0 <= interval["low"] <= entry[key] <= interval["high"] <= 1.0, key
    assert entry["counts"]["architecture_design"]["errors"] >= 1  # the unsupported sample


def test_compare_on_records_converted_from_the_real_logs(
    sa_run: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    logs, _ = sa_run
    records = tmp_path / "runs.jsonl"
    code, _, stderr = invoke(
        "records", "convert", str(logs), "--from", "inspect", "--arm-from", "model",
        "-o", str(records),
    )  # fmt: skip
    assert code == 0, stderr
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    assert {line["arm"] for line in lines} == {MODEL, "scripted/weak"}
    code, stdout, stderr = invoke(
        "compare", str(records), "--treatment", MODEL, "--control", "scripted/weak",
        "--resamples", "200", "--json",
    )  # fmt: skip
    assert code == 0, stderr
    report = json.loads(stdout)
    assert report["decision"]
    text = json.dumps(report)
    assert "NaN" not in text and "Infinity" not in text


# ---------------------------------------------------------------------------------------------
# probe -> reliability, a timeout in probe, and kill + resume


def probe_args(journal: Path, *extra: str) -> list[str]:
    args = ["probe", "--model", MODEL, "--concurrency", "1", "--no-progress", "-o", str(journal)]
    for prompt in PROMPTS:
        args += ["--prompt", prompt]
    return [*args, *extra]


def test_probe_timeouts_are_recorded_and_the_process_carries_on(tmp_path: Path) -> None:
    journal = tmp_path / "timeouts.jsonl"
    code, _, stderr = invoke(
        *probe_args(journal, "--trials", "1", "--max-tokens", "400", "--timeout", "0.5", "--json")
    )
    assert code == 0, stderr
    records = read_trial_records([journal]).records
    assert len(records) == len(PROMPTS)
    assert all(r.error_class is ErrorClass.TIMEOUT and r.timed_out for r in records)
    assert not local._LIVE


@pytest.fixture
def killed_and_resumed(tmp_path: Path) -> Path:
    journal = tmp_path / "trials.jsonl"
    args = probe_args(journal, "--trials", "3", "--max-tokens", "6", "--timeout", "300")
    process = subprocess.Popen(
        [sys.executable, "-m", "plumbline", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and process.poll() is None:
            if journal.exists() and journal.read_text().count("\n") >= 1:
                break
            time.sleep(0.2)
        assert process.poll() is None, "the probe finished before it could be killed"
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=60)
    code, _, stderr = invoke(*args, "--json")
    assert code == 0, stderr
    return journal


def test_a_killed_real_model_probe_resumes_then_feeds_reliability(
    killed_and_resumed: Path,
) -> None:
    result = read_trial_records([killed_and_resumed])
    assert not result.errors
    keys = [record.key for record in result.records]
    assert len(keys) == len(set(keys)) == 3 * len(PROMPTS)
    for record in result.records:
        assert record.error_class is None, record.error_message
        assert record.response is not None and record.output_tokens is not None
        assert record.output_tokens <= 6 and record.config.seed == 42 + record.trial
        assert record.latency_seconds is not None and record.latency_seconds > 0
    code, stdout, stderr = invoke("reliability", str(killed_and_resumed), "--json")
    assert code == 0, stderr
    report = json.loads(stdout)
    assert_numbers_in_range(report)


def assert_numbers_in_range(value: Any, path: str = "") -> None:
    """Every number of a report is finite; rates and scores are in range; low <= high."""
    if isinstance(value, dict):
        if isinstance(value.get("low"), float) and isinstance(value.get("high"), float):
            assert value["low"] <= value["high"], path
        for key, item in value.items():
            assert_numbers_in_range(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            assert_numbers_in_range(item, f"{path}[{index}]")
    elif isinstance(value, float):
        assert math.isfinite(value), path
        if ".robustness." in path and "rate" in path:  # CERT's error rates are percentages
            assert -1e-9 <= value <= 100.0 + 1e-9, (path, value)
        elif path.split(".")[2:3] in (["consistency"], ["agreement"], ["performance"]) and not (
            "distance" in path or path.endswith(("standard_error", ".std"))
        ):
            # agreement is a mean cosine similarity: its range (and its interval's) is -1 to 1
            low = -1.0 if path.split(".")[2] == "agreement" else 0.0
            assert low - 1e-9 <= value <= 1.0 + 1e-9, (path, value)


@pytest.fixture(autouse=True, scope="module")
def _no_generation_left_running() -> Iterator[None]:
    yield
    assert not local._LIVE
