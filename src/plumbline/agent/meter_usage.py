"""Token usage read from a model provider's own response, as it streams through the meter.

Three APIs are read (the ones published agent CLIs call):

- Anthropic Messages (`/v1/messages`): `message_start.message.usage` then the cumulative
  `message_delta.usage` of a stream, or the `usage` of a JSON answer. `input_tokens` there
  already excludes cache reads (`cache_read_input_tokens`) and writes
  (`cache_creation_input_tokens`).
- OpenAI Chat Completions (`/chat/completions`): the `usage` of the last chunk (or of the JSON
  answer): `prompt_tokens` includes `prompt_tokens_details.cached_tokens`.
- OpenAI Responses (`/responses`): `response.usage` of `response.completed` (also `.incomplete`
  and `.failed`): `input_tokens` includes `input_tokens_details.cached_tokens`.

Counts are kept the way run records keep them: `input` is the uncached input only, cache reads
and writes apart, `reasoning` (part of `output`) where the provider says it. The reader takes
bytes as they arrive and keeps at most one line (or one JSON body) of `MAX_BUFFER` bytes.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import Any, Literal

Api = Literal["messages", "chat", "responses", "other"]

#: The most bytes the reader holds at once (one SSE line, or a whole JSON answer).
MAX_BUFFER = 32 * 1024 * 1024


@dataclass(frozen=True)
class Tokens:
    """Tokens of one call or a total, by kind (`reasoning` is a part of `output`)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int | None = None

    @property
    def total(self) -> int:
        """`input + output + cache_read + cache_write` (the A/B schema's total tokens)."""
        return self.input + self.output + self.cache_read + self.cache_write

    def __add__(self, other: Tokens) -> Tokens:
        reasoning = (
            None
            if self.reasoning is None and other.reasoning is None
            else (self.reasoning or 0) + (other.reasoning or 0)
        )
        return Tokens(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            reasoning,
        )


def api_of(path: str) -> Api:
    """Which API a request path calls (`other`: model lists, token counting, anything else)."""
    path = path.split("?", 1)[0].rstrip("/")
    if path.endswith("/messages"):
        return "messages"
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/responses"):
        return "responses"
    return "other"


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def anthropic_tokens(usage: dict[str, Any]) -> Tokens:
    """Anthropic's `usage` object as `Tokens`."""
    return Tokens(
        input=_int(usage.get("input_tokens")),
        output=_int(usage.get("output_tokens")),
        cache_read=_int(usage.get("cache_read_input_tokens")),
        cache_write=_int(usage.get("cache_creation_input_tokens")),
    )


def _openai_tokens(usage: dict[str, Any], prompt: str, completion: str) -> Tokens:
    """OpenAI's `usage` under the API's own names (the prompt count includes cached tokens)."""
    details = _dict(usage.get(f"{prompt}_details"))
    cached = _int(details.get("cached_tokens"))
    written = _int(details.get("cache_write_tokens"))
    reasoning = _dict(usage.get(f"{completion}_details")).get("reasoning_tokens")
    return Tokens(
        input=max(_int(usage.get(prompt)) - cached - written, 0),
        output=_int(usage.get(completion)),
        cache_read=cached,
        cache_write=written,
        reasoning=_int(reasoning) if reasoning is not None else None,
    )


def chat_tokens(usage: dict[str, Any]) -> Tokens:
    """OpenAI Chat Completions' `usage` (`prompt_tokens` counts the cached ones too)."""
    return _openai_tokens(usage, "prompt_tokens", "completion_tokens")


def responses_tokens(usage: dict[str, Any]) -> Tokens:
    """OpenAI Responses' `usage` (`input_tokens` counts the cached ones too)."""
    return _openai_tokens(usage, "input_tokens", "output_tokens")


class UsageReader:
    """Reads the usage and model of one response, fed its body as it arrives.

    `event_stream` (the response is `text/event-stream`) selects the SSE reader; otherwise the
    body is one JSON document. `tokens` is None when the response stated no usage."""

    def __init__(self, api: Api, *, event_stream: bool) -> None:
        self.api = api
        self.event_stream = event_stream
        self.tokens: Tokens | None = None
        self.model: str | None = None
        self.overflow = False
        self._buffer = bytearray()
        self._data: list[bytes] = []
        self._anthropic: dict[str, Any] = {}

    def feed(self, chunk: bytes) -> None:
        if self.api == "other" or self.overflow:
            return
        self._buffer += chunk
        if not self.event_stream:
            if len(self._buffer) > MAX_BUFFER:
                self._overflowed()
            return
        while (end := self._buffer.find(b"\n")) >= 0:
            line = bytes(self._buffer[:end]).rstrip(b"\r")
            del self._buffer[: end + 1]
            self._line(line)
        if len(self._buffer) > MAX_BUFFER:
            self._overflowed()

    def close(self) -> None:
        """The body has ended: read what is left."""
        if self.api == "other" or self.overflow:
            return
        if not self.event_stream:
            with contextlib.suppress(ValueError):
                self._event(json.loads(bytes(self._buffer)))
        else:
            if self._buffer:
                self._line(bytes(self._buffer).rstrip(b"\r"))
            self._line(b"")
        self._buffer.clear()

    def _overflowed(self) -> None:
        self.overflow = True
        self._buffer.clear()
        self._data.clear()

    def _line(self, line: bytes) -> None:
        if line.startswith(b"data:"):
            self._data.append(line[5:].lstrip(b" "))
            if sum(len(d) for d in self._data) > MAX_BUFFER:
                self._overflowed()
        elif not line and self._data:
            data = b"\n".join(self._data)
            self._data.clear()
            if data.strip() == b"[DONE]":
                return
            # Only an event naming its usage or model has something to read: most events of a
            # stream are deltas of text, left undecoded.
            if b'"usage"' not in data and b'"model"' not in data:
                return
            try:
                self._event(json.loads(data))
            except ValueError:
                return

    def _event(self, value: Any) -> None:
        event = _dict(value)
        if self.api == "messages":
            self._messages(event)
        elif self.api == "chat":
            if isinstance(event.get("model"), str):
                self.model = event["model"]
            if isinstance(event.get("usage"), dict):
                self.tokens = chat_tokens(event["usage"])
        else:
            response = _dict(event.get("response")) if "response" in event else event
            if isinstance(response.get("model"), str):
                self.model = response["model"]
            if isinstance(response.get("usage"), dict):
                self.tokens = responses_tokens(response["usage"])

    def _messages(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        message = _dict(event.get("message")) if kind == "message_start" else event
        if isinstance(message.get("model"), str):
            self.model = message["model"]
        usage = _dict(message.get("usage") if kind != "message_delta" else event.get("usage"))
        # message_delta's counts are cumulative: they replace what message_start said.
        self._anthropic.update({k: v for k, v in usage.items() if v is not None})
        if self._anthropic:
            self.tokens = anthropic_tokens(self._anthropic)


__all__ = [
    "MAX_BUFFER",
    "Api",
    "Tokens",
    "UsageReader",
    "anthropic_tokens",
    "api_of",
    "chat_tokens",
    "responses_tokens",
]
