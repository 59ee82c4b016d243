"""The metering proxy (agent/meter.py) over real HTTP: the scripted model server of the
real-agent tests (tests/support/agent_server.py) as its upstream, and a server that holds its
stream open until the client has read the first event (so a proxy that buffers never
answers). No agent CLI involved."""

from __future__ import annotations

import http.client
import json
import socket
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from tests.support.agent_server import Reply, Script, ScriptedAgentServer, ToolCall

from plumbline.agent.meter import Meter, TrialMeter, allowed
from plumbline.agent.meter_usage import Tokens, UsageReader
from plumbline.agent.metering import discrepancy, usage_fields

KEY = "sk-real-key-0123456789abcdef"
SCRIPT = Script([ToolCall("Read", {"file_path": "x"}), Reply("done")])


def post(url: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, bytes]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    connection.request("POST", parts.path, json.dumps(body), headers)
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, data


@pytest.fixture
def upstream() -> Iterator[ScriptedAgentServer]:
    with ScriptedAgentServer(SCRIPT) as server:
        yield server


def routed(meter: Meter, server: ScriptedAgentServer) -> tuple[TrialMeter, dict[str, str]]:
    trial = meter.open_trial()
    env = {
        "ANTHROPIC_BASE_URL": server.origin,
        "OPENAI_BASE_URL": server.base_url,
        "ANTHROPIC_API_KEY": KEY,
        "UNRELATED": "https://example.com/x",
    }
    return trial, trial.environment(env, {"ANTHROPIC_API_KEY": KEY}, None)


def test_each_api_is_forwarded_and_metered_with_the_real_key_swapped_in(
    upstream: ScriptedAgentServer,
) -> None:
    tools = [{"name": "Read", "type": "function", "function": {"name": "Read"}}]
    with Meter([f"127.0.0.1:{upstream.port}"]) as meter:
        trial, env = routed(meter, upstream)
        assert env["ANTHROPIC_BASE_URL"].startswith(f"{meter.origin}/{trial.token}/")
        assert env["OPENAI_BASE_URL"].endswith("/v1") and KEY not in json.dumps(env)
        assert env["UNRELATED"] == "https://example.com/x"  # not an allowed upstream
        credential = env["ANTHROPIC_API_KEY"]
        headers = {"content-type": "application/json", "x-api-key": credential}
        for path, body in (
            ("/v1/messages", {"model": "claude-x", "stream": True, "tools": tools}),
            ("/chat/completions", {"model": "gpt-x", "stream": True, "tools": tools}),
            ("/chat/completions", {"model": "gpt-x", "tools": tools}),
            ("/responses", {"model": "gpt-y", "tools": tools, "input": []}),
        ):
            base = env["ANTHROPIC_BASE_URL"] if "messages" in path else env["OPENAI_BASE_URL"]
            status, data = post(base + path, {**body, "messages": []}, headers)
            assert status == 200 and data
        calls = meter.close_trial(trial)
        # The trial is over: its token no longer opens anything.
        status, _ = post(env["ANTHROPIC_BASE_URL"] + "/v1/messages", {}, headers)
        assert status == 403
    assert set(upstream.credentials) == {KEY}
    assert [c.api for c in calls] == ["messages", "chat", "chat", "responses"]
    assert [c.streamed for c in calls] == [True, True, False, True]
    assert [c.model for c in calls] == ["claude-x", "gpt-x", "gpt-x", "gpt-y"]
    sent = [s.usage for s in upstream.served]
    # Anthropic states uncached input; OpenAI counts cached (and here written) tokens inside.
    assert calls[0].tokens == Tokens(sent[0].input - 850, sent[0].output, 800, 50)
    assert calls[1].tokens == Tokens(sent[1].input - 800, sent[1].output, 800, 0)
    assert calls[2].tokens == Tokens(sent[2].input - 800, sent[2].output, 800, 0)
    assert calls[3].tokens == Tokens(sent[3].input - 850, sent[3].output, 800, 50, 0)
    assert all(c.status == 200 and c.first_byte_seconds is not None for c in calls)


def test_unknown_trials_and_unrouted_upstreams_are_refused(upstream: ScriptedAgentServer) -> None:
    with Meter([f"127.0.0.1:{upstream.port}"]) as meter:
        trial, env = routed(meter, upstream)
        base = env["ANTHROPIC_BASE_URL"]
        route = base.rsplit("/", 1)[1]
        status, _ = post(f"{meter.origin}/{'0' * 32}/{route}/v1/messages", {}, {})
        assert status == 403
        status, _ = post(f"{meter.origin}/{trial.token}/99/v1/messages", {}, {})
        assert status == 404
        other = meter.open_trial()  # a trial that was given no route gets none
        status, _ = post(f"{meter.origin}/{other.token}/{route}/v1/messages", {}, {})
        assert status == 404
    assert upstream.requests == []


