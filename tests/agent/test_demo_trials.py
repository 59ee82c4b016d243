"""The demo's agent trials: the scripted coding model over real HTTP, and the demo's own `agent
run` and `compare` steps, run in the sandbox with the harness metering every call."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

from click.testing import CliRunner
from tests.agent.helpers import read_jsonl

from plumbline.app.demo_trials import demo_agent
from plumbline.cli.demo import AGENT_REPEATS, demo_steps, example_path
from plumbline.cli.main import main
from plumbline.models.scripted_coder import MODEL, ScriptedCoder, edits_for, tokens

CALC = "def add(a, b):\n    return a - b\n"
MEAN = "def mean(values):\n    return sum(values) / (len(values) - 1)\n"


def test_the_model_follows_a_hint_else_fixes_only_what_it_sees() -> None:
    hint = example_path("agent_suite/hints/HINT.md").read_text()
    files = {"calc.py": CALC, "mean.py": MEAN}
    hinted = edits_for(hint, files)
    assert {(e["file"], e["old"], e["new"]) for e in hinted} == {
        ("calc.py", "return a - b", "return a + b"),
        ("mean.py", "len(values) - 1", "len(values)"),
    }
    assert edits_for("fix it", files) == [
        {"file": "calc.py", "old": "return a - b", "new": "return a + b"}
    ]
    unseen = edits_for("fix it", {"mean.py": MEAN})
    assert unseen[0]["new"] == MEAN + "\n# Looked here.\n"  # a comment: the bug stays


def test_the_model_answers_the_messages_api_with_its_usage() -> None:
    message = f'Fix it.\n\n<file name="calc.py">\n{CALC}\n</file>'
    body = json.dumps(
        {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": message}]}
    )
    with ScriptedCoder() as coder:
        request = urllib.request.Request(
            coder.base_url + "/v1/messages",
            data=body.encode(),
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            answer = json.load(response)
    text = answer["content"][0]["text"]
    assert json.loads(text)["edits"][0]["new"] == "return a + b"
    assert answer["model"] == MODEL
    assert answer["usage"] == {"input_tokens": tokens(body), "output_tokens": tokens(text)}


def test_the_demos_agent_steps_run_metered_trials_in_the_sandbox(tmp_path: Path) -> None:
    with demo_agent(tmp_path) as agent:
        steps = [s for s in demo_steps(tmp_path, agent=agent) if s.args[0] in ("agent", "compare")]
        steps = [s for s in steps if "with_skelly" not in s.args]  # the bundled records' A/B
        assert [s.args[:2] for s in steps] == [
            ("agent", "run"),
            ("compare", str(tmp_path / "agent-trials" / "records.jsonl")),
        ]
        assert all(step.not_run is None for step in steps)
        for step in steps:
            result = CliRunner().invoke(main, list(step.args), catch_exceptions=False)
            assert result.exit_code == 0, result.output
    records = read_jsonl(tmp_path / "agent-trials" / "records.jsonl")
    assert len(records) == 2 * 2 * AGENT_REPEATS
    for record in records:
        assert record["sandbox"] == "bubblewrap" and record["network"] == "isolated"
        assert record["usage_source"] == "metered" and record["metered_usage"]["calls"] == 1
        # the agent reported exactly what the harness counted
        assert record["usage_discrepancy"] == 0.0 and not record["usage_discrepancy_flagged"]
        assert record["input_tokens"] == record["metered_usage"]["input_tokens"] > 0
    solved = {(r["task_id"], r["arm"]): r["success"] for r in records}
    # the hint fixes both bugs; without it the model fixes only the one it sees
    assert solved == {
        ("fix-add", "with_hint"): True,
        ("fix-mean", "with_hint"): True,
        ("fix-add", "without_hint"): True,
        ("fix-mean", "without_hint"): False,
    }
    analysis = json.loads((tmp_path / "agent-compare.json").read_text())
    assert "demo-prices-1" in json.dumps(analysis)  # priced with the demo's made-up table


def test_without_its_model_server_the_demo_shows_its_agent_steps_as_not_run(tmp_path: Path) -> None:
    steps = [s for s in demo_steps(tmp_path) if s.args[0] == "agent"]
    assert len(steps) == 1 and steps[0].not_run
