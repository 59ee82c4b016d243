"""Agent outputs their makers published (fixtures/agents, see its README), converted to run
records: Claude Code's tokens summed over `modelUsage` with each model's share kept, Codex's
`exec --json` stream through `records convert --from codex`, and opencode's per-model detail."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from plumbline.cli.main import main
from plumbline.records.adapters import RunContext
from plumbline.records.adapters.opencode import convert_opencode
from plumbline.records.run_record import read_run_records

AGENTS = Path(__file__).parent / "fixtures" / "agents"
CLAUDE = AGENTS / "claude_code_two_models.json"
CODEX = AGENTS / "codex_exec_sample.jsonl"


def convert(*args: str) -> Any:
    return CliRunner().invoke(main, ["records", "convert", *args])


def test_claude_code_tokens_are_summed_over_model_usage(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    keys = ["--arm", "a", "--task-id", "t", "--repeat", "1"]
    outcomes = tmp_path / "outcomes.jsonl"
    outcomes.write_text('{"task_id": "t", "arm": "a", "repeat": 1, "success": true}\n')
    result = convert("--from", "claude-code", str(CLAUDE), *keys, "--outcomes", str(outcomes),
                     "-o", str(out))  # fmt: skip
    assert result.exit_code == 0, result.output
    published = json.loads(CLAUDE.read_text(encoding="utf-8"))
    models = published["modelUsage"]
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    # usage holds the Opus model only (5 input tokens); the run also used Haiku.
    assert published["usage"]["input_tokens"] == 5
    assert record["input_tokens"] == sum(m["inputTokens"] for m in models.values()) == 2828
    assert record["output_tokens"] == 270 + 1587
    assert record["cache_read_tokens"] == 59073 and record["cache_write_tokens"] == 30316
    assert record["total_cost_usd"] == published["total_cost_usd"]
    assert [entry["model"] for entry in record["model_usage"]] == list(models)
    haiku = record["model_usage"][0]
    assert (haiku["input_tokens"], haiku["output_tokens"]) == (2823, 270)
    shares = sum(entry["total_cost_usd"] for entry in record["model_usage"])
    assert shares == pytest.approx(published["total_cost_usd"], rel=1e-12)
    assert record["model"] == "claude-haiku-4-5-20251001+claude-opus-4-5-20251101"
    # the per-model detail survives the reader compare uses
    table = read_run_records([out])
    assert table.errors == []
    assert table.frame["model_usage"].to_list()[0][1]["cache_read_tokens"] == 59073


def test_claude_code_model_usage_reaches_agent_run_records() -> None:
    """`agent run` reads Claude Code's output with the same adapter, and keeps the detail."""
    from plumbline.agent.profiles import resolve_agent

    command = resolve_agent("claude-code")
    fields, _ = command.report(CLAUDE)
    assert fields["input_tokens"] == 2828
    assert len(fields["model_usage"]) == 2


def test_codex_exec_json_becomes_a_run_record(tmp_path: Path) -> None:
    outcomes = tmp_path / "outcomes.jsonl"
    outcomes.write_text(
        '{"task_id": "find-readme", "arm": "codex", "repeat": 1, "acceptance_exit_code": 0, '
        '"started_at_utc": "2025-10-01T12:00:00Z", "ended_at_utc": "2025-10-01T12:00:41.5Z"}\n'
    )
    out = tmp_path / "runs.jsonl"
    keys = ["--arm", "codex", "--task-id", "find-readme", "--repeat", "1"]
    result = convert("--from", "codex", str(CODEX), *keys, "--outcomes", str(outcomes),
                     "-o", str(out))  # fmt: skip
    assert result.exit_code == 0, result.output
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    # OpenAI counts cached prompt tokens inside input_tokens: the uncached part is input.
    assert record["input_tokens"] == 24763 - 24448
    assert record["cache_read_tokens"] == 24448 and record["cache_write_tokens"] == 0
    assert record["output_tokens"] == 122
    assert record["total_cost_usd"] is None  # Codex reports no cost: unknown, never 0
    assert record["tool_call_count"] == 1  # one completed command
    assert record["session_id"] == record["run_id"] == "0199a213-81c0-7800-8aa1-bbab2a035a53"
    assert record["duration_seconds"] == 41.5 and record["success"] is True
    assert record["agent"] == "codex"


