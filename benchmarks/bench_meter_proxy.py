"""The metering proxy's cost: what `agent run`'s proxy (agent/meter.py) adds to each model call,
against calling the same local model server directly, in the same run.

The upstream is the scripted model of the real-agent tests (tests/support/agent_server.py),
on loopback. Calls alternate direct / through the proxy so machine load hits both alike, each
on a kept-alive connection, as agent CLIs make them:

1. Latency per call: a streamed Anthropic Messages answer read to its end; the median
   difference (proxy - direct) is the proxy's added latency per call.
2. Time to the first streamed token: from sending the request to the first `data:` line of a
   stream whose upstream holds every later event until the client has the first one (so the
   number is the first event's own latency, and a buffering proxy could not answer at all);
   the median ratio proxy / direct.

The proxy runs in a process of its own here: in `agent run` the agent and the provider are
other processes, and the proxy's thread shares the harness's process only with threads that
mostly wait (output pumps, waits on trial processes). `--same-process` runs it in a thread
beside this benchmark's client and servers, whose Python work then holds the GIL the proxy
needs and is counted as its latency.

Target: the proxy adds under 2 ms median latency per call, and the first streamed token is
not delayed (its added time is within the same 2 ms).

    python benchmarks/bench_meter_proxy.py              # 400 calls per mode
    python benchmarks/bench_meter_proxy.py --calls 50
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import multiprocessing
import os
import socket
import statistics
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.agent_server import Reply, Script, ScriptedAgentServer

from plumbline.agent.meter import Meter, MeteredCall

TARGET_MS = 2.0
BODY = json.dumps({"model": "claude-x", "stream": True, "messages": [], "tools": []})


class _FirstEvent(BaseHTTPRequestHandler):
    """A stream whose first event goes out at once, the last once the client asks for it
    (a second request on another connection sets `release`)."""

    protocol_version = "HTTP/1.1"
    release = threading.Event()

    def log_message(self, format: str, *args: Any) -> None:
        return

    def setup(self) -> None:
        super().setup()
        # As model providers' servers do: each event leaves at once (no Nagle delay, which
        # would otherwise wait for the reader's delayed acknowledgement).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.path.endswith("/release"):
            type(self).release.set()
            self.send_response(204)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        first = b'data: {"type":"response.created","response":{"model":"m"}}\n\n'
        self.wfile.write(f"{len(first):x}\r\n".encode() + first + b"\r\n")
        self.wfile.flush()
        type(self).release.wait(timeout=30)
        type(self).release.clear()
        last = b'data: {"type":"response.completed","response":{"usage":{}}}\n\n'
        self.wfile.write(f"{len(last):x}\r\n".encode() + last + b"\r\n0\r\n\r\n")
        self.wfile.flush()


def _connection(url: str) -> tuple[http.client.HTTPConnection, str]:
    parts = urlsplit(url)
    return http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60), parts.path


def whole_call(connection: http.client.HTTPConnection, path: str) -> float:
    """Seconds for one streamed call read to its end."""
    started = time.perf_counter()
    connection.request("POST", path, BODY, {"content-type": "application/json"})
    response = connection.getresponse()
    response.read()
    return time.perf_counter() - started


def first_event(connection: http.client.HTTPConnection, path: str, release: str) -> float:
    """Seconds to the first `data:` line of a held stream (then released and drained)."""
    started = time.perf_counter()
    connection.request("POST", path, "{}", {"content-type": "application/json"})
    response = connection.getresponse()
    line = response.readline()
    elapsed = time.perf_counter() - started
    assert line.startswith(b"data: "), line
    other, other_path = _connection(release)
    other.request("POST", other_path, "{}")
    other.getresponse().read()
    other.close()
    response.read()
    return elapsed


def _serve_meter(allow: list[str], origins: list[str], connection: Connection) -> None:
    """In the proxy's own process: run the meter, send the trial's routes for `origins`, wait
    for the word to stop, send back the calls it counted."""
    with Meter(allow) as meter:
        trial = meter.open_trial()
        connection.send([trial.rewrite(origin) for origin in origins])
        connection.recv()
        connection.send(meter.close_trial(trial))


@contextlib.contextmanager
def proxy_routes(
    allow: list[str], origins: list[str], *, same_process: bool
) -> Iterator[tuple[list[str], list[MeteredCall]]]:
    """The proxy's routes to `origins` while the block runs, then the calls it counted (filled
    in on exit). By default the proxy runs in a process of its own (the agent and the provider
    are other processes in `agent run`); `same_process` runs it in a thread here, where the
    benchmark's own client and servers compete with it for the GIL."""
    counted: list[MeteredCall] = []
    if same_process:
        with Meter(allow) as meter:
            trial = meter.open_trial()
            yield [trial.rewrite(origin) for origin in origins], counted
            counted += meter.close_trial(trial)
        return
    here, there = multiprocessing.get_context("fork").Pipe()
    process = multiprocessing.get_context("fork").Process(
        target=_serve_meter, args=(allow, origins, there), daemon=True
    )
    process.start()
    try:
        yield here.recv(), counted
        here.send("stop")
        counted += here.recv()
    finally:
        process.join(timeout=30)
        if process.is_alive():
            process.kill()


