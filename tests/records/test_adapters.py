"""Adapters: real agent output → validated run records.

Claude Code and opencode output comes from real scripts that print the documented shapes
(REFERENCE-NOTES §2), run by a small harness the way a real harness runs the agents; Inspect
logs come from running a tiny Inspect task on `mockllm` with two tasks or two models as arms.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from plumbline.cli.main import main
from plumbline.records.adapters import RunContext
from plumbline.records.adapters.claude_code import convert_claude_code
from plumbline.records.adapters.inspect_log import convert_inspect
from plumbline.records.adapters.opencode import convert_opencode
from plumbline.records.run_record import read_run_records

# A stand-in for `claude -p PROMPT --output-format json|stream-json`: deterministic numbers
# derived from the prompt, printed in Claude Code's documented result shape.
FAKE_CLAUDE = r"""
import json, sys, zlib
args = sys.argv[1:]
prompt = args[args.index("-p") + 1]
fmt = args[args.index("--output-format") + 1]
seed = zlib.crc32(prompt.encode())
tools = 1 + seed % 4
usage = {
    "input_tokens": 100 + seed % 50,
    "cache_creation_input_tokens": 2000 + seed % 300,
    "cache_read_input_tokens": 15000 + seed % 1000,
    "output_tokens": 400 + seed % 70,
    "server_tool_use": {"web_search_requests": 0},
    "service_tier": "standard",
}
result = {
    "type": "result",
    "subtype": "success",
    "is_error": False,
    "duration_ms": 10000 + seed % 5000,
    "duration_api_ms": 8000,
    "num_turns": tools + 1,
    "result": "Done.",
    "session_id": f"session-{seed:08x}",
    "total_cost_usd": None if "no-cost" in prompt else round(0.01 + (seed % 100) / 1000, 6),
    "usage": usage,
    "modelUsage": {"claude-sonnet-4-5": {"inputTokens": usage["input_tokens"]}},
    "permission_denials": [],
}
if "no-cost" in prompt:
    del result["total_cost_usd"]
if fmt == "json":
    print(json.dumps(result))
