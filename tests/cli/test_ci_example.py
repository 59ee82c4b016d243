"""docs/ci-example.yml: a GitHub Actions workflow whose plumbline commands run, in order, on the
demo data (scripted models, the bundled agent run records), gate as promised, and build a site."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from plumbline.cli.main import main

ROOT = Path(__file__).parents[2]
WORKFLOW = ROOT / "docs/ci-example.yml"
EXAMPLES = ROOT / "src/plumbline/examples"


def steps() -> list[dict[str, Any]]:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    # PyYAML reads the bare key `on` as True (YAML 1.1); GitHub reads it as the trigger.
    assert "pull_request" in (workflow.get("on") or workflow.get(True))
    (job,) = workflow["jobs"].values()
    return list(job["steps"])


def plumbline_commands() -> list[tuple[str, list[str]]]:
    found = []
    for step in steps():
        run = step.get("run", "")
        for line in run.splitlines():
            if line.strip().startswith("plumbline "):
                found.append((step["name"], shlex.split(line)))
    return found


def test_the_workflow_is_a_valid_pull_request_gate() -> None:
    names = [name for name, _ in plumbline_commands()]
    commands = [args[1] for _, args in plumbline_commands()]
    assert commands == ["run", "leaderboard", "compare", "report"]
    assert any("--fail-unless" in args for _, args in plumbline_commands())
    assert any(args[1:3] == ["leaderboard", "check"] for _, args in plumbline_commands())
    upload = [s for s in steps() if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    (report_step,) = [s for s in steps() if s.get("name") == names[-1]]
    site = shlex.split(report_step["run"])[-1]
    assert upload and upload[0]["with"]["path"] == site
    assert report_step.get("if") == "always()" and upload[0].get("if") == "always()"


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    plumbline = [sys.executable, "-m", "plumbline"]
    return subprocess.run(
        [*plumbline, *args[1:]], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


def run_in_process(args: list[str], cwd: Path) -> tuple[int, str]:
    """A workflow command once more, in this process (after the workflow itself ran, each
    command in its own process): its exit code and stdout."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(cwd)
        result = CliRunner().invoke(main, args[1:])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.stdout


@pytest.mark.slow
def test_the_workflow_commands_run_on_the_demo_data(tmp_path: Path) -> None:
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is needed for the CDK sandbox (.ci/run installs it)")
    agent_runs = tmp_path / "evals/agent-runs"
    agent_runs.mkdir(parents=True)
    shutil.copy(EXAMPLES / "agent_runs.jsonl", agent_runs / "records.jsonl")
    commands = plumbline_commands()
    name, suite_run = commands[0]
    result = run(suite_run, tmp_path)
    assert result.returncode == 0, (name, result.stderr[-3000:])
    board = tmp_path / "evals/out/leaderboard.json"
    document = json.loads(board.read_text(encoding="utf-8"))
    assert {m["model"] for m in document["models"]} == {"scripted/oracle", "scripted/weak"}
    # The published reference: this very run, as a team would commit it from main.
    published = tmp_path / "evals/published-leaderboard.json"
    shutil.copy(board, published)
    # The bundled A/B records cannot tell the arms apart: the gate closes (exit 1), and the
    # site is still built (`if: always()`), as on GitHub.
    expected = {"Reproduce the published leaderboard": 0, "Gate on the agent A/B decision": 1}
    always = {step["name"] for step in steps() if step.get("if") == "always()"}
    for name, args in commands[1:]:
        result = run(args, tmp_path)
        assert result.returncode == expected.get(name, 0), (name, result.stderr[-2000:])
        assert name in expected or name in always
    decision = json.loads((tmp_path / "evals/out/compare.json").read_text(encoding="utf-8"))
    assert decision
    assert (tmp_path / "evals/out/runs.parquet").is_file()
    assert (tmp_path / "evals/site/index.html").is_file()

    # A change that clearly helps opens the gate.
    records = [
        json.loads(line)
        for line in (agent_runs / "records.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    for record in records:
        record["success"] = record["arm"] == "with_skelly"
    lines = "\n".join(json.dumps(record) for record in records) + "\n"
    (agent_runs / "records.jsonl").write_text(lines, encoding="utf-8")
    gate = next(args for name, args in commands if name == "Gate on the agent A/B decision")
    assert run_in_process(gate, tmp_path)[0] == 0

    # The gate fails when the published leaderboard is not reproduced.
    stale = json.loads(published.read_text(encoding="utf-8"))
    for model in stale["models"]:
        if model["model"] == "scripted/weak":
            model["overall"] = min(1.0, model["overall"] + 0.2)
    published.write_text(json.dumps(stale), encoding="utf-8")
    check = next(args for _, args in commands if args[1:3] == ["leaderboard", "check"])
    code, stdout = run_in_process(check, tmp_path)
    assert code == 1
    assert "disagrees with its own weights" in stdout
