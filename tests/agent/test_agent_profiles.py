"""Agent commands and profiles: templates, detection, and usage parsed from each agent's output."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from plumbline.agent.profiles import AgentCommandError, count_runs_of, resolve_agent
from plumbline.records.adapters import codex

# `codex exec --json` output shaped like its documentation (a command, a file change, an MCP
# tool call and the final message, two turns with usage).
CODEX_EVENTS = [
    {"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"},
    {"type": "turn.started"},
    {
        "type": "item.started",
        "item": {
            "id": "item_0",
            "type": "command_execution",
            "command": "bash -lc 'python3 -m unittest'",
            "aggregated_output": "",
            "exit_code": None,
            "status": "in_progress",
        },
    },
    {
        "type": "item.completed",
        "item": {
            "id": "item_0",
            "type": "command_execution",
            "command": "bash -lc 'python3 -m unittest'",
            "aggregated_output": "FAILED (failures=1)\n",
            "exit_code": 1,
            "status": "completed",
        },
    },
    {"type": "item.completed", "item": {"id": "item_1", "type": "reasoning", "text": "**Fix**"}},
    {
        "type": "item.completed",
        "item": {
            "id": "item_2",
            "type": "file_change",
            "changes": [{"path": "calc.py", "kind": "update"}],
            "status": "completed",
        },
    },
    {
        "type": "turn.completed",
        "usage": {"input_tokens": 24_763, "cached_input_tokens": 24_448, "output_tokens": 122},
    },
    {"type": "turn.started"},
    {
        "type": "item.completed",
        "item": {
            "id": "item_3",
            "type": "mcp_tool_call",
            "server": "fs",
            "tool": "read_file",
            "arguments": {},
            "result": None,
            "error": None,
            "status": "completed",
        },
    },
    {"type": "item.completed", "item": {"id": "item_4", "type": "agent_message", "text": "Done."}},
    {
        "type": "turn.completed",
        "usage": {"input_tokens": 1_000, "cached_input_tokens": 0, "output_tokens": 40},
    },
]


def test_codex_usage_summed_over_turns_with_cached_input_split_out() -> None:
    fields = codex.events_to_fields(CODEX_EVENTS)
    assert fields["input_tokens"] == 24_763 - 24_448 + 1_000
    assert fields["cache_read_tokens"] == 24_448
    assert fields["output_tokens"] == 162
    assert fields["cache_write_tokens"] == 0
    assert fields["total_cost_usd"] is None  # Codex reports no cost: unknown, not zero
    assert fields["tool_call_count"] == 3  # command, file change, MCP tool call
    assert fields["session_id"] == "0199a213-81c0-7800-8aa1-bbab2a035a53"


def test_codex_cache_writes_are_kept_apart_from_the_input() -> None:
    # The turn.completed line Codex CLI 0.171 printed in tests/agent/test_real_agents.py: four
    # Responses API answers of 1000..1300 input tokens, 800 cached and 50 written to the cache.
    usage = {
        "input_tokens": 4600,
        "cached_input_tokens": 3200,
        "cache_write_input_tokens": 200,
        "output_tokens": 86,
        "reasoning_output_tokens": 0,
    }
    fields = codex.events_to_fields([{"type": "turn.completed", "usage": usage}])
    assert fields["input_tokens"] == 1200  # neither read from nor written to the cache
    assert fields["cache_read_tokens"] == 3200 and fields["cache_write_tokens"] == 200
    assert fields["output_tokens"] == 86


def test_codex_without_usage_leaves_tokens_unknown() -> None:
    fields = codex.events_to_fields([{"type": "thread.started", "thread_id": "t"}])
    assert fields["input_tokens"] is None and fields["cache_write_tokens"] is None


def test_codex_profile_parses_jsonl_output(tmp_path: Path) -> None:
    stdout = tmp_path / "agent.stdout"
    stdout.write_text("".join(json.dumps(e) + "\n" for e in CODEX_EVENTS))
    command = resolve_agent("codex exec --json --dangerously-bypass-approvals-and-sandbox {prompt}")
    assert command.profile.name == "codex"
    parsed, commands = command.report(stdout)
    assert parsed["input_tokens"] == 1_315 and parsed["tool_call_count"] == 3
    assert commands == ["bash -lc 'python3 -m unittest'"]
    assert count_runs_of("python3  -m unittest", commands) == 1
    assert count_runs_of("pytest", commands) == 0
    assert count_runs_of("pytest", None) is None
    assert "agent" not in parsed  # the harness owns the record's other fields


def test_opencode_profile_reads_run_events(tmp_path: Path) -> None:
    session = "ses_1"
    events = []
    for k, stamp in ((1, 1_000), (2, 9_000)):
        events.append(
            {
                "type": "tool_use",
                "timestamp": stamp,
                "sessionID": session,
                "part": {"type": "tool", "tool": "bash", "sessionID": session},
            }
        )
        events.append(
            {
                "type": "step_finish",
                "timestamp": stamp + 500,
                "sessionID": session,
                "part": {
                    "type": "step-finish",
                    "sessionID": session,
                    "cost": 0.01 * k,
                    "tokens": {
                        "input": 100 * k,
                        "output": 10 * k,
                        "reasoning": k,
                        "cache": {"read": 1000 * k, "write": 5 * k},
                    },
                },
            }
        )
    stdout = tmp_path / "agent.stdout"
    stdout.write_text("INFO starting\n" + "".join(json.dumps(e) + "\n" for e in events))
    command = resolve_agent("opencode")
    parsed, commands = command.report(stdout)
    assert commands == []  # its tool parts carry no shell command input
    assert parsed["input_tokens"] == 300 and parsed["output_tokens"] == 33
    assert parsed["cache_read_tokens"] == 3000 and parsed["tool_call_count"] == 2
    assert parsed["duration_seconds"] == pytest.approx(8.5)


def test_generic_profile_reports_nothing(tmp_path: Path) -> None:
    stdout = tmp_path / "agent.stdout"
    stdout.write_text(json.dumps({"usage": {"input_tokens": 5}, "duration_ms": 10}))
    command = resolve_agent("my-agent --task {prompt_file}")
    assert command.profile.name == "generic"
    assert command.parse(stdout) == {}


def test_template_keeps_the_prompt_one_argument(tmp_path: Path) -> None:
    command = resolve_agent("claude -p {prompt} --output-format json")
    prompt = 'fix it; rm -rf / `echo {workspace}` $(id) "quoted"'
    argv, via_stdin = command.argv(prompt, tmp_path / "prompt.txt", tmp_path / "ws")
    assert argv == ["claude", "-p", prompt, "--output-format", "json"]
    assert not via_stdin
    argv, _ = resolve_agent("tool --in={prompt_file} --cwd {workspace}").argv(
        "p", tmp_path / "prompt.txt", tmp_path / "ws"
    )
    assert argv == ["tool", f"--in={tmp_path / 'prompt.txt'}", "--cwd", str(tmp_path / "ws")]
    argv, via_stdin = resolve_agent("aider --yes").argv("p", tmp_path / "p.txt", tmp_path)
    assert argv == ["aider", "--yes"] and via_stdin


def test_profile_names_and_detection() -> None:
    assert resolve_agent("claude-code").template == (
        "claude -p {prompt} --output-format stream-json --verbose "
        "--allowedTools Bash,Edit,Write,Read,Glob,Grep"
    )
    assert resolve_agent("/opt/bin/claude -p {prompt}").profile.name == "claude-code"
    assert resolve_agent("python fake.py {prompt}", "claude-code").profile.name == "claude-code"
    with pytest.raises(AgentCommandError, match="unknown profile"):
        resolve_agent("x {prompt}", "gemini")
    with pytest.raises(AgentCommandError, match="empty"):
        resolve_agent("   ")
    with pytest.raises(AgentCommandError):
        resolve_agent(shlex.quote("a") + ' "unclosed')
