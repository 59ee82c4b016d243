"""Claude Code: `claude -p --output-format json` result objects (and `stream-json` streams).

A result object carries `total_cost_usd`, `duration_ms`, `num_turns`, `session_id`, `is_error`,
`subtype`, `usage.{input_tokens, output_tokens, cache_read_input_tokens,
cache_creation_input_tokens}` and `modelUsage`: per model, `{inputTokens, outputTokens,
cacheReadInputTokens, cacheCreationInputTokens, costUSD, ...}`. In a `stream-json` stream the
result is the `{"type": "result"}` event, and the `tool_use` blocks of the assistant events
before it give the tool-call count.

`usage` counts the main model only, while `total_cost_usd` covers every model the run used
(Claude Code calls a small model, e.g. Haiku, for background work): when `modelUsage` is present,
the token fields are summed over it, and each model's share is kept in `model_usage`; `usage` is
read only when there is no `modelUsage`.

Mapping: `duration_seconds = duration_ms / 1000`; `input_tokens = Σ inputTokens`,
`output_tokens = Σ outputTokens`, `cache_read_tokens = Σ cacheReadInputTokens`,
`cache_write_tokens = Σ cacheCreationInputTokens` (else `usage`'s `input_tokens`,
`output_tokens`, `cache_read_input_tokens`, `cache_creation_input_tokens`); `step_count =
num_turns`. A field Claude Code did not report stays null (a sum is null when any model left
that count out). `is_error` does not decide success: the acceptance check does (see
`plumbline.records.adapters`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from plumbline.records.adapters import Conversion, RunContext, validate
from plumbline.records.io import Located, RecordError, iter_json_objects

AGENT = "claude-code"


def _tool_uses(event: dict[str, Any]) -> int:
    message = event.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return 0
    return sum(
        1 for block in content if isinstance(block, dict) and block.get("type") == "tool_use"
    )


#: run-record token field -> (`modelUsage` key, `usage` key)
_TOKENS = {
    "input_tokens": ("inputTokens", "input_tokens"),
    "output_tokens": ("outputTokens", "output_tokens"),
    "cache_read_tokens": ("cacheReadInputTokens", "cache_read_input_tokens"),
    "cache_write_tokens": ("cacheCreationInputTokens", "cache_creation_input_tokens"),
}


def _sum(values: list[Any], fallback: Any) -> Any:
    """The sum of the models' counts. When no model reports the count, `fallback` (`usage`'s);
    when only some do, null (unknown, never a partial sum). A value that is no count is passed
    on for validation to name."""
    reported = [value for value in values if value is not None]
    if not reported:
        return fallback
    if len(reported) < len(values):
        return None
    if all(isinstance(value, int) and not isinstance(value, bool) for value in values):
        return sum(values)
    return next(v for v in values if not isinstance(v, int) or isinstance(v, bool))


def model_usage(models: dict[str, Any]) -> list[dict[str, Any]]:
    """`modelUsage` as run-record `model_usage` entries, in Claude Code's order."""
    entries = []
    for name, usage in models.items():
        usage = usage if isinstance(usage, dict) else {}
        entry: dict[str, Any] = {"model": name}
        for field_name, (key, _) in _TOKENS.items():
            entry[field_name] = usage.get(key)
        entry["total_cost_usd"] = usage.get("costUSD")
        entries.append(entry)
    return entries


def token_fields(result: dict[str, Any]) -> dict[str, Any]:
    """Token totals (summed over `modelUsage` when present, else `usage`) and per-model detail."""
    usage = result.get("usage") if isinstance(result.get("usage"), dict) else {}
    assert isinstance(usage, dict)
    main = {name: usage.get(key) for name, (_, key) in _TOKENS.items()}
    models = result.get("modelUsage")
    if not isinstance(models, dict) or not models:
        return main
    entries = model_usage(models)
    totals = {name: _sum([entry[name] for entry in entries], main[name]) for name in _TOKENS}
    return {**totals, "model_usage": entries}


def result_to_fields(result: dict[str, Any], tool_calls: int | None) -> dict[str, Any]:
    """Run-record fields from one Claude Code result object (experiment keys not included)."""
    duration_ms = result.get("duration_ms")
    models = result.get("modelUsage")
    fields: dict[str, Any] = {
        "duration_seconds": duration_ms / 1000 if isinstance(duration_ms, int | float) else None,
        "total_cost_usd": result.get("total_cost_usd"),
        **token_fields(result),
        "step_count": result.get("num_turns"),
        "tool_call_count": tool_calls,
        "session_id": result.get("session_id"),
        "run_id": result.get("session_id"),
        "model": "+".join(sorted(models)) if isinstance(models, dict) and models else None,
        "agent": AGENT,
    }
    return fields


def output_to_fields(values: Iterable[Any]) -> dict[str, Any] | None:
    """Run-record fields from the JSON values one `claude -p` run printed, or None.

    Takes the last result object (`--output-format json`, or the `result` event of a
    `stream-json` stream, whose `tool_use` blocks give the tool-call count).
    """
    tool_calls, streaming = 0, False
    found: dict[str, Any] | None = None
    for value in values:
        if not isinstance(value, dict):
            continue
        kind = value.get("type")
        if kind not in (None, "result"):
            streaming = True
            tool_calls += _tool_uses(value) if kind == "assistant" else 0
        elif "duration_ms" in value or "usage" in value:
            found = result_to_fields(value, tool_calls if streaming else None)
    return found


def convert_claude_code(paths: list[str | Path], context: RunContext) -> Conversion:
    """Convert Claude Code result objects (one or many per file) to run records."""
    conversion = Conversion()
    for path in paths:
        tool_calls = 0
        streaming = False
        for item in iter_json_objects(path, conversion.errors):
            value = item.value
            kind = value.get("type")
            if kind not in (None, "result"):
                streaming = True
                tool_calls += _tool_uses(value) if kind == "assistant" else 0
                continue
            _convert_one(item, value, tool_calls if streaming else None, context, conversion)
            tool_calls, streaming = 0, False
    return conversion


def _convert_one(
    item: Located,
    value: dict[str, Any],
    tool_calls: int | None,
    context: RunContext,
    conversion: Conversion,
) -> None:
    if "duration_ms" not in value and "usage" not in value:
        conversion.errors.append(
            RecordError(
                item.path,
                item.line,
                "<record>",
                "not a Claude Code result object (no duration_ms or usage); "
                "produce it with `claude -p --output-format json`",
            )
        )
        return
    fields = result_to_fields(value, tool_calls)
    context.fill(fields, value, item.path)
    validate(fields, item.path, item.line, conversion)