def measure(calls: int, *, same_process: bool = False) -> dict[str, float]:
    script = Script([Reply("done")])
    held = ThreadingHTTPServer(("127.0.0.1", 0), _FirstEvent)
    held.daemon_threads = True
    threading.Thread(target=held.serve_forever, daemon=True).start()
    held_origin = f"http://127.0.0.1:{held.server_address[1]}"
    try:
        with ScriptedAgentServer(script) as server:
            allow = [f"127.0.0.1:{server.port}", f"127.0.0.1:{held.server_address[1]}"]
            origins = [server.origin, held_origin]
            with proxy_routes(allow, origins, same_process=same_process) as (routes, metered):
                direct, direct_path = _connection(server.origin + "/v1/messages")
                proxied, proxied_path = _connection(routes[0] + "/v1/messages")
                held_direct, held_path = _connection(held_origin + "/v1/responses")
                held_proxied, held_proxied_path = _connection(routes[1] + "/v1/responses")
                release = held_origin + "/release"
                for _ in range(20):  # warm up both paths (connections, caches)
                    whole_call(direct, direct_path)
                    whole_call(proxied, proxied_path)
                calls_direct, calls_proxied, first_direct, first_proxied = [], [], [], []
                for _ in range(calls):
                    calls_direct.append(whole_call(direct, direct_path))
                    calls_proxied.append(whole_call(proxied, proxied_path))
                    first_direct.append(first_event(held_direct, held_path, release))
                    first_proxied.append(first_event(held_proxied, held_proxied_path, release))
                for connection in (direct, proxied, held_direct, held_proxied):
                    connection.close()
    finally:
        held.shutdown()
        held.server_close()
    assert len([c for c in metered if c.api == "messages"]) == calls + 20
    added = [p - d for p, d in zip(calls_proxied, calls_direct, strict=True)]
    first_added = [p - d for p, d in zip(first_proxied, first_direct, strict=True)]
    return {
        "direct_ms": statistics.median(calls_direct) * 1e3,
        "proxied_ms": statistics.median(calls_proxied) * 1e3,
        "added_ms": statistics.median(added) * 1e3,
        "first_direct_ms": statistics.median(first_direct) * 1e3,
        "first_proxied_ms": statistics.median(first_proxied) * 1e3,
        "first_added_ms": statistics.median(first_added) * 1e3,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=400, help="calls per mode (default 400)")
    parser.add_argument(
        "--same-process",
        action="store_true",
        help="run the proxy in a thread of this process (beside the client and the servers)",
    )
    args = parser.parse_args()
    found = measure(args.calls, same_process=args.same_process)
    where = "a thread of the benchmark's process" if args.same_process else "its own process"
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; proxy in {where}")
    print(f"calls per mode: {args.calls}")
    print(
        f"whole streamed call, median: direct {found['direct_ms']:.2f} ms, through the proxy "
        f"{found['proxied_ms']:.2f} ms; ratio {found['proxied_ms'] / found['direct_ms']:.2f}x; "
        f"added {found['added_ms']:.2f} ms per call (target < {TARGET_MS} ms)"
    )
    print(
        f"first streamed event, median: direct {found['first_direct_ms']:.2f} ms, through the "
        f"proxy {found['first_proxied_ms']:.2f} ms; ratio "
        f"{found['first_proxied_ms'] / found['first_direct_ms']:.2f}x; added "
        f"{found['first_added_ms']:.2f} ms (target < {TARGET_MS} ms)"
    )
    ok = found["added_ms"] < TARGET_MS and found["first_added_ms"] < TARGET_MS
    print("target met" if ok else "target NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