def test_the_unix_socket_serves_the_same_routes(upstream: ScriptedAgentServer) -> None:
    with Meter([f"127.0.0.1:{upstream.port}"]) as meter:
        trial, env = routed(meter, upstream)
        path = urlsplit(env["OPENAI_BASE_URL"]).path + "/chat/completions"
        body = json.dumps({"model": "m", "messages": []}).encode()
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(str(meter.socket_path))
            client.sendall(
                f"POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()
                + body
            )
            answer = b""
            while chunk := client.recv(65536):
                answer += chunk
        calls = meter.close_trial(trial)
    assert answer.startswith(b"HTTP/1.1 200") and b'"done"' not in answer[:12]
    assert len(calls) == 1 and calls[0].tokens is not None and calls[0].tokens.output > 0


def test_a_long_temporary_directory_still_gives_a_socket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a TMPDIR whose socket path would pass the 108 bytes of sun_path: the meter uses /tmp
    long_dir = tmp_path / ("t" * 100)
    long_dir.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(long_dir))
    with Meter() as meter:
        assert meter.socket_path.parent.parent == Path("/tmp")
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(str(meter.socket_path))
            client.sendall(b"GET /nothing HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            assert client.recv(64).startswith(b"HTTP/1.1 403")  # the meter answered
    assert not meter.socket_path.parent.exists()
    assert list(long_dir.iterdir()) == []


class _HeldStream(BaseHTTPRequestHandler):
    """Sends one event, then waits for the test to say the client has it, then the rest."""

    protocol_version = "HTTP/1.1"
    release: threading.Event

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        first = b'data: {"type":"response.created","response":{"model":"held"}}\n\n'
        self.wfile.write(f"{len(first):x}\r\n".encode() + first + b"\r\n")
        self.wfile.flush()
        self.release.wait(timeout=60)
        usage = {"input_tokens": 10, "output_tokens": 2}
        done = json.dumps({"type": "response.completed", "response": {"usage": usage}})
        last = f"data: {done}\n\n".encode()
        self.wfile.write(f"{len(last):x}\r\n".encode() + last + b"\r\n0\r\n\r\n")
        self.wfile.flush()


def test_a_stream_reaches_the_agent_event_by_event() -> None:
    release = threading.Event()
    handler = type("Held", (_HeldStream,), {"release": release})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]
    try:
        with Meter([f"127.0.0.1:{port}"]) as meter:
            trial = meter.open_trial()
            base = trial.rewrite(f"http://127.0.0.1:{port}/v1")
            parts = urlsplit(base + "/responses")
            connection = http.client.HTTPConnection("127.0.0.1", parts.port, timeout=30)
            connection.request("POST", parts.path, "{}", {"content-type": "application/json"})
            response = connection.getresponse()
            # The upstream sends the rest only once this first event got here: a proxy that
            # waited for the whole body would time out instead.
            first = response.readline()
            release.set()
            rest = response.read()
            connection.close()
            calls = meter.close_trial(trial)
    finally:
        release.set()
        server.shutdown()
        server.server_close()
    assert first.startswith(b"data: ") and b"response.created" in first
    assert b"response.completed" in rest
    assert calls[0].tokens == Tokens(10, 2, 0, 0, None) and calls[0].model == "held"


def test_an_unreachable_upstream_is_a_recorded_502() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with Meter([f"127.0.0.1:{port}"]) as meter:
        trial = meter.open_trial()
        status, _ = post(trial.rewrite(f"http://127.0.0.1:{port}") + "/v1/messages", {}, {})
        calls = meter.close_trial(trial)
    assert status == 502 and calls[0].status == 502 and calls[0].tokens is None


def test_the_allowlist_matches_hosts_and_ports() -> None:
    assert allowed("api.anthropic.com", None, ["api.anthropic.com"])
    assert allowed("API.anthropic.com", 443, ["api.anthropic.com"])
    assert allowed("127.0.0.1", 8080, ["127.0.0.1:8080"])
    assert not allowed("127.0.0.1", 8081, ["127.0.0.1:8080"])
    assert not allowed("evil.com", None, ["api.anthropic.com"])
    trial = TrialMeter("t" * 32, "http://127.0.0.1:1", {}, ("api.openai.com",))
    assert (
        trial.rewrite("https://api.openai.com.evil.com/v1") == "https://api.openai.com.evil.com/v1"
    )
    assert (
        trial.rewrite("x https://api.openai.com/v1 y") == f"x http://127.0.0.1:1/{'t' * 32}/0/v1 y"
    )


