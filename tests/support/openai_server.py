"""A real HTTP server on loopback that speaks the OpenAI chat completions API.

Tests (and benchmarks, and the example-data script) point Inspect's `openai-api` provider at it
with `<SERVICE>_BASE_URL=http://127.0.0.1:<port>/v1`. It answers `POST /v1/chat/completions`,
streaming (server-sent events, chunked) and not, with per-model latency distributions and
injected faults, and keeps a log of every request it served so a test can compare what the
server did with what the client recorded.

Faults (the `FAULTS` names): HTTP errors `"400"`, `"401"`, `"403"`, `"404"`, `"422"`, `"429"`,
`"500"`, `"503"`, `"529"`; `"content_filter"` (a 400 whose error code is `content_filter`, as
Azure sends it); `"context_length"` (a 400 with code `context_length_exceeded`, as OpenAI and
llama.cpp's server refuse a prompt longer than the context); `"timeout"` (the server holds the
request and never answers); `"reset"` (the TCP connection is reset without a response);
`"malformed"` (HTTP 200 with a body that is not JSON); `"empty_choices"` (HTTP 200 whose
`choices` is `[]`), `"no_message"` (HTTP 200 whose choice has no `message`) and `"error_body"`
(HTTP 200 whose body is an error object, as some gateways answer), all three well-formed JSON
that is not a completion.

Faults are chosen per request, per model: first from the profile's scripted `faults` sequence
(the k-th request to a model gets `faults[k]`; `"ok"` means no fault), then at random with
`fault_rates`, from a generator seeded with the server seed and the model name.

Use it in-process (a background thread with its own event loop):

    with OpenAIServer({"m": ModelProfile(latency=Latency("constant", 0.05))}) as server:
        env = {"LOCAL_BASE_URL": server.base_url, "LOCAL_API_KEY": "..."}

or in its own process (`serve_in_subprocess`, or `python -m tests.support.openai_server
--config profiles.json`), which keeps a heavy client from sharing the GIL with the server.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

FAULTS = (
    "400",
    "401",
    "403",
    "404",
    "422",
    "429",
    "500",
    "503",
    "529",
    "content_filter",
    "context_length",
    "timeout",
    "reset",
    "malformed",
    "empty_choices",
    "no_message",
    "error_body",
)

#: The provider's words in an `error_body` answer (tests look for them in the trial record).
ERROR_BODY_MESSAGE = "upstream model overloaded, request id req-7f3a"

_STATUS_TEXT = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
    529: "Site Overloaded",
}

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
    500: "server_error",
    503: "server_error",
    529: "overloaded_error",
}


@dataclass(frozen=True)
class Latency:
    """A latency distribution in seconds.

    kinds: `constant` (a), `uniform` (a..b), `normal` (mean a, sd b, floored at 0),
    `lognormal` (median a, log-sd b), `exponential` (mean a).
    """

    kind: str = "constant"
    a: float = 0.0
    b: float = 0.0

    def sample(self, rng: random.Random) -> float:
        if self.kind == "constant":
            return self.a
        if self.kind == "uniform":
            return rng.uniform(self.a, self.b)
        if self.kind == "normal":
            return max(0.0, rng.gauss(self.a, self.b))
        if self.kind == "lognormal":
            return self.a * math.exp(rng.gauss(0.0, self.b))
        if self.kind == "exponential":
            return rng.expovariate(1.0 / self.a) if self.a > 0 else 0.0
        raise ValueError(f"unknown latency kind {self.kind!r}")


@dataclass
class ModelProfile:
    """How the server behaves for one model name."""

    latency: Latency = field(default_factory=Latency)
    # share of the latency spent before the first streamed chunk
    ttft_fraction: float = 0.3
    # responses are drawn from this list; None: a fixed sentence that mentions the prompt
    responses: list[str] | None = None
    # per-prompt responses: the first key contained in the prompt picks the list
    responses_by_prompt: dict[str, list[str]] = field(default_factory=dict)
    faults: list[str] = field(default_factory=list)
    fault_rates: dict[str, float] = field(default_factory=dict)
    # a "timeout" fault holds the request this long (the client should give up first)
    hang_seconds: float = 600.0
    # when set, requests must carry `Authorization: Bearer <api_key>` or get a real 401
    api_key: str | None = None
    # the provider's words in an `error_body` answer
    error_message: str = ERROR_BODY_MESSAGE
    # the `usage` block of every answer, as a provider or gateway reports it (None: counted from
    # the words of the prompt and the answer); any JSON, e.g. more cached than prompt tokens
    usage: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        for fault in [*self.faults, *self.fault_rates]:
            if fault != "ok" and fault not in FAULTS:
                raise ValueError(f"unknown fault {fault!r}; choose from {', '.join(FAULTS)}")
        if sum(self.fault_rates.values()) > 1:
            raise ValueError("fault_rates must sum to at most 1")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelProfile:
        values = dict(data)
        if "latency" in values and isinstance(values["latency"], dict):
            values["latency"] = Latency(**values["latency"])
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RequestLog:
    """One request the server served: which model, which fault, streamed or not."""

    model: str
    fault: str  # "ok" or one of FAULTS
    stream: bool
    authorized: bool
    latency: float
    prompt: str
    body: dict[str, Any] | None = None  # the decoded request
    headers: dict[str, str] = field(default_factory=dict)  # names in lower case


class _Closed(Exception):
    """The connection must be closed without a response."""


class OpenAIServer:
    """The server; use as a context manager (starts a thread, stops and joins on exit)."""

    def __init__(
        self,
        profiles: dict[str, ModelProfile] | None = None,
        *,
        default: ModelProfile | None = None,
        seed: int = 0,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.profiles = dict(profiles or {})
        self.default = default if default is not None else ModelProfile()
        self.seed = seed
        self.host = host
        self.port = port
        self.log: list[RequestLog] = []
        self._lock = threading.Lock()
        self._served: Counter[str] = Counter()
        self._rngs: dict[str, random.Random] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> OpenAIServer:
        """Build from `{"seed": 0, "default": {...}, "models": {"name": {...}}}`."""
        return cls(
            {name: ModelProfile.from_dict(p) for name, p in config.get("models", {}).items()},
            default=ModelProfile.from_dict(config["default"]) if "default" in config else None,
            seed=int(config.get("seed", 0)),
            port=int(config.get("port", 0)),
        )

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    # --- lifecycle -------------------------------------------------------------------------

    def start(self) -> OpenAIServer:
        self._thread = threading.Thread(target=self._run, name="openai-server", daemon=True)
        self._thread.start()
        self._ready.wait(timeout=30)
        if self._startup_error is not None:
            raise RuntimeError("the server did not start") from self._startup_error
        return self

    def stop(self) -> None:
        loop = self._loop
        if loop is not None and self._thread is not None:
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout=30)
            loop.call_soon_threadsafe(loop.stop)
            self._thread.join(timeout=30)
            self._loop = None

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            self._server = loop.run_until_complete(
                asyncio.start_server(self._connection, self.host, self.port, backlog=1024)
            )
            self.port = self._server.sockets[0].getsockname()[1]
        except BaseException as error:
            self._startup_error = error
            self._ready.set()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    # --- inspection ------------------------------------------------------------------------

    def requests_for(self, model: str) -> list[RequestLog]:
        with self._lock:
            return [entry for entry in self.log if entry.model == model]

    def fault_counts(self, model: str | None = None) -> Counter[str]:
        with self._lock:
            return Counter(e.fault for e in self.log if model is None or e.model == model)

    # --- HTTP ------------------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while True:
                request_line = await reader.readline()
                if not request_line.strip():
                    break
                method, target, _version = request_line.decode("latin-1").split(" ", 2)
                headers: dict[str, str] = {}
                while True:
                    line = await reader.readline()
                    if line in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = line.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                await self._dispatch(method, target, headers, body, writer)
                if headers.get("connection", "").lower() == "close":
                    break
        except (_Closed, ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        except asyncio.CancelledError:
            pass
        finally:
            self._tasks.discard(task)
            with contextlib.suppress(Exception):
                writer.close()

    async def _dispatch(
        self, method: str, target: str, headers: dict[str, str], body: bytes, writer: Any
    ) -> None:
        path = target.split("?", 1)[0].rstrip("/")
        if path.endswith("/models") and method == "GET":
            data = [{"id": name, "object": "model", "owned_by": "local"} for name in self.profiles]
            await self._send_json(writer, 200, {"object": "list", "data": data})
            return
        if not path.endswith("/chat/completions"):
            await self._send_error(writer, 404, f"no route for {method} {path}")
            return
        if method != "POST":
            await self._send_error(writer, 405, "use POST")
            return
        try:
            request = json.loads(body)
            model = str(request["model"])
            messages = request["messages"]
        except (ValueError, KeyError, TypeError):
            await self._send_error(writer, 400, "the request body is not a chat completion request")
            return
        profile = self.profiles.get(model, self.default)
        stream = bool(request.get("stream", False))
        prompt = " ".join(
            str(m.get("content", "")) for m in messages if isinstance(m, dict)
        ).strip()
        authorized = profile.api_key is None or (
            headers.get("authorization", "") == f"Bearer {profile.api_key}"
        )
        with self._lock:
            index = self._served[model]
            self._served[model] += 1
            rng = self._rngs.setdefault(model, random.Random(f"{self.seed}:{model}"))
            fault = self._choose_fault(profile, index, rng) if authorized else "401"
            latency = profile.latency.sample(rng)
            text = self._choose_text(profile, prompt, rng)
            self.log.append(
                RequestLog(model, fault, stream, authorized, latency, prompt, request, headers)
            )

        if fault == "timeout":
            await asyncio.sleep(profile.hang_seconds)
            raise _Closed
        if fault == "reset":
            await asyncio.sleep(min(latency, 0.05))
            sock = writer.get_extra_info("socket")
            if sock is not None:
                # SO_LINGER with a zero timeout makes close() send RST instead of FIN
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            raise _Closed
        if fault == "content_filter":
            await asyncio.sleep(latency)
            await self._send_error(
                writer, 400, "The response was filtered by the content policy.", "content_filter"
            )
            return
        if fault == "context_length":
            await asyncio.sleep(latency)
            await self._send_error(
                writer,
                400,
                "This model's maximum context length is 2048 tokens. However, your messages "
                "resulted in 3100 tokens. Please reduce the length of the messages.",
                "context_length_exceeded",
            )
            return
        if fault.isdigit():
            await asyncio.sleep(latency)
            await self._send_error(writer, int(fault), f"injected fault {fault}")
            return
        if fault == "malformed":
            await asyncio.sleep(latency)
            await self._send_raw(writer, 200, b'{"id": "chatcmpl-x", "choices": [{"mess', "json")
            return
        if fault in ("empty_choices", "no_message", "error_body"):
            await asyncio.sleep(latency)
            choice = {"index": 0, "finish_reason": "stop"}
            bodies: dict[str, dict[str, Any]] = {
                "empty_choices": {"id": f"chatcmpl-{index}", "model": model, "choices": []},
                "no_message": {"id": f"chatcmpl-{index}", "model": model, "choices": [choice]},
                "error_body": {
                    "error": {"message": profile.error_message, "type": "server_error", "code": 503}
                },
            }
            await self._send_json(writer, 200, bodies[fault])
            return

        created = int(time.time())
        completion_id = f"chatcmpl-{index}"
        usage = profile.usage or {
            "prompt_tokens": len(prompt.split()),
            "completion_tokens": len(text.split()),
            "total_tokens": len(prompt.split()) + len(text.split()),
        }
        if not stream:
            await asyncio.sleep(latency)
            payload = {
                "id": completion_id,
                "object": "chat.completion",
                "created": created,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": usage,
            }
            await self._send_json(writer, 200, payload)
            return
        await self._stream(writer, model, completion_id, created, text, usage, latency, profile)

    async def _stream(
        self,
        writer: Any,
        model: str,
        completion_id: str,
        created: int,
        text: str,
        usage: dict[str, Any],
        latency: float,
        profile: ModelProfile,
    ) -> None:
        def chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
            return {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        words = text.split(" ")
        pieces = [words[0], *(" " + w for w in words[1:])]
        ttft = latency * profile.ttft_fraction
        gap = (latency - ttft) / max(1, len(pieces))
        await asyncio.sleep(ttft)
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\ncache-control: no-cache\r\n\r\n"
        )
        events = [chunk({"role": "assistant", "content": pieces[0]}, None)]
        events.extend(chunk({"content": piece}, None) for piece in pieces[1:])
        events.append(chunk({}, "stop"))
        for number, event in enumerate(events):
            if 0 < number < len(pieces):
                await asyncio.sleep(gap)
            await self._write_chunk(writer, f"data: {json.dumps(event)}\n\n".encode())
        final = {**chunk({}, None), "choices": [], "usage": usage}
        await self._write_chunk(writer, f"data: {json.dumps(final)}\n\n".encode())
        await self._write_chunk(writer, b"data: [DONE]\n\n")
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    @staticmethod
    async def _write_chunk(writer: Any, data: bytes) -> None:
        writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        await writer.drain()

    @staticmethod
    def _choose_fault(profile: ModelProfile, index: int, rng: random.Random) -> str:
        if index < len(profile.faults):
            return profile.faults[index]
        draw = rng.random()
        total = 0.0
        for fault, rate in profile.fault_rates.items():
            total += rate
            if draw < total:
                return fault
        return "ok"

    @staticmethod
    def _choose_text(profile: ModelProfile, prompt: str, rng: random.Random) -> str:
        for key, choices in profile.responses_by_prompt.items():
            if key in prompt and choices:
                return rng.choice(choices)
        if profile.responses:
            return rng.choice(profile.responses)
        topic = " ".join(prompt.split()[:12]) or "nothing"
        return f"Here is an answer about: {topic}. It has two sentences."

    async def _send_error(
        self, writer: Any, status: int, message: str, code: str | None = None
    ) -> None:
        error = {
            "message": message,
            "type": _ERROR_TYPES.get(status, "server_error"),
            "param": None,
            "code": code or str(status),
        }
        await self._send_json(writer, status, {"error": error})

    async def _send_json(self, writer: Any, status: int, payload: dict[str, Any]) -> None:
        await self._send_raw(writer, status, json.dumps(payload).encode(), "json")

    @staticmethod
    async def _send_raw(writer: Any, status: int, body: bytes, kind: str) -> None:
        content_type = "application/json" if kind == "json" else "text/plain"
        head = (
            f"HTTP/1.1 {status} {_STATUS_TEXT.get(status, 'Status')}\r\n"
            f"content-type: {content_type}\r\ncontent-length: {len(body)}\r\n"
            + ("retry-after: 0\r\n" if status == 429 else "")
            + "\r\n"
        )
        writer.write(head.encode() + body)
        await writer.drain()


@contextlib.contextmanager
def serve_in_subprocess(config: dict[str, Any]) -> Iterator[str]:
    """Run the server in its own Python process; yield its base URL; stop it on exit."""
    with serve_process(config) as (base_url, _pid):
        yield base_url


@contextlib.contextmanager
def serve_process(config: dict[str, Any]) -> Iterator[tuple[str, int]]:
    """`serve_in_subprocess`, yielding the server's process id too (to read its CPU time)."""
    root = Path(__file__).resolve().parents[2]
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.openai_server", "--config", json.dumps(config)],
        cwd=root,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith("listening "):
            raise RuntimeError(f"the server did not start: {line!r}")
        yield line.split()[1], process.pid
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--config", default="{}", help="JSON text, or @path to a JSON file")
    parser.add_argument("--port", type=int, default=None)
    args = parser.parse_args(argv)
    text = Path(args.config[1:]).read_text() if args.config.startswith("@") else args.config
    config = json.loads(text)
    if args.port is not None:
        config["port"] = args.port
    server = OpenAIServer.from_config(config).start()
    print(f"listening {server.base_url}", flush=True)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    signal.signal(signal.SIGINT, lambda *_: stopped.set())
    stopped.wait()
    server.stop()


if __name__ == "__main__":
    main()
