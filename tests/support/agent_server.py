"""A scripted model for real coding agents: a real HTTP server on loopback that speaks the three
APIs published agent CLIs call, and answers each request with the next step of a script.

- `POST /v1/responses`: OpenAI's Responses API, streamed as server-sent events (Codex CLI);
- `POST /v1/chat/completions`: OpenAI chat completions, streamed (OpenCode's openai-compatible
  provider; `stream: false` is answered too);
- `POST /v1/messages`: Anthropic's Messages API, streamed (Claude Code).

A script is a list of steps: `ToolCall(name, arguments)` (the model asks the agent to run one of
its tools) or `Reply(text)` (the final message). `{cwd}` in an argument becomes the agent's
working directory, read from the environment section of its system prompt (for tools that take
absolute paths only). Which step a request gets is read from the
request itself: the number of tool results in the conversation it carries (so a retried
request gets the same step again, and requests of several trials in parallel do not disturb
each other). A request that offers none of the script's tools (an agent's side request: a
session title, a summary) gets a short text answer and does not advance anything.

Every answer reports token usage, `Usage(input, cached, output)`, and the server logs what it
served (`served`), so a test can compare the tokens an agent reported with what it was sent.

`ProxyTrap` is an HTTP proxy that forwards nothing: pointed at by `HTTPS_PROXY`/`HTTP_PROXY`
(with `NO_PROXY=127.0.0.1`), it records every connection an agent tries to make to any other
host (its telemetry, update checks, downloads) and closes it.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import socketserver
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """The model calls one of the agent's tools: `arguments` is the JSON object of a function
    tool, or the text of a freeform one (a Responses API `custom` tool, such as Codex's
    `apply_patch`)."""

    name: str
    arguments: dict[str, Any] | str


@dataclass(frozen=True)
class Reply:
    """The model's final message: the agent's turn ends."""

    text: str


Step = ToolCall | Reply


@dataclass(frozen=True)
class Usage:
    """Tokens reported for one answer: `input` counts every prompt token, of which `cached`
    were read from a prompt cache and `cache_write` written to one (OpenAI's convention; the
    Anthropic answer reports `input - cached - cache_write` as its `input_tokens`)."""

    input: int
    cached: int
    output: int
    cache_write: int = 0


@dataclass(frozen=True)
class Served:
    """One answer the server gave: on which API, which step (None for a side request)."""

    api: str  # "responses", "chat" or "messages"
    model: str
    step: int | None
    usage: Usage
    tools: tuple[str, ...]  # the tool names the request offered


@dataclass
class Script:
    """The steps the model takes, in order, and the usage each answer reports (`usage(k)` for
    the k-th answer the server gives, scripted or not)."""

    steps: list[Step]
    usage: Callable[[int], Usage] = field(
        default=lambda k: Usage(input=1000 + 100 * k, cached=800, output=20 + k, cache_write=50)
    )
    side_reply: str = "Fix the failing test"


#: Where each agent's system prompt states its working directory (Claude Code, OpenCode, Codex).
_CWD = re.compile(r"(?:[Ww]orking directory: |<cwd>)([^\s<\"]+)")


def _with_cwd(step: Step, body: dict[str, Any]) -> Step:
    """The step with `{cwd}` in its arguments replaced by the request's working directory."""
    if not isinstance(step, ToolCall) or "{cwd}" not in json.dumps(step.arguments):
        return step
    found = _CWD.search(json.dumps(body).replace("\\n", " "))
    if found is None:
        raise ValueError("the request does not say its working directory")
    cwd = found.group(1)

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace("{cwd}", cwd)
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        return value

    return ToolCall(step.name, fill(step.arguments))


def _tool_results(api: str, body: dict[str, Any]) -> int:
    """How many tool results the conversation in a request carries."""
    if api == "responses":
        items = body.get("input")
        return sum(
            isinstance(i, dict) and str(i.get("type", "")).endswith("call_output")
            for i in (items if isinstance(items, list) else [])
        )
    if api == "chat":
        messages = body.get("messages") or []
        return sum(isinstance(m, dict) and m.get("role") == "tool" for m in messages)
    count = 0
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            count += isinstance(block, dict) and block.get("type") == "tool_result"
    return count


