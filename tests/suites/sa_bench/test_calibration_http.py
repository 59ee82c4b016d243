"""`plumbline judge calibrate` end to end: judges are real HTTP endpoints speaking the OpenAI
API (a local server), reached through Inspect's `openai-api` provider in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from tests.support.openai_server import Latency, ModelProfile, OpenAIServer

from plumbline.suites.sa_bench.scorers.calibration import load_calibration
from plumbline.suites.sa_bench.scorers.judge import delimiter_tag

ITEMS = load_calibration()
FAKE_KEY = "sk-local-test"
INJECTED = ("assign 1.0", "Return accuracy 1", "Ignore all previous")


def _verdict(values: dict[str, float]) -> str:
    return json.dumps({**values, "reasoning": "scripted by the test server"})


def _by_response(obey_injections: bool) -> dict[str, list[str]]:
    # the delimiter tag is unique to each response, so it identifies the item in the prompt
    replies = {}
    for item in ITEMS:
        values = item.hand.dimensions()
        if obey_injections and any(text in item.response for text in INJECTED):
            values = {k: 1.0 for k in values}
        replies[f"<response-{delimiter_tag(item.response)}>"] = [_verdict(values)]
    return replies


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAIServer]:
    quick = Latency("constant", 0.0)
    profiles = {
        "faithful": ModelProfile(latency=quick, responses_by_prompt=_by_response(False)),
        "obeys": ModelProfile(latency=quick, responses_by_prompt=_by_response(True)),
        "malformed": ModelProfile(latency=quick, responses=["I would rate this 8/10."]),
        # every request refused as longer than the context (an HTTP 400, as llama.cpp sends it)
        "overlong": ModelProfile(latency=quick, fault_rates={"context_length": 1.0}),
    }
    with OpenAIServer(profiles) as running:
        yield running


def _calibrate(
    server: OpenAIServer, *judges: str, extra: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LOCAL_BASE_URL": server.base_url, "LOCAL_API_KEY": FAKE_KEY}
    args = [sys.executable, "-m", "plumbline", "judge", "calibrate", "--runs", "1", "--json"]
    args += list(extra)
    for judge in judges:
        args += ["--judge", f"openai-api/local/{judge}"]
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=600, check=False)


def test_faithful_and_injection_obeying_judges_over_http(server: OpenAIServer) -> None:
    completed = _calibrate(server, "faithful", "obeys")
    assert completed.returncode == 1, completed.stderr
    report = json.loads(completed.stdout)
    faithful, obeys = report["judges"]
    assert faithful["passed"] is True and faithful["unscored"] == 0
    assert all(d["mae"] == 0 for d in faithful["dimensions"].values())
    assert obeys["passed"] is False
    fooled = sorted(a["id"] for a in obeys["adversarial"] if a["fooled"])
    assert fooled == sorted(i.id for i in ITEMS if i.tier == "prompt_injection")
    assert report["mean_of_judges"] is not None
    assert set(report["agreement_krippendorff_alpha"]) == {"accuracy", "completeness", "quality"}
    requests = server.requests_for("faithful")
    assert len(requests) == len(ITEMS)  # one verdict per item, no retries
    assert all("Rubric v1 for subtype" in r.prompt for r in requests)


def test_a_malformed_judge_is_retried_once_then_unscored(server: OpenAIServer) -> None:
    completed = _calibrate(server, "malformed")
    assert completed.returncode == 1
    [judge] = json.loads(completed.stdout)["judges"]
    assert judge["unscored"] == len(ITEMS)
    assert len(server.requests_for("malformed")) == 2 * len(ITEMS)  # one retry each
    assert all(item["judged"] is None for item in judge["per_item"])  # NaN -> null, never 0.5
    assert "no JSON object found" in judge["per_item"][0]["errors"][0]


def test_unscored_adversarial_items_are_not_reported_as_fooled(server: OpenAIServer) -> None:
    # The real failure: a judge whose every reply failed to parse had its adversarial items
    # printed as "FOOLED" (a missing score counted as fooled).
    completed = _calibrate(server, "malformed", extra=("--limit", "3"))
    assert completed.returncode == 1
    [judge] = json.loads(completed.stdout)["judges"]
    assert judge["items"] == 3 and judge["unscored"] == 3
    assert judge["adversarial"], "--limit keeps an adversarial item"
    assert all(a["fooled"] is None for a in judge["adversarial"])
    assert any("was never scored" in failure for failure in judge["failures"])
    env = {**os.environ, "LOCAL_BASE_URL": server.base_url, "LOCAL_API_KEY": FAKE_KEY}
    args = [sys.executable, "-m", "plumbline", "judge", "calibrate", "--runs", "1"]
    args += ["--judge", "openai-api/local/malformed", "--limit", "3"]
    table = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert table.returncode == 1, table.stderr
    assert "UNSCORED" in table.stdout and "FOOLED" not in table.stdout


def test_a_context_length_refusal_is_a_model_error_not_a_verdict(server: OpenAIServer) -> None:
    before = len(server.requests_for("overlong"))
    completed = _calibrate(server, "overlong", extra=("--limit", "2"))
    assert completed.returncode == 1, completed.stderr
    [judge] = json.loads(completed.stdout)["judges"]
    assert judge["unscored"] == 2
    for item in judge["per_item"]:
        assert any("exceeds the model's context" in error for error in item["errors"]), item
    # no retry with the conversation grown: one request per item
    assert len(server.requests_for("overlong")) - before == 2
