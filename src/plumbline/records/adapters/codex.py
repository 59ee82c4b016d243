"""Codex CLI: `codex exec --json` event streams (one JSON event per line).

Events: `thread.started` (`thread_id`), `turn.started`, `turn.completed` (`usage{input_tokens,
cached_input_tokens, cache_write_input_tokens, output_tokens, reasoning_output_tokens}`: Codex
CLI 0.171 prints all five, older releases the first three), `turn.failed`, `item.started` /
`item.updated` / `item.completed` (an `item` whose `type` is `agent_message`, `reasoning`,
`command_execution`, `file_change`, `mcp_tool_call`, `web_search`, `todo_list` or `error`) and
`error`.

`records convert --from codex` reads one stream per file (`convert_codex`); `plumbline agent
run` reads the same events with the same parser (`events_to_fields`).

Codex's events carry no time: the duration comes from the harness, as `duration_seconds` or
`started_at_utc`/`ended_at_utc` on a line of the stream (a harness appends a summary line), in
the outcomes file, or the end minus the start.

Mapping: usage is summed over `turn.completed` events (each turn's usage covers every model
request of that turn). OpenAI counts cache reads and writes inside `input_tokens`, so
`input_tokens = input_tokens - cached_input_tokens - cache_write_input_tokens` (the uncached
part, as in the Anthropic convention of the run record), `cache_read_tokens =
cached_input_tokens` and `cache_write_tokens = cache_write_input_tokens` (0 when a turn's usage
does not name it: older Codex releases, and OpenAI's own prompt caching, write none).
Reasoning tokens are part of `output_tokens` already (OpenAI counts them there). Codex reports
no cost (`total_cost_usd` stays null) and not how many model requests a turn made
(`step_count` stays null).
`tool_call_count` counts completed command, file-change, MCP-tool and web-search items.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from plumbline.records.adapters import HARNESS_KEYS, Conversion, RunContext, validate
from plumbline.records.io import Located, RecordError, iter_json_objects

AGENT = "codex"
TOOL_ITEMS = frozenset({"command_execution", "file_change", "mcp_tool_call", "web_search"})


def _count(usage: dict[str, Any], name: str) -> int:
    value = usage.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def events_to_fields(events: Iterable[Any]) -> dict[str, Any]:
    """Run-record fields from one `codex exec --json` event stream."""
    input_tokens = cached = written = output = 0
    reported = False
    tools = 0
    thread_id: str | None = None
    for event in events:
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "thread.started" and isinstance(event.get("thread_id"), str):
            thread_id = event["thread_id"]
        elif kind == "turn.completed" and isinstance(event.get("usage"), dict):
            usage = event["usage"]
            reported = True
            input_tokens += _count(usage, "input_tokens")
            cached += _count(usage, "cached_input_tokens")
            written += _count(usage, "cache_write_input_tokens")
            output += _count(usage, "output_tokens")
        elif kind == "item.completed" and isinstance(event.get("item"), dict):
            tools += event["item"].get("type") in TOOL_ITEMS
    return {
        "input_tokens": max(input_tokens - cached - written, 0) if reported else None,
        "output_tokens": output if reported else None,
        "cache_read_tokens": cached if reported else None,
        "cache_write_tokens": written if reported else None,
        "total_cost_usd": None,
        "step_count": None,
        "tool_call_count": tools,
        "session_id": thread_id,
        "agent": AGENT,
    }


def convert_codex(paths: list[str | Path], context: RunContext) -> Conversion:
    """Convert `codex exec --json` event streams to run records: one per session, a file of
    appended streams split at each session's start (`thread.started`); an event of a shape
    this parser does not know is noted as `file:line: ...` and not counted."""
    conversion = Conversion()
    for path in paths:
        events = list(iter_json_objects(path, conversion.errors))
        if not events:
            if not any(error.path == str(path) for error in conversion.errors):
                conversion.errors.append(
                    RecordError(str(path), 1, "<record>", "empty: no Codex events")
                )
            continue
        values = [event.value for event in events]
        if not any(str(value.get("type", "")).startswith(_EVENT_PREFIXES) for value in values):
            conversion.errors.append(
                RecordError(
                    str(path),
                    events[0].line,
                    "<record>",
                    "no Codex event (thread.*, turn.*, item.*); produce the stream with "
                    "`codex exec --json`",
                )
            )
            continue
        conversion.notes += [
            f"{path}:{e.line}: {problem}" for e in events if (problem := _shape(e.value))
        ]
        sessions = split_sessions(events)
        if len(sessions) > 1:
            conversion.notes.append(
                f"{path}: {len(sessions)} Codex sessions (one record each, split at "
                "`thread.started`)"
            )
        for session in sessions:
            _convert_session(session, path, context, conversion)
    return conversion


def split_sessions(events: list[Located]) -> list[list[Located]]:
    """The sessions of a stream: a new one at each `thread.started` (lines before the first
    belong to the first; a harness's summary line after a session, to that session)."""
    sessions: list[list[Located]] = []
    for event in events:
        starts = event.value.get("type") == "thread.started"
        if not sessions or (starts and any(_started(e) for e in sessions[-1])):
            sessions.append([event])
        else:
            sessions[-1].append(event)
    return sessions


def _started(event: Located) -> bool:
    return bool(event.value.get("type") == "thread.started")


def _convert_session(
    events: list[Located], path: str | Path, context: RunContext, conversion: Conversion
) -> None:
    values = [event.value for event in events]
    fields = events_to_fields(values)
    fields["run_id"] = fields["session_id"]
    fields["duration_seconds"] = None
    # Harness keys may ride on any line (a harness appends a summary line).
    merged: dict[str, Any] = {}
    for value in values:
        merged.update(value)
    context.fill(fields, merged, path)
    validate(fields, str(path), events[0].line, conversion)


#: The Codex event types this parser knows (the module says what it reads of each).
KNOWN_EVENTS = frozenset(
    {
        "thread.started",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "item.started",
        "item.updated",
        "item.completed",
        "error",
    }
)


def _shape(event: dict[str, Any]) -> str | None:
    """What is wrong with an event's shape (None: nothing this parser minds)."""
    kind = event.get("type")
    if kind is None:
        if any(key in HARNESS_KEYS for key in event):
            return None
        return "<record>: neither a Codex event (no `type`) nor harness keys: not read"
    if not isinstance(kind, str) or kind not in KNOWN_EVENTS:
        return f"type: unknown Codex event {str(kind)[:80]!r}: not read"
    if kind == "turn.completed" and not isinstance(event.get("usage"), dict):
        return "usage: a turn.completed without a usage object: its tokens are unknown"
    if kind.startswith("item.") and not isinstance(event.get("item"), dict):
        return f"item: a {kind} without an item object: not read"
    if kind == "thread.started" and not isinstance(event.get("thread_id"), str):
        return "thread_id: a thread.started without a thread id"
    return None


_EVENT_PREFIXES = ("thread.", "turn.", "item.")

__all__ = [
    "AGENT",
    "KNOWN_EVENTS",
    "TOOL_ITEMS",
    "convert_codex",
    "events_to_fields",
    "split_sessions",
]
