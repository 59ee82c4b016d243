"""`--html DIR` on the commands that build leaderboards: the same document, as a site."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import outside_event_loop
from click.testing import CliRunner, Result
from report_scenario import Scenario
from tests.support.openai_server import Latency, ModelProfile, OpenAIServer

from plumbline.cli.main import main

TASK_FILE = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


@task
def echo_check() -> Task:
    samples = [
        Sample(id=f"q{i}", input=f"Say the default output ({i}).", target="Default output")
        for i in range(3)
    ]
    return Task(dataset=samples, solver=generate(), scorer=includes())
"""

SUITE = """
[suite]
name = "echo-suite"
title = "Echo <b>suite</b>"

[[category]]
key = "echo"
name = "Echo"
description = "Does the model say the expected words."
weight = 1.0
scoring = "binary"
tasks = ["evals/echo.py@echo_check"]
scorer = "includes"
"""


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAIServer]:
    quick = Latency("constant", 0.01)
    # A model name of this module's own: Inspect memoizes models by name, so a name another
    # module used in this process would reach that module's (stopped) server.
    profiles = {"html-alpha": ModelProfile(latency=quick, responses=["Default output <script>"])}
    with OpenAIServer(profiles) as running, pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOCAL_BASE_URL", running.base_url)
        patch.setenv("LOCAL_API_KEY", "test-key")
        yield running


def invoke(*args: str) -> Result:
    # Inspect's eval_set runs asyncio; a browser test earlier in this worker may have left
    # Playwright's loop marked as running on the main thread.
    return outside_event_loop(CliRunner().invoke, main, list(args), catch_exceptions=False)


def test_leaderboard_build_html_writes_the_site(scenario: Scenario, tmp_path: Path) -> None:
    site = tmp_path / "site"
    out = tmp_path / "board.json"
    result = invoke(
        "leaderboard", str(scenario.logs), "-o", str(out), "--html", str(site), "--run-id", "r1"
    )
    assert result.exit_code == 0, result.output
    assert f"open {(site / 'index.html').resolve().as_uri()}" in result.output
    written = json.loads(out.read_text())
    assert json.loads((site / "data" / "board.json").read_text()) == written
    model_pages = sorted(p.name for p in (site / "board" / "models").glob("*.html"))
    assert model_pages == [
        "mockllm-script-alert-1-script-img-src-x-onerror-alert-1.html",
        "scripted-oracle.html",
    ]
    # The logs were passed on: the model page lists samples, not the "no logs" note.
    oracle = (site / "board" / "models" / "scripted-oracle.html").read_text()
    assert 'id="samples"' in oracle


def test_run_html_writes_the_site_from_this_runs_logs(server: OpenAIServer, tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "echo.py").write_text(TASK_FILE, encoding="utf-8")
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE, encoding="utf-8")
    site = tmp_path / "site"
    result = invoke(
        "run", str(suite), "--model", "openai-api/local/html-alpha", "--log-dir",
        str(tmp_path / "logs"), "--display", "none", "--html", str(site),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    document = json.loads((tmp_path / "logs" / "leaderboard.json").read_text())
    assert json.loads((site / "data" / "leaderboard.json").read_text()) == document
    page = (site / "leaderboard" / "models" / "openai-api-local-html-alpha.html").read_text()
    assert page.count('data-category="echo"') == 3  # every sample, from this run's logs
    assert "Default output &lt;script&gt;" in page
    assert "Echo &lt;b&gt;suite&lt;/b&gt;" in (site / "leaderboard" / "index.html").read_text()