else:
    print(json.dumps({"type": "system", "subtype": "init", "session_id": result["session_id"]}))
    for i in range(tools):
        block = {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": "ls"}}
        print(json.dumps({"type": "assistant", "message": {"content": [block]}}))
        tool_result = {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "ok"}
        print(json.dumps({"type": "user", "message": {"content": [tool_result]}}))
    print(json.dumps(result))
"""

# A stand-in for `opencode export SESSION` (an export document) and `opencode run --format json`
# (an event stream): STEPS steps, each with tokens input=1000·k, output=100·k, reasoning=10·k,
# cache read=5000·k, write=50·k and cost 0.01·k, one tool call per step.
FAKE_OPENCODE = r"""
import json, sys
command, steps = sys.argv[1], int(sys.argv[2])
session = f"ses_{steps:04d}"
start = 1_760_000_000_000
def tokens(k):
    return {"input": 1000 * k, "output": 100 * k, "reasoning": 10 * k,
            "cache": {"read": 5000 * k, "write": 50 * k}}
if command == "export":
    parts = []
    for k in range(1, steps + 1):
        parts.append({"type": "step-start", "sessionID": session})
        parts.append({"type": "tool", "tool": "bash", "sessionID": session,
                      "state": {"status": "completed"}})
        parts.append({"type": "step-finish", "sessionID": session, "reason": "tool-calls",
                      "tokens": tokens(k), "cost": 0.01 * k})
    total = {"input": sum(1000 * k for k in range(1, steps + 1))}
    document = {
        "info": {"id": session, "title": "task", "version": "1.0.0", "projectID": "p",
                 "directory": "/work", "time": {"created": start, "updated": start + 99_000}},
        "messages": [
            {"info": {"id": "msg_1", "sessionID": session, "role": "user",
                      "time": {"created": start}},
             "parts": [{"type": "text", "text": "fix the bug"}]},
            {"info": {"id": "msg_2", "sessionID": session, "role": "assistant",
                      "time": {"created": start + 1000, "completed": start + 42_500},
                      "modelID": "claude-sonnet-4", "providerID": "anthropic",
                      "cost": 0.0, "tokens": {"input": total["input"], "output": 0,
                                              "reasoning": 0, "cache": {"read": 0, "write": 0}}},
             "parts": parts},
        ],
    }
    print(json.dumps(document, indent=2))
else:
    clock = start
    for k in range(1, steps + 1):
        clock += 1000
        print(json.dumps({"type": "step_start", "timestamp": clock, "sessionID": session,
                          "part": {"type": "step-start", "sessionID": session}}))
        clock += 2000
        print(json.dumps({"type": "tool_use", "timestamp": clock, "sessionID": session,
                          "part": {"type": "tool", "tool": "bash", "sessionID": session,
                                   "state": {"status": "completed"}}}))
        clock += 4000
        print(json.dumps({"type": "step_finish", "timestamp": clock, "sessionID": session,
                          "part": {"type": "step-finish", "sessionID": session,
                                   "tokens": tokens(k), "cost": 0.01 * k}}))
"""


def install(tmp_path: Path, name: str, source: str) -> Path:
    script = tmp_path / "bin" / name
    script.parent.mkdir(exist_ok=True)
    script.write_text(f"#!{sys.executable}\n{source}")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def run_agent(command: list[str], output: Path) -> None:
    output.parent.mkdir(parents=True, exist_ok=True)
    completed = subprocess.run(command, check=True, capture_output=True, text=True)
    output.write_text(completed.stdout)


def claude_harness(tmp_path: Path, fmt: str = "json") -> tuple[Path, Path]:
    """Run the fake Claude Code per task × arm × repeat, as a harness would, with outcomes."""
    claude = install(tmp_path, "claude", FAKE_CLAUDE)
    runs = tmp_path / "runs"
    outcomes = []
    for task in ("fix-bug", "add-flag"):
        for arm in ("with_skelly", "without_skelly"):
            for repeat in range(1, 4):
                prompt = f"{task} {arm} {repeat}" + (" no-cost" if repeat == 3 else "")
                run_agent(
                    [str(claude), "-p", prompt, "--output-format", fmt],
                    runs / arm / task / f"{repeat}.json",
                )
                outcomes.append(
                    {"task_id": task, "arm": arm, "repeat": repeat, "acceptance_exit_code": 0}
                )
    outcomes_path = tmp_path / "outcomes.jsonl"
    outcomes_path.write_text("".join(json.dumps(o) + "\n" for o in outcomes))
    return runs, outcomes_path


def test_claude_code_results_become_run_records(tmp_path: Path) -> None:
    runs, outcomes = claude_harness(tmp_path)
    out = tmp_path / "records.jsonl"
    result = CliRunner().invoke(
        main,
        [
            "records", "convert", "--from", "claude-code", str(runs),
            "--path-template", "{arm}/{task_id}/{repeat}.json",
            "--outcomes", str(outcomes), "-o", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "wrote 12 run records" in result.output
    table = read_run_records([out])
    assert table.errors == [] and table.frame.height == 12
    first = json.loads(out.read_text().splitlines()[0])
    raw = json.loads(
        (runs / first["arm"] / first["task_id"] / f"{first['repeat']}.json").read_text()
    )
    assert first["duration_seconds"] == raw["duration_ms"] / 1000
    assert first["input_tokens"] == raw["usage"]["input_tokens"]
    assert first["cache_read_tokens"] == raw["usage"]["cache_read_input_tokens"]
    assert first["cache_write_tokens"] == raw["usage"]["cache_creation_input_tokens"]
    assert first["step_count"] == raw["num_turns"]
    assert first["session_id"] == raw["session_id"]
    assert first["success"] is True and first["agent"] == "claude-code"
    assert first["model"] == "claude-sonnet-4-5"
    # No cost reported: null, never 0.
    costs = table.frame.filter(table.frame["repeat"] == 3)["total_cost_usd"]
    assert costs.null_count() == 4
    arms = ["-t", "with_skelly", "-c", "without_skelly"]
    compared = CliRunner().invoke(
        main, ["compare", str(out), *arms, "--resamples", "200", "--json"]
    )
    assert compared.exit_code == 0
    assert json.loads(compared.output)["paired"]["pairs"] == 6


def test_claude_code_stream_json_counts_tool_calls(tmp_path: Path) -> None:
    runs, outcomes = claude_harness(tmp_path, fmt="stream-json")
    from plumbline.records.adapters import load_outcomes

    known, errors = load_outcomes(outcomes)
    assert errors == []
    files: list[str | Path] = sorted(runs.rglob("*.json"))
    context = RunContext(path_template="{arm}/{task_id}/{repeat}.json", outcomes=known)
    conversion = convert_claude_code(files, context)
    assert conversion.errors == []
    for record in conversion.records:
        assert record.tool_call_count is not None
        assert record.step_count == record.tool_call_count + 1  # the fake's num_turns


def test_claude_code_without_an_acceptance_result_is_reported_not_guessed(
    tmp_path: Path,
) -> None:
    runs, _ = claude_harness(tmp_path)
    path = runs / "with_skelly" / "fix-bug" / "1.json"
    conversion = convert_claude_code(
        [path], RunContext(path_template="{arm}/{task_id}/{repeat}.json")
    )
    assert conversion.records == []
    [error] = conversion.errors
    assert str(error).startswith(f"{path}:1: success: missing: the agent output has no")
    strict = CliRunner().invoke(
        main, ["records", "convert", "--from", "claude-code", str(path), "--arm", "a",
               "--task-id", "t", "--repeat", "1", "--strict"],
    )  # fmt: skip
    assert strict.exit_code == 2 and "success: missing" in strict.stderr


def test_opencode_export_and_event_stream(tmp_path: Path) -> None:
    opencode = install(tmp_path, "opencode", FAKE_OPENCODE)
    export = tmp_path / "export.json"
    events = tmp_path / "events.jsonl"
    run_agent([str(opencode), "export", "3"], export)
    run_agent([str(opencode), "run", "3"], events)
    context = RunContext(arm="with_skelly", task_id="fix-bug", repeat=1, defaults={"success": True})
    conversion = convert_opencode([export, events], context)
    assert conversion.errors == []
    from_export, from_events = conversion.records
    steps = range(1, 4)
    for record in (from_export, from_events):
        assert record.input_tokens == sum(1000 * k for k in steps)
        assert record.output_tokens == sum(110 * k for k in steps)  # reasoning counts as output
        assert record.cache_read_tokens == sum(5000 * k for k in steps)
        assert record.cache_write_tokens == sum(50 * k for k in steps)
        assert record.total_cost_usd == pytest.approx(0.06)
        assert record.step_count == 3 and record.tool_call_count == 3
        assert record.session_id == "ses_0003" and record.agent == "opencode"
    assert from_export.duration_seconds == pytest.approx(42.5)
    assert from_export.model == "claude-sonnet-4"
    assert from_events.duration_seconds == pytest.approx(20.0)  # first to last event


def test_opencode_rejects_other_json(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text('{"hello": "world"}\n')
    conversion = convert_opencode([path], RunContext())
    assert [str(e) for e in conversion.errors] == [
        f"{path}:1: <record>: neither an opencode export ({{info, messages}}) nor an opencode event"
    ]


def _inspect_logs(log_dir: Path) -> list[Path]:
    """Two arms as two tasks (with/without a hint) and as two models; 3 samples × 5 epochs."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, system_message

    def respond(messages: list[Any], tools: Any, choice: Any, config: Any) -> ModelOutput:
        text = " ".join(m.text for m in messages)
        if "explode" in text and "hint" not in text:
            raise RuntimeError("agent crashed")
        answer = "Paris" if "hint" in text or "capital" in text else "no idea"
        output = ModelOutput.from_content(model="mockllm/model", content=answer)
        output.usage = ModelUsage(
            input_tokens=len(text), output_tokens=len(answer), total_tokens=len(text) + 7,
            input_tokens_cache_read=3, input_tokens_cache_write=None,
        )  # fmt: skip
        return output

    dataset = [
        Sample(id=1, input="What is the capital of France?", target="Paris"),
        Sample(id=2, input="Name a city.", target="Paris"),
        Sample(id=3, input="explode", target="Paris"),
    ]
    tasks = [
        Task(dataset=dataset, solver=[system_message("hint: Paris"), generate()],
             scorer=includes(), name="with_hint"),
        Task(dataset=dataset, solver=generate(), scorer=includes(), name="without_hint"),
    ]  # fmt: skip
    logs = inspect_eval(
        tasks,
        model=get_model("mockllm/model", custom_outputs=respond),
        epochs=5,
        log_dir=str(log_dir),
        fail_on_error=False,
        display="none",
    )
    return [Path(log.location) for log in logs]


@pytest.fixture(scope="module")
def inspect_logs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return _inspect_logs(tmp_path_factory.mktemp("inspect"))


def test_inspect_tasks_as_arms(inspect_logs: list[Path]) -> None:
    conversion = convert_inspect(list(inspect_logs), RunContext(), arm_from="task")
    assert conversion.errors == []
    records = conversion.records
    assert len(records) == 2 * 3 * 5
    assert {(r.task_id, r.repeat) for r in records} == {
        (str(i), e) for i in (1, 2, 3) for e in range(1, 6)
    }
    by_arm = {arm: [r for r in records if r.arm == arm] for arm in ("with_hint", "without_hint")}
    assert sum(r.success for r in by_arm["with_hint"]) == 15
    assert sum(r.success for r in by_arm["without_hint"]) == 5  # only the capital question
    crashed = [r for r in by_arm["without_hint"] if r.task_id == "3"]
    assert all(not r.success and not r.infra_failure for r in crashed)  # a crash is a failure
    assert all(r.infra_failure_reason and "agent crashed" in r.infra_failure_reason
               for r in crashed)  # fmt: skip
    answered = next(r for r in records if r.task_id == "1")
    assert answered.input_tokens and answered.cache_read_tokens == 3
    assert answered.cache_write_tokens == 0 and answered.model == "mockllm/model"
    assert answered.total_cost_usd is None  # mockllm reports no cost


def test_inspect_sample_errors_can_be_classed_as_infrastructure(
    inspect_logs: list[Path], tmp_path: Path
) -> None:
    out = tmp_path / "records.jsonl"
    result = CliRunner().invoke(
        main,
        ["records", "convert", "--from", "inspect", *map(str, inspect_logs),
         "--arm-from", "task", "--sample-errors", "infra", "-o", str(out), "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["records"] == 30 and summary["invalid"] == 0
    compared = CliRunner().invoke(
        main,
        ["compare", str(out), "-t", "with_hint", "-c", "without_hint", "--resamples", "200",
         "--json"],
    )  # fmt: skip
    report = json.loads(compared.output)
    assert report["input"]["infra_failures"] == {"without_hint": 5}
    assert report["arm_summaries"]["without_hint"]["runs"] == 10
    assert report["paired"]["pairs"] == 10


def test_inspect_models_as_arms(tmp_path: Path, inspect_logs: list[Path]) -> None:
    conversion = convert_inspect(list(inspect_logs[:1]), RunContext(), arm_from="model")
    assert {r.arm for r in conversion.records} == {"mockllm/model"}
    broken = tmp_path / "broken.eval"
    broken.write_text("not a log")
    failed = convert_inspect([broken], RunContext())
    assert failed.records == [] and str(failed.errors[0]).startswith(f"{broken}:1: <log>: ")


def test_convert_prints_records_to_stdout(tmp_path: Path) -> None:
    runs, outcomes = claude_harness(tmp_path)
    result = CliRunner().invoke(
        main,
        ["records", "convert", "--from", "claude-code", str(runs / "with_skelly" / "fix-bug"),
         "--path-template", "{arm}/{task_id}/{repeat}.json", "--outcomes", str(outcomes)],
    )  # fmt: skip
    lines = result.output.splitlines()
    assert len(lines) == 3
    assert all(json.loads(line)["arm"] == "with_skelly" for line in lines)
    assert os.path.basename(str(runs)) == "runs"
