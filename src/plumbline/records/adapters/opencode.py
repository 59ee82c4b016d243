"""opencode: exported sessions (`opencode export <session>`) and `opencode run --format json`
event streams.

An export is `{"info": {...session...}, "messages": [{"info": {...}, "parts": [...]}]}`; an event
stream is one JSON event per line, with `step_finish` events whose `part` is a `step-finish`
part. Each `step-finish` part carries `tokens{input, output, reasoning, cache{read, write}}` and
`cost`; tokens and cost are summed over steps (assistant messages' own totals are used only
when a session has no step parts). Reasoning tokens are generated tokens and count as output.
`step_count` is the number of steps, `tool_call_count` the number of `tool` parts, and the
duration runs from the session's creation to its last completed message (or from the first to
the last event's timestamp). Anything opencode did not report stays null.

An export names the model of each assistant message (`modelID`): each model's share of the
totals is kept in `model_usage` (opencode's equivalent of Claude Code's `modelUsage`).
An event stream names no model, so it has no per-model detail.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plumbline.records.adapters import Conversion, RunContext, validate
from plumbline.records.io import Located, RecordError, iter_json_objects

AGENT = "opencode"


@dataclass
class _Totals:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0
    steps: int = 0
    tools: int = 0
    seen_tokens: bool = False
    seen_cost: bool = False

    def add_usage(self, holder: dict[str, Any]) -> None:
        tokens = holder.get("tokens")
        if isinstance(tokens, dict):
            self.seen_tokens = True
            cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
            assert isinstance(cache, dict)
            self.input += int(tokens.get("input") or 0)
            self.output += int(tokens.get("output") or 0) + int(tokens.get("reasoning") or 0)
            self.cache_read += int(cache.get("read") or 0)
            self.cache_write += int(cache.get("write") or 0)
        cost = holder.get("cost")
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            self.seen_cost = True
            self.cost += float(cost)

    def usage_entry(self, model: str) -> dict[str, Any]:
        """This total as one `model_usage` entry."""
        totals = self.fields()
        keys = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
        return {"model": model, **{key: totals[key] for key in (*keys, "total_cost_usd")}}

    def fields(self) -> dict[str, Any]:
        known = self.seen_tokens
        return {
            "input_tokens": self.input if known else None,
            "output_tokens": self.output if known else None,
            "cache_read_tokens": self.cache_read if known else None,
            "cache_write_tokens": self.cache_write if known else None,
            "total_cost_usd": round(self.cost, 10) if self.seen_cost else None,
            "step_count": self.steps,
            "tool_call_count": self.tools,
        }


def _parts(messages: Iterable[Any]) -> Iterable[dict[str, Any]]:
    for message in messages:
        if isinstance(message, dict):
            for part in message.get("parts") or []:
                if isinstance(part, dict):
                    yield part


def export_to_fields(document: dict[str, Any]) -> dict[str, Any]:
    """Run-record fields from one `opencode export` document (experiment keys not included)."""
    info = document.get("info") if isinstance(document.get("info"), dict) else {}
    assert isinstance(info, dict)
    messages = [m for m in document.get("messages") or [] if isinstance(m, dict)]
    totals = _Totals()
    per_model: dict[str, _Totals] = {}

    def model_of(message: dict[str, Any]) -> str | None:
        message_info = message.get("info")
        model = message_info.get("modelID") if isinstance(message_info, dict) else None
        return model if isinstance(model, str) and model else None

    for message in messages:
        model = model_of(message)
        for part in _parts([message]):
            if part.get("type") == "step-finish":
                totals.steps += 1
                totals.add_usage(part)
                if model is not None:
                    per_model.setdefault(model, _Totals()).add_usage(part)
            elif part.get("type") == "tool":
                totals.tools += 1
    assistant = [
        m["info"]
        for m in messages
        if isinstance(m.get("info"), dict) and m["info"].get("role") == "assistant"
    ]
    if totals.steps == 0:
        per_model.clear()
        for message in messages:
            message_info = message.get("info")
            if not isinstance(message_info, dict) or message_info.get("role") != "assistant":
                continue
            totals.add_usage(message_info)
            model = model_of(message)
            if model is not None:
                per_model.setdefault(model, _Totals()).add_usage(message_info)
        totals.steps = len(assistant)
    created = (info.get("time") or {}).get("created")
    ends: list[float] = []
    for message_info in assistant:
        times = message_info.get("time")
        if isinstance(times, dict):
            end_time = times.get("completed") or times.get("created")
            if isinstance(end_time, int | float):
                ends.append(float(end_time))
    updated = (info.get("time") or {}).get("updated")
    end = max(ends) if ends else updated
    duration = (end - created) / 1000 if isinstance(created, int | float) and end else None
    models = [m.get("modelID") for m in assistant if m.get("modelID")]
    usage = [part.usage_entry(model) for model, part in per_model.items()]
    return {
        **totals.fields(),
        **({"model_usage": usage} if usage else {}),
        "duration_seconds": duration,
        "session_id": info.get("id"),
        "run_id": info.get("id"),
        "model": models[-1] if models else None,
        "agent": AGENT,
    }


def events_to_fields(events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Run-record fields from one `opencode run --format json` event stream."""
    totals = _Totals()
    session_id = None
    stamps = []
    for event in events:
        stamp = event.get("timestamp")
        if isinstance(stamp, int | float):
            stamps.append(stamp)
        part = event.get("part") if isinstance(event.get("part"), dict) else None
        session_id = session_id or event.get("sessionID") or (part or {}).get("sessionID")
        if part is None:
            continue
        if part.get("type") == "step-finish":
            totals.steps += 1
            totals.add_usage(part)
        elif part.get("type") == "tool":
            totals.tools += 1
    return {
        **totals.fields(),
        "duration_seconds": (max(stamps) - min(stamps)) / 1000 if len(stamps) >= 2 else None,
        "session_id": session_id,
        "run_id": session_id,
        "agent": AGENT,
    }


def convert_opencode(paths: list[str | Path], context: RunContext) -> Conversion:
    """Convert opencode exports (one or many per file) or event streams (one run per file)."""
    conversion = Conversion()
    for path in paths:
        events: list[Located] = []
        for item in iter_json_objects(path, conversion.errors):
            value = item.value
            if "messages" in value and "info" in value:
                fields = export_to_fields(value)
                context.fill(fields, value, item.path)
                validate(fields, item.path, item.line, conversion)
            elif "type" in value:
                events.append(item)
            else:
                conversion.errors.append(
                    RecordError(
                        item.path,
                        item.line,
                        "<record>",
                        "neither an opencode export ({info, messages}) nor an opencode event",
                    )
                )
        if events:
            values = [e.value for e in events]
            fields = events_to_fields(values)
            # Harness keys may ride on any event (a harness appends a final summary line).
            merged: dict[str, Any] = {}
            for value in values:
                merged.update(value)
            context.fill(fields, merged, path)
            validate(fields, str(path), events[0].line, conversion)
    return conversion