def _tool_names(api: str, body: dict[str, Any]) -> tuple[str, ...]:
    names: list[str] = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if api == "chat" and isinstance(tool.get("function"), dict):
            names.append(str(tool["function"].get("name")))
        elif "name" in tool:
            names.append(str(tool["name"]))
    return tuple(names)


class ScriptedAgentServer:
    """The server; a context manager (a thread serving on 127.0.0.1, a random port)."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.served: list[Served] = []
        self.requests: list[tuple[str, dict[str, Any]]] = []  # (path, decoded body)
        #: The credentials each request carried (`authorization`, `x-api-key`), in order.
        self.credentials: list[str] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        assert self._httpd is not None, "the server is not running"
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (`.../v1`)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def origin(self) -> str:
        """The base URL without `/v1` (Anthropic clients add `/v1/messages` themselves)."""
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ScriptedAgentServer:
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="agent-server", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def scripted(self) -> list[Served]:
        """The answers that were steps of the script (side requests left out)."""
        with self._lock:
            return [s for s in self.served if s.step is not None]

    def answer(self, api: str, body: dict[str, Any]) -> tuple[Step, Usage, str, str]:
        """The step for this request, its usage, the model name and a response id. A
        freeform tool call (text arguments) exists on the Responses API only."""
        tools = _tool_names(api, body)
        wanted = {s.name for s in self.script.steps if isinstance(s, ToolCall)}
        scripted = bool(wanted & set(tools)) or (not wanted and bool(tools))
        with self._lock:
            number = len(self.served)
            usage = self.script.usage(number)
            if scripted:
                index = min(_tool_results(api, body), len(self.script.steps) - 1)
                step: Step = _with_cwd(self.script.steps[index], body)
                if api != "responses" and isinstance(step, ToolCall):
                    assert isinstance(step.arguments, dict), f"{step.name}: {api} takes JSON"
            else:
                index, step = -1, Reply(self.script.side_reply)
            model = str(body.get("model", "scripted"))
            self.served.append(Served(api, model, index if scripted else None, usage, tools))
        return step, usage, model, f"{number:04d}"


class _Handler(BaseHTTPRequestHandler):
    owner: ScriptedAgentServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def setup(self) -> None:
        super().setup()
        # Each event leaves at once, as from a provider's server (without it, Nagle's
        # algorithm holds the next small write until the reader's delayed acknowledgement).
        # A Unix socket (the bridged server) has no Nagle to turn off.
        if self.connection.family in (socket.AF_INET, socket.AF_INET6):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path.endswith("/models"):
            data = [{"id": "scripted", "object": "model", "owned_by": "local"}]
            self._json(HTTPStatus.OK, {"object": "list", "data": data})
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": {"message": f"no route {path}"}})

    def do_HEAD(self) -> None:
        self.send_response(HTTPStatus.OK)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        credential = self.headers.get("x-api-key") or self.headers.get("authorization") or ""
        with self.owner._lock:
            self.owner.requests.append((path, body))
            self.owner.credentials.append(credential.removeprefix("Bearer "))
        if path.endswith("/responses"):
            self._responses(body)
        elif path.endswith("/chat/completions"):
            self._chat(body)
        elif path.endswith("/messages/count_tokens"):
            self._json(HTTPStatus.OK, {"input_tokens": 1000})
        elif path.endswith("/messages"):
            self._messages(body)
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": {"message": f"no route {path}"}})

    # --- plumbing ----------------------------------------------------------------------------

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _events(self, events: list[tuple[str | None, Any]]) -> None:
        """Server-sent events, chunked; `(name, data)` with data a dict or a raw string."""
        self.send_response(HTTPStatus.OK)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for name, data in events:
            text = data if isinstance(data, str) else json.dumps(data)
            frame = (f"event: {name}\n" if name else "") + f"data: {text}\n\n"
            encoded = frame.encode()
            self.wfile.write(f"{len(encoded):x}\r\n".encode() + encoded + b"\r\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    # --- OpenAI Responses (Codex) ------------------------------------------------------------

    def _responses(self, body: dict[str, Any]) -> None:
        step, usage, model, number = self.owner.answer("responses", body)
        response_id = f"resp_{number}"
        if isinstance(step, ToolCall) and isinstance(step.arguments, str):
            item: dict[str, Any] = {
                "type": "custom_tool_call",
                "id": f"ctc_{number}",
                "call_id": f"call_{number}",
                "name": step.name,
                "input": step.arguments,
                "status": "completed",
            }
        elif isinstance(step, ToolCall):
            item = {
                "type": "function_call",
                "id": f"fc_{number}",
                "call_id": f"call_{number}",
                "name": step.name,
                "arguments": json.dumps(step.arguments),
                "status": "completed",
            }
        else:
            item = {
                "type": "message",
                "id": f"msg_{number}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": step.text, "annotations": []}],
            }
        base = {"id": response_id, "object": "response", "model": model, "created_at": 0}
        events: list[tuple[str | None, Any]] = [
            (
                "response.created",
                {
                    "type": "response.created",
                    "response": {**base, "status": "in_progress", "output": []},
                },
            ),
            (
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": 0, "item": item},
            ),
        ]
        if isinstance(step, Reply):
            events.append(
                (
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "item_id": item["id"],
                        "output_index": 0,
                        "content_index": 0,
                        "delta": step.text,
                    },
                )
            )
        events.append(
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": item},
            )
        )
        events.append(
            (
                "response.completed",
                {
                    "type": "response.completed",
                    "response": {
                        **base,
                        "status": "completed",
                        "output": [item],
                        "usage": {
                            "input_tokens": usage.input,
                            "input_tokens_details": {
                                "cached_tokens": usage.cached,
                                "cache_write_tokens": usage.cache_write,
                            },
                            "output_tokens": usage.output,
                            "output_tokens_details": {"reasoning_tokens": 0},
                            "total_tokens": usage.input + usage.output,
                        },
                    },
                },
            )
        )
        self._events(events)

    # --- OpenAI chat completions (OpenCode) --------------------------------------------------

    def _chat(self, body: dict[str, Any]) -> None:
        step, usage, model, number = self.owner.answer("chat", body)
        completion_id = f"chatcmpl-{number}"
        usage_body = {
            "prompt_tokens": usage.input,
            "completion_tokens": usage.output,
            "total_tokens": usage.input + usage.output,
            "prompt_tokens_details": {"cached_tokens": usage.cached},
        }
        if isinstance(step, ToolCall):
            call = {
                "id": f"call_{number}",
                "type": "function",
                "function": {"name": step.name, "arguments": json.dumps(step.arguments)},
            }
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        else:
            message = {"role": "assistant", "content": step.text}
            finish = "stop"
        if not body.get("stream"):
            self._json(
                HTTPStatus.OK,
                {
                    "id": completion_id,
                    "object": "chat.completion",
                    "created": 0,
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": usage_body,
                },
            )
            return

        def chunk(delta: dict[str, Any], reason: str | None) -> dict[str, Any]:
            return {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": reason}],
            }

        if isinstance(step, ToolCall):
            delta: dict[str, Any] = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"index": 0, **message["tool_calls"][0]}],
            }
        else:
            delta = {"role": "assistant", "content": step.text}
        final = {**chunk({}, None), "choices": [], "usage": usage_body}
        self._events(
            [(None, chunk(delta, None)), (None, chunk({}, finish)), (None, final), (None, "[DONE]")]
        )

    # --- Anthropic Messages (Claude Code) ----------------------------------------------------

    def _messages(self, body: dict[str, Any]) -> None:
        step, usage, model, number = self.owner.answer("messages", body)
        if isinstance(step, ToolCall):
            block: dict[str, Any] = {
                "type": "tool_use",
                "id": f"toolu_{number}",
                "name": step.name,
                "input": step.arguments,
            }
            stop = "tool_use"
        else:
            block = {"type": "text", "text": step.text}
            stop = "end_turn"
        # Anthropic counts cache reads and writes apart from `input_tokens` (the uncached part).
        start_usage = {
            "input_tokens": usage.input - usage.cached - usage.cache_write,
            "cache_read_input_tokens": usage.cached,
            "cache_creation_input_tokens": usage.cache_write,
            "output_tokens": 1,
        }
        message = {
            "id": f"msg_{number}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": start_usage,
        }
        if not body.get("stream"):
            done = {
                **message,
                "content": [block],
                "stop_reason": stop,
                "usage": {**start_usage, "output_tokens": usage.output},
            }
            self._json(HTTPStatus.OK, done)
            return
        if block["type"] == "tool_use":
            opening = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(step.arguments)}
        else:
            opening = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        self._events(
            [
                ("message_start", {"type": "message_start", "message": message}),
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": 0, "content_block": opening},
                ),
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": 0, "delta": delta},
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                (
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": stop, "stop_sequence": None},
                        "usage": {"output_tokens": usage.output},
                    },
                ),
                ("message_stop", {"type": "message_stop"}),
            ]
        )


class ProxyTrap:
    """A proxy on 127.0.0.1 that records the first line of every request (`CONNECT host:443`
    for HTTPS) and answers none; a context manager. With `unix`, it listens on that Unix socket
    instead, for a trial with its own network namespace to reach through `--bridge
    PORT=SOCKET` (`bridge`): its URL is then `127.0.0.1:PORT` inside the trial."""

    def __init__(self, unix: Path | None = None) -> None:
        self.requests: list[str] = []
        self.unix = unix
        if unix is None:
            self._socket = socket.create_server(("127.0.0.1", 0))
            self.port = int(self._socket.getsockname()[1])
        else:
            with socket.create_server(("127.0.0.1", 0)) as probe:  # a port no one else holds
                self.port = int(probe.getsockname()[1])
            self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._socket.bind(str(unix))
            self._socket.listen()
        self._thread = threading.Thread(target=self._accept, name="proxy-trap", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def bridge(self) -> str:
        """The `--bridge` value that puts the trap at `url` inside a trial."""
        assert self.unix is not None, "a trap on a Unix socket only"
        return f"{self.port}={self.unix}"

    def environment(self) -> dict[str, str]:
        """Proxy variables (both spellings) sending every host but loopback to the trap."""
        local = "127.0.0.1,localhost"
        return {
            "HTTPS_PROXY": self.url,
            "HTTP_PROXY": self.url,
            "https_proxy": self.url,
            "http_proxy": self.url,
            "NO_PROXY": local,
            "no_proxy": local,
        }

    def __enter__(self) -> ProxyTrap:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        # shutdown() wakes the thread blocked in accept(); close() alone would not.
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_RDWR)
        self._socket.close()
        self._thread.join(timeout=30)

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:  # closed
                return
            with connection:
                connection.settimeout(5)
                try:
                    first = connection.recv(1024).split(b"\r\n", 1)[0]
                except OSError as error:
                    first = f"<{error}>".encode()
                self.requests.append(first.decode("latin-1"))


class _UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


@contextlib.contextmanager
def unix_socket_server(server: ScriptedAgentServer, path: Path) -> Iterator[Path]:
    """Serve `server`'s script on a Unix socket at `path` as well (how the harness's proxy is
    offered to a trial with its own network namespace); removed on exit."""

    class Handler(_Handler):
        owner = server

        def address_string(self) -> str:
            return "unix"

    httpd = _UnixHTTPServer(str(path), Handler)
    thread = threading.Thread(target=httpd.serve_forever, name="agent-server-unix", daemon=True)
    thread.start()
    try:
        yield path
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=30)
        path.unlink(missing_ok=True)


__all__ = [
    "ProxyTrap",
    "Reply",
    "Script",
    "ScriptedAgentServer",
    "Served",
    "Step",
    "ToolCall",
    "Usage",
    "unix_socket_server",
]
