"""`plumbline run --adaptive` end to end: real Inspect rounds against a real local server, the
calls the server saw equal to the calls the leaderboard reports, and a killed run resumed."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.support.openai_server import Latency, ModelProfile, OpenAIServer

from plumbline.cli.main import main

QUESTIONS = 80
TASK_FILE = f"""
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


PARITY = ("even", "odd")


@task
def say_yes() -> Task:
    samples = [
        Sample(id=f"q{{i}}", input=f"Question {{i}} ({{PARITY[i % 2]}}): say yes.", target="yes")
        for i in range({QUESTIONS})
    ]
    return Task(dataset=samples, solver=generate(), scorer=includes())
"""
SUITE = """
[suite]
name = "yes-suite"

[[category]]
key = "yes"
name = "Yes"
description = "Says yes."
weight = 1.0
scoring = "binary"
tasks = ["evals/yes.py@say_yes"]
scorer = "includes"
"""
STRONG = "openai-api/local/strong"
WEAK = "openai-api/local/weak"
HALF = "openai-api/local/half"


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAIServer]:
    quick = Latency("constant", 0.005)
    profiles = {
        "strong": ModelProfile(latency=quick, responses=["yes"]),
        "weak": ModelProfile(latency=quick, responses=["no"]),
        "half": ModelProfile(
            latency=quick, responses_by_prompt={"(even)": ["yes"], "(odd)": ["no"]}
        ),
        # its first request fails with an error Inspect does not retry: an interrupted round
        "flaky": ModelProfile(latency=quick, responses=["yes"], faults=["400"]),
    }
    with OpenAIServer(profiles) as running, pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOCAL_BASE_URL", running.base_url)
        patch.setenv("LOCAL_API_KEY", "test-key")
        yield running


def _suite(tmp_path: Path) -> Path:
    (tmp_path / "evals").mkdir(exist_ok=True)
    (tmp_path / "evals" / "yes.py").write_text(TASK_FILE, encoding="utf-8")
    path = tmp_path / "suite.toml"
    path.write_text(SUITE, encoding="utf-8")
    return path


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["run", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _requests(server: OpenAIServer, start: int) -> Counter[str]:
    return Counter(entry.model for entry in server.log[start:])


def test_an_adaptive_run_stops_calling_decided_models(tmp_path: Path, server: OpenAIServer) -> None:
    suite = _suite(tmp_path)
    start = len(server.log)
    code, stdout, stderr = _run(
        str(suite), "--model", STRONG, "--model", WEAK, "--model", HALF, "--adaptive",
        "--round-size", "10", "--log-dir", str(tmp_path / "logs"), "--display", "none", "--json",
    )  # fmt: skip
    assert code == 0, stderr
    document: dict[str, Any] = json.loads(stdout)
    adaptive = document["adaptive"]
    assert adaptive["calls_full"] == 3 * QUESTIONS
    assert adaptive["calls_used"] < adaptive["calls_full"]
    assert adaptive["stop_reason"] == "decided"
    statuses = {(p["first"], p["second"]): p["status"] for p in adaptive["pairs"]}
    assert statuses == {(STRONG, WEAK): "ahead", (STRONG, HALF): "ahead", (WEAK, HALF): "behind"}
    # the harness's own count: the server answered exactly the calls the leaderboard reports
    served = _requests(server, start)
    assert sum(served.values()) == adaptive["calls_used"]
    assert {model.rsplit("/", 1)[-1]: count for model, count in served.items()} == {
        name.rsplit("/", 1)[-1]: count for name, count in adaptive["models"].items()
    }
    assert [group["models"] for group in document["tie_groups"]] == [[STRONG], [HALF], [WEAK]]
    overall = {row["model"]: row["intervals"]["overall"] for row in document["models"]}
    assert all("confidence sequence" in interval["method"] for interval in overall.values())
    assert overall[STRONG]["low"] <= 1.0 <= overall[STRONG]["high"]


def _run_in_process_of_its_own(*args: str) -> tuple[int, str, str]:
    """As a person resumes a run: the same command again, a new process.

    (Within one process Inspect memoizes each model with its HTTP connection pool; a request
    cancelled by the interruption can leave that pool bound to the finished event loop.)
    """
    command = [sys.executable, "-m", "plumbline", "run", *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    return done.returncode, done.stdout, done.stderr


def test_a_killed_adaptive_run_resumes_without_asking_again(
    tmp_path: Path, server: OpenAIServer
) -> None:
    suite = _suite(tmp_path)
    logs = tmp_path / "logs"
    command = [str(suite), "--model", "openai-api/local/flaky", "--model", WEAK, "--adaptive"]
    command += ["--round-size", "10", "--log-dir", str(logs), "--display", "none"]
    command += ["--retry-attempts", "0", "--fail-on-error", "--json"]
    start = len(server.log)
    code, _, stderr = _run_in_process_of_its_own(*command)
    assert code == 1
    assert "run the same command again to resume it" in stderr
    code, stdout, stderr = _run_in_process_of_its_own(*command)
    assert code == 0, stderr
    adaptive = json.loads(stdout)["adaptive"]
    assert adaptive["stop_reason"] == "decided"
    asked = _requests(server, start)
    used = adaptive["models"]
    # the weak model's first round finished: its answers were reused, none asked twice
    assert asked["weak"] == used[WEAK]
    # only the interrupted round's unfinished samples were asked again (a round is 10 questions)
    asked_again = asked["flaky"] - used["openai-api/local/flaky"]
    assert 1 <= asked_again <= 10
    middle = len(server.log)
    again = _run_in_process_of_its_own(*command)
    assert again[0] == 0 and json.loads(again[1])["adaptive"] == adaptive
    assert len(server.log) == middle  # a finished run calls nobody


PRICES = f"""\
version = "test-adaptive-prices"
[models."{STRONG}"]
source = "test"
date = "2026-01-01"
input = 1000000.0
output = 1000000.0
[models."{HALF}"]
source = "test"
date = "2026-01-01"
input = 1000000.0
output = 1000000.0
"""


def test_a_dollar_budget_stops_before_the_round_that_would_pass_it(
    tmp_path: Path, server: OpenAIServer
) -> None:
    """Priced at $1 a token: the unbudgeted run says what a call costs; a budget of 30 calls'
    worth asks the first round (20 calls) and then only what the rest affords."""
    suite = _suite(tmp_path)
    prices = tmp_path / "prices.toml"
    prices.write_text(PRICES, encoding="utf-8")
    common = [str(suite), "--model", STRONG, "--model", HALF, "--adaptive", "--round-size", "10"]
    common += ["--display", "none", "--json", "--prices", str(prices)]
    code, stdout, stderr = _run(*common, "--log-dir", str(tmp_path / "full"))
    assert code == 0, stderr
    unbudgeted = json.loads(stdout)["adaptive"]
    assert unbudgeted["cost_usd"] > 0 and unbudgeted["budget_usd"] is None
    per_call = unbudgeted["cost_usd"] / unbudgeted["calls_used"]
    budget = round(per_call * 30, 2)
    start = len(server.log)
    code, stdout, stderr = _run(*common, "--log-dir", str(tmp_path / "b"), "--budget", f"${budget}")
    assert code == 0, stderr
    adaptive = json.loads(stdout)["adaptive"]
    assert adaptive["stop_reason"] == "budget" and adaptive["budget_usd"] == budget
    assert 20 < adaptive["calls_used"] <= 30 < unbudgeted["calls_used"]
    assert sum(_requests(server, start).values()) == adaptive["calls_used"]
    # projected at the mean cost per question so far: the spend stays within a call's variation
    assert adaptive["cost_usd"] <= budget * 1.05


def test_a_dollar_budget_needs_every_model_priced(tmp_path: Path, server: OpenAIServer) -> None:
    suite = _suite(tmp_path)
    start = len(server.log)
    code, _, stderr = _run(
        str(suite), "--model", STRONG, "--model", WEAK, "--adaptive", "--budget", "$5",
        "--log-dir", str(tmp_path / "logs"), "--display", "none",
    )  # fmt: skip
    assert code == 2
    assert stderr.strip().splitlines() == [
        f"error: --budget in dollars needs a price for every model; price table "
        f"{stderr.split('price table ')[1].split(' ')[0]} has none for {STRONG}, {WEAK} (give "
        "one with --prices FILE, or a budget in calls)"
    ]
    assert len(server.log) == start  # nobody was called
    code, _, stderr = _run(str(suite), "--model", STRONG, "--model", WEAK, "--adaptive",
                           "--budget", "lots")  # fmt: skip
    assert code == 2 and "neither a number of calls (500) nor dollars ($2.50)" in stderr