def test_codex_without_a_duration_says_where_to_give_one(tmp_path: Path) -> None:
    keys = ["--arm", "codex", "--task-id", "t", "--repeat", "1"]
    outcomes = tmp_path / "outcomes.jsonl"
    outcomes.write_text('{"task_id": "t", "arm": "codex", "repeat": 1, "success": false}\n')
    result = convert("--from", "codex", str(CODEX), *keys, "--outcomes", str(outcomes))
    assert result.exit_code == 1
    assert f"{CODEX}:1: duration_seconds: missing: the agent output has no duration" in (
        result.stderr
    )
    # a harness summary line on the stream gives it
    stream = tmp_path / "run.jsonl"
    stream.write_text(
        CODEX.read_text(encoding="utf-8") + '{"duration_seconds": 12.0, "success": true}\n'
    )
    fine = convert("--from", "codex", str(stream), *keys)
    assert fine.exit_code == 0, fine.stderr
    assert json.loads(fine.stdout)["duration_seconds"] == 12.0


def test_codex_rejects_other_json(tmp_path: Path) -> None:
    other = tmp_path / "other.jsonl"
    other.write_text('{"type": "result", "usage": {}}\n')
    result = convert("--from", "codex", str(other), "--arm", "a", "--task-id", "t")
    assert result.exit_code == 1
    assert "no Codex event" in result.stderr
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    nothing = convert("--from", "codex", str(empty), "--arm", "a", "--task-id", "t")
    assert nothing.exit_code == 1 and f"{empty}:1: <record>: empty: no Codex events" in (
        nothing.stderr
    )


def test_opencode_export_keeps_each_models_share(tmp_path: Path) -> None:
    """An export (opencode's documented shape: assistant messages name `modelID`, their
    `step-finish` parts carry tokens and cost) of a session that used two models."""

    def step(k: int) -> dict[str, Any]:
        tokens = {"input": 100 * k, "output": 10 * k, "reasoning": k,
                  "cache": {"read": 1000 * k, "write": 5 * k}}  # fmt: skip
        return {"type": "step-finish", "tokens": tokens, "cost": 0.01 * k}

    def message(model: str, steps: list[int]) -> dict[str, Any]:
        info = {"id": f"msg_{model}", "role": "assistant", "modelID": model,
                "providerID": "anthropic", "time": {"created": 1, "completed": 2000}}  # fmt: skip
        return {"info": info, "parts": [step(k) for k in steps]}

    export = {
        "info": {"id": "ses_1", "time": {"created": 0, "updated": 3000}},
        "messages": [message("claude-haiku-4-5", [1]), message("claude-sonnet-4-5", [2, 3])],
    }
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    context = RunContext(arm="a", task_id="t", repeat=1, defaults={"success": True})
    conversion = convert_opencode([path], context)
    assert conversion.errors == []
    (record,) = conversion.records
    assert record.input_tokens == 600 and record.output_tokens == 66
    assert record.model_usage is not None
    haiku, sonnet = record.model_usage
    assert (haiku.model, haiku.input_tokens, haiku.output_tokens) == ("claude-haiku-4-5", 100, 11)
    assert (sonnet.input_tokens, sonnet.cache_read_tokens) == (500, 5000)
    assert sonnet.total_cost_usd == pytest.approx(0.05)


def test_two_appended_codex_sessions_are_two_records_and_odd_events_are_noted(
    tmp_path: Path,
) -> None:
    first = CODEX.read_text(encoding="utf-8")
    second = first.replace("0199a213-81c0-7800-8aa1-bbab2a035a53", "second-session").replace(
        '"output_tokens":122', '"output_tokens":7'
    )
    assert second != first
    stream = tmp_path / "two.jsonl"
    stream.write_text(
        first
        + '{"duration_seconds": 10.0, "success": true, "repeat": 1}\n'
        + '{"type": "turn.mystery", "x": 1}\n'
        + second
        + '{"duration_seconds": 20.0, "success": false, "repeat": 2}\n',
        encoding="utf-8",
    )
    odd = len(first.splitlines()) + 2
    result = convert("--from", "codex", str(stream), "--arm", "codex", "--task-id", "t")
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert [r["session_id"] for r in records] == [
        "0199a213-81c0-7800-8aa1-bbab2a035a53",
        "second-session",
    ]
    assert [r["duration_seconds"] for r in records] == [10.0, 20.0]
    assert [r["success"] for r in records] == [True, False]
    assert records[0]["output_tokens"] == 122  # each session its own tokens, never summed
    assert f"{stream}:{odd}: type: unknown Codex event 'turn.mystery'" in result.stderr
    assert "2 Codex sessions" in result.stderr
