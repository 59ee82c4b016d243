"""Each adapter forced to its public path (`PLUMBLINE_COMPAT`) gives the records its fast path
gives, apart from timings: the judge on the local OpenAI-compatible server, and `cdk check` on
the real CDK toolchain in the real sandbox. (The probe's call paths are compared the same way,
every fault included, in `tests/probe/test_direct_call.py`.)"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.probe.helpers import FAKE_KEY, model_name
from tests.support.openai_server import Latency, ModelProfile

ROOT = Path(__file__).resolve().parents[2]
APPS = ROOT / "tests" / "cdk" / "apps"
VERDICT = json.dumps({"accuracy": 0.5, "completeness": 0.75, "quality": 1.0, "reasoning": "ok"})
# each judge: the answers of its two attempts (faults, then the verdict where it recovers)
JUDGES = {
    "fine": ["ok"],
    "recovers": ["no_message", "ok"],
    "error object twice": ["error_body", "empty_choices"],
    "not json": ["malformed", "ok"],
    "server errors": ["500", "429"],  # retried by the SDK below the judge, on every path
    "refused as too long": ["context_length", "ok"],
}


def _judge_outcomes(server_factory: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model

    from plumbline.suites.sa_bench.scorers.judge import run_judge

    profiles = {
        f"j{i}": ModelProfile(
            latency=Latency("constant", 0.01), faults=faults, responses=[VERDICT], api_key=FAKE_KEY
        )
        for i, faults in enumerate(JUDGES.values())
    }
    server = server_factory(profiles)
    monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
    monkeypatch.setenv("LOCAL_API_KEY", FAKE_KEY)
    outcomes = {}
    for i, name in enumerate(JUDGES):
        model = get_model(model_name(f"j{i}"), config=GenerateConfig(max_retries=0), memoize=False)
        messages: list[Any] = [ChatMessageUser(content="Grade this answer.")]
        outcomes[name] = asyncio.run(run_judge(model, messages)).to_dict()
    return outcomes


@pytest.mark.slow
def test_the_judge_gives_the_same_outcomes_on_the_public_paths(
    server_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PLUMBLINE_COMPAT", raising=False)
    fast = _judge_outcomes(server_factory, monkeypatch)
    monkeypatch.setenv("PLUMBLINE_COMPAT", "public")
    public = _judge_outcomes(server_factory, monkeypatch)
    assert public == fast
    # the comparison covers verdicts, recoveries and every kind of failed answer
    assert fast["fine"]["score"] is not None and fast["recovers"]["attempts"] == 2
    assert "MalformedResponseError" in fast["error object twice"]["errors"][0]
    assert "the answer is not JSON" in fast["not json"]["errors"][0]
    assert "exceeds the model's context" in fast["refused as too long"]["errors"][0]


# what differs between two runs of the same app whatever the path
_TIMINGS = ("seconds",)


def _cdk_check(app: Path, compat: str, *arguments: str) -> dict[str, Any]:
    env = {**os.environ, "PLUMBLINE_COMPAT": compat}
    finished = subprocess.run(
        [sys.executable, "-m", "plumbline", "cdk", "check", str(app), "--json", *arguments],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert finished.returncode in (0, 1), finished.stderr[-2000:]
    result: dict[str, Any] = json.loads(finished.stdout)
    return {k: v for k, v in result.items() if k not in _TIMINGS}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("app", "arguments"),
    [
        ("good/queue_table_env.py", ()),
        ("bad/invalid_bucket_name.py", ()),
        # the built-in validator's report comes through the jsii runtime's relay thread: the
        # early stop exists so that it reaches the log
        ("bad/lint_bad_reference.py", ("--builtin-validation",)),
    ],
)
def test_cdk_check_gives_the_same_result_without_the_jsii_early_stop(
    app: str, arguments: tuple[str, ...]
) -> None:
    fast = _cdk_check(APPS / app, "", *arguments)
    public = _cdk_check(APPS / app, "public", *arguments)
    assert public == fast
    assert fast["outcome"] == ("passed" if app.startswith("good") else fast["outcome"])