def test_json_answers_and_split_events_are_read() -> None:
    reader = UsageReader("messages", event_stream=False)
    body = {"type": "message", "model": "c", "usage": {"input_tokens": 5, "output_tokens": 6}}
    data = json.dumps(body).encode()
    reader.feed(data[:7])
    reader.feed(data[7:])
    reader.close()
    assert reader.tokens == Tokens(5, 6) and reader.model == "c"
    stream = UsageReader("messages", event_stream=True)
    start = {"type": "message_start", "message": {"model": "c", "usage": {"input_tokens": 9}}}
    delta = {"type": "message_delta", "usage": {"output_tokens": 40}}
    text = f"event: a\ndata: {json.dumps(start)}\n\ndata: {json.dumps(delta)}\r\n\r\n".encode()
    for byte in range(len(text)):
        stream.feed(text[byte : byte + 1])
    stream.close()
    assert stream.tokens == Tokens(9, 40)


def test_the_discrepancy_is_flagged_over_one_percent() -> None:
    metered = {"input_tokens": 1000, "output_tokens": 0, "cache_read_tokens": 0}
    metered["cache_write_tokens"] = 0
    assert discrepancy(metered, {"input_tokens": 1010}) == (0.01, False)
    assert discrepancy(metered, {"input_tokens": 1011})[1] is True
    assert discrepancy(metered, {"input_tokens": 3}) == (-0.997, True)
    assert discrepancy(metered, {}) == (None, False)
    nothing = dict.fromkeys(metered, 0)
    assert discrepancy(nothing, {"input_tokens": 7}) == (None, True)
    fields = usage_fields(None, {"input_tokens": 5}, "no route")
    assert fields["usage_source"] == "agent-reported" and fields["usage_note"] == "no route"
    assert "input_tokens" not in fields  # the agent's own numbers stay where they were
    bad = usage_fields([], {"input_tokens": -4, "total_cost_usd": float("nan")})
    assert bad["agent_reported_usage"]["input_tokens"] is None
    assert bad["agent_reported_usage"]["total_cost_usd"] is None
    assert bad["usage_discrepancy_flagged"] is False and bad["input_tokens"] == 0


def test_the_harness_exposes_the_bridge_a_network_namespace_needs(tmp_path: Any) -> None:
    from plumbline.agent.harness import Harness, RunOptions
    from plumbline.agent.plan import make_plan
    from plumbline.agent.profiles import resolve_agent
    from plumbline.agent.suite import load_suite

    suite = Path(__file__).resolve().parents[2] / "src/plumbline/examples/agent_suite/suite.toml"
    plan = make_plan(load_suite(suite), resolve_agent("claude-code"), seed=1)
    harness = Harness(plan, RunOptions(output=tmp_path / "out", allow_hosts=("gw:8080",)))
    assert harness.meter_bridges() == {}
    assert harness.allowed_upstreams()[-1] == "gw:8080"
    with harness.metering():
        bridges = harness.meter_bridges()
        assert harness.meter is not None and list(bridges) == [harness.meter.port]
        assert all(path.is_socket() for path in bridges.values())
    assert harness.meter_bridges() == {} and not any(p.exists() for p in bridges.values())


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A directory with a short path: a Unix socket's path must fit in 108 bytes, and pytest's
    `tmp_path` under xdist does not leave room for the meter's directory and socket."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="pm.") as directory:
        yield Path(directory)


def test_a_killed_harness_leaves_its_meter_directory_for_the_next_meter_to_remove(
    short_dir: Path,
) -> None:
    import signal
    import subprocess
    import sys

    from plumbline.agent.meter import HOLDER, METER_PREFIX

    tmp_path = short_dir

    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from plumbline.agent.meter import Meter\n"
        "meter = Meter(directory=Path(sys.argv[1])).__enter__()\n"
        "print(meter.socket_path.parent, flush=True)\n"
        "time.sleep(600)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    left = Path(child.stdout.readline().strip())
    assert left.name.startswith(f"{METER_PREFIX}.") and (left / "meter.sock").exists()
    # A meter whose holder is alive is never touched by another meter's sweep.
    with Meter(directory=tmp_path) as alive_sweep:
        assert left.is_dir() and alive_sweep.socket_path.parent != left
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert left.is_dir()  # SIGKILL gave `close` no chance
    starting = tmp_path / f"{METER_PREFIX}.starting"
    starting.mkdir()  # no holder file yet: a meter being made right now
    with Meter(directory=tmp_path) as meter:
        mine = meter.socket_path.parent
        assert not left.exists()
        assert starting.is_dir()
        assert (mine / HOLDER).is_file()
    assert sorted(path.name for path in tmp_path.iterdir()) == [starting.name]
