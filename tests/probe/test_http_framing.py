"""The probe records every trial as the standard HTTP stack reads it, whatever framing HTTP
allows the server to use.

Real servers on loopback answer chat completions with raw bytes: one closes each connection
once it has answered, without `Connection: close` (as load balancers and provider gateways do
after their keep-alive timeout), one ends its response head with bare LFs, one lists
`Content-Length: N, N`, one folds a header over two lines. The probe runs on its fast path
(the openai SDK's prepared request, sent through httpx2's standard transport) and on the
public one (Inspect's `Model.generate`); every trial is compared with what a plain httpx2
client reads from the same server. A hand-written HTTP client (issue 39) recorded half the
trials of the first server as ConnectionError and timed out on the second.
"""

from __future__ import annotations

import asyncio
import json
import socket
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from tests.probe.helpers import FAKE_KEY

from plumbline.probe.caller import InspectCaller
from plumbline.probe.runner import run_probe
from plumbline.probe.settings import ProbeSettings, Prompt

TEXT = "A circuit breaker stops calls to a failing service."
_BODY = json.dumps(
    {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": TEXT},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 9, "completion_tokens": 11, "total_tokens": 20},
    }
).encode()


def _head(lines: list[str], end: str = "\r\n") -> bytes:
    return "".join(f"{line}{end}" for line in lines).encode() + end.encode()


# framing -> (the answer's bytes, whether the server closes the connection after answering)
FRAMINGS: dict[str, tuple[bytes, bool]] = {
    "closes idle connections": (
        _head(
            [
                "HTTP/1.1 200 OK",
                "Content-Type: application/json",
                f"Content-Length: {len(_BODY)}",
            ]
        )
        + _BODY,
        True,
    ),
    "bare LF head": (
        _head(
            ["HTTP/1.1 200 OK", "Content-Type: application/json", f"Content-Length: {len(_BODY)}"],
            end="\n",
        )
        + _BODY,
        False,
    ),
    "listed Content-Length": (
        _head(
            [
                "HTTP/1.1 200 OK",
                "Content-Type: application/json",
                f"Content-Length: {len(_BODY)}, {len(_BODY)}",
            ]
        )
        + _BODY,
        False,
    ),
    "folded header": (
        _head(
            [
                "HTTP/1.1 200 OK",
                "Content-Type: application/json",
                "X-Gateway: edge,",
                "\tregion-1",
                f"Content-Length: {len(_BODY)}",
            ]
        )
        + _BODY,
        False,
    ),
}


class _Handler(socketserver.BaseRequestHandler):
    server: _FramingServer

    def handle(self) -> None:
        sock: socket.socket = self.request
        self.server.connections += 1
        buffer = b""
        while True:
            while b"\r\n\r\n" not in buffer:
                data = sock.recv(65536)
                if not data:
                    return
                buffer += data
            head, _, buffer = buffer.partition(b"\r\n\r\n")
            length = next(
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            while len(buffer) < length:
                buffer += sock.recv(65536)
            buffer = buffer[length:]
            self.server.requests += 1
            answer, close = self.server.framing
            if not close:
                sock.sendall(answer)
                continue
            # no `Connection: close`: the client learns it from the end of the connection, which
            # comes with the answer (corked: one segment), as from a server in its own process
            # (this one shares the client's interpreter, which may run the client first)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
            sock.sendall(answer)
            sock.shutdown(socket.SHUT_WR)
            return


class _FramingServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, framing: tuple[bytes, bool]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.framing = framing
        self.connections = 0
        self.requests = 0


@contextmanager
def serving(framing: tuple[bytes, bool]) -> Iterator[_FramingServer]:
    server = _FramingServer(framing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _url(server: _FramingServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


def _standard_reading(server: _FramingServer, trials: int) -> list[Any]:
    """What a plain httpx2 client (the standard stack) reads: the answer's text, or the class
    of its exception, trial after trial on one client."""

    async def main() -> list[Any]:
        outcomes: list[Any] = []
        async with httpx2.AsyncClient(timeout=5.0) as client:
            for _ in range(trials):
                try:
                    response = await client.post(
                        f"{_url(server)}/chat/completions", json={"model": "m"}
                    )
                    outcomes.append(response.json()["choices"][0]["message"]["content"])
                except httpx2.HTTPError as error:
                    outcomes.append(type(error).__name__)
        return outcomes

    return asyncio.run(main())


_KEPT = ("response", "error_class", "http_status", "input_tokens", "output_tokens", "attempts")


def _probe(server: _FramingServer, trials: int, path: Path) -> list[dict[str, Any]]:
    settings = ProbeSettings(
        models=("openai-api/local/m",),
        prompts=(Prompt("p", "Explain what a circuit breaker does."),),
        trials=trials,
        concurrency=1,
        timeout=5.0,
    )
    caller = InspectCaller(settings)
    summary = asyncio.run(run_probe(settings, path, caller=caller))
    assert summary.completed == trials
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return sorted(records, key=lambda r: r["trial"])


@pytest.mark.parametrize("framing", list(FRAMINGS))
@pytest.mark.parametrize(
    ("compat", "call_path"), [("", "prepared_request"), ("public", "model_generate")]
)
def test_every_trial_is_recorded_as_the_standard_stack_reads_it(
    framing: str, compat: str, call_path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trials = 20
    monkeypatch.setenv("PLUMBLINE_COMPAT", compat)
    with serving(FRAMINGS[framing]) as server:
        monkeypatch.setenv("LOCAL_BASE_URL", _url(server))
        monkeypatch.setenv("LOCAL_API_KEY", FAKE_KEY)
        standard = _standard_reading(server, trials)
        records = _probe(server, trials, tmp_path / "trials.jsonl")
        assert server.requests == 2 * trials  # one request per trial, none retried
    assert {r["call_path"] for r in records} == {call_path}
    # every framing here is one HTTP allows: the standard stack reads every answer
    assert standard == [TEXT] * trials
    assert [{k: r[k] for k in _KEPT} for r in records] == [
        {
            "response": TEXT,
            "error_class": None,
            "http_status": None,
            "input_tokens": 9,
            "output_tokens": 11,
            "attempts": 1,
        }
    ] * trials
