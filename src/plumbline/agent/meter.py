"""The metering proxy: every model call of a trial goes through the harness, which counts it.

One `Meter` serves a run, on an aiohttp server in a thread of its own: on a loopback TCP port
(`port`, what base URLs name) and on a Unix socket (`socket_path`, which a sandbox with its own
network namespace bridges to the same loopback port inside the trial). A trial opens a
`TrialMeter`:

- every URL of an allowed upstream (`network.allow`, `--allow-host`) in the agent's environment
  and HOME files becomes `http://127.0.0.1:<port>/<trial token>/<route>/<path>`, so the agent's
  own configuration (a base URL in a variable, a config file) points at the proxy;
- every passed-through key (a `--pass-env` variable named `*API_KEY` or `*AUTH_TOKEN`) becomes a
  per-trial credential, worthless anywhere else: the proxy puts the real key back in the
  headers it forwards, so the real key never enters the trial.

The proxy forwards OpenAI Chat Completions, OpenAI Responses and Anthropic Messages (and any
other call under an allowed upstream) with the body as it arrives: server-sent events reach the
agent chunk by chunk, never buffered. Per call it keeps what the provider's response says
(`MeteredCall`: tokens by kind, model, status, latency); the harness, not the agent, counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from yarl import URL

from plumbline.agent.leases import holder, holder_alive
from plumbline.agent.meter_usage import Api, Tokens, UsageReader, api_of
from plumbline.agent.safe_files import remove_tree
from plumbline.records.io import write_json_atomic

#: Upstreams allowed without `--allow-host`: the providers the built-in profiles call.
DEFAULT_ALLOW = ("api.anthropic.com", "api.openai.com")

#: Where a profile calls when its environment names no base URL: set so it goes through the
#: proxy (Claude Code reads `ANTHROPIC_BASE_URL`; Codex and OpenCode take theirs from their
#: configuration, which the proxy rewrites like any other).
PROFILE_BASE_URLS: dict[str, dict[str, str]] = {
    "claude-code": {"ANTHROPIC_BASE_URL": "https://api.anthropic.com"},
}

#: Passed-through variables that are model keys: swapped for per-trial credentials.
KEY_NAME = re.compile(r"(?:API_?KEY|AUTH_?TOKEN)$", re.IGNORECASE)

_URL = re.compile(r"\b(https?)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?")
_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "accept-encoding",
        "content-encoding",
    }
)


class MeterError(RuntimeError):
    """The proxy could not start."""


@dataclass(frozen=True)
class MeteredCall:
    """One call through the proxy, as the provider answered it."""

    api: Api
    method: str
    upstream: str  # scheme://host[:port]
    path: str  # below the upstream, without the query
    status: int
    model: str | None
    tokens: Tokens | None  # None: the response stated no usage
    latency_seconds: float  # request received -> response ended
    first_byte_seconds: float | None  # request received -> first body byte from upstream
    streamed: bool
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        tokens = self.tokens
        return {
            "api": self.api,
            "method": self.method,
            "upstream": self.upstream,
            "path": self.path,
            "status": self.status,
            "model": self.model,
            "input_tokens": tokens.input if tokens else None,
            "output_tokens": tokens.output if tokens else None,
            "cache_read_tokens": tokens.cache_read if tokens else None,
            "cache_write_tokens": tokens.cache_write if tokens else None,
            "reasoning_tokens": tokens.reasoning if tokens else None,
            "latency_seconds": round(self.latency_seconds, 6),
            "first_byte_seconds": (
                None if self.first_byte_seconds is None else round(self.first_byte_seconds, 6)
            ),
            "streamed": self.streamed,
            "error": self.error,
        }


def allowed(host: str, port: int | None, allow: Iterable[str]) -> bool:
    """Whether `host[:port]` is on the allowlist (an entry `host` allows every port)."""
    host = host.lower()
    for entry in allow:
        entry = entry.lower()
        if entry == host or (port is not None and entry == f"{host}:{port}"):
            return True
    return False


@dataclass
class TrialMeter:
    """One trial's view of the proxy: its token, its credentials and the calls it made."""

    token: str
    proxy: str  # http://127.0.0.1:<port>
    routes: dict[str, int]  # upstream origin -> route number (shared by the run)
    allow: tuple[str, ...]
    credentials: dict[str, str] = field(default_factory=dict)  # per-trial credential -> real
    calls: list[MeteredCall] = field(default_factory=list)
    rewritten: set[str] = field(default_factory=set)  # upstream origins routed to the proxy

    @property
    def routed(self) -> bool:
        """Whether anything of the agent's configuration points at the proxy."""
        return bool(self.rewritten)

    def rewrite(self, text: str) -> str:
        """`text` with every URL of an allowed upstream pointed at this trial's route."""

        def replace(match: re.Match[str]) -> str:
            scheme, host, port = match.group(1), match.group(2), match.group(3)
            number = int(port) if port else None
            if not allowed(host.strip("[]"), number, self.allow):
                return match.group(0)
            origin = f"{scheme}://{host}" + (f":{port}" if port else "")
            route = self.routes.setdefault(origin, len(self.routes))
            self.rewritten.add(origin)
            return f"{self.proxy}/{self.token}/{route}"

        return _URL.sub(replace, text)

    def environment(
        self, env: Mapping[str, str], keys: Mapping[str, str], profile: str | None
    ) -> dict[str, str]:
        """The agent's environment routed through the proxy: base URLs rewritten (the profile's
        default one added when unset), `keys` (name -> real value) swapped for credentials."""
        result = {**PROFILE_BASE_URLS.get(profile or "", {}), **env}
        result = {name: self.rewrite(value) for name, value in result.items()}
        for name, real in keys.items():
            if name in result and result[name] == real:
                credential = f"plumbline-trial-{self.token[:8]}-{secrets.token_hex(16)}"
                self.credentials[credential] = real
                result[name] = credential
        return result

    def rewrite_bytes(self, content: bytes) -> bytes:
        """A HOME file routed like the environment: allowed upstream URLs pointed at the
        proxy, the real keys replaced by their credentials (bytes that are not UTF-8 as is)."""
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            return content
        text = self.rewrite(text)
        for credential, real in self.credentials.items():
            text = text.replace(real, credential)
        return text.encode("utf-8")


@dataclass
class _Pending:
    """A call being relayed."""

    trial: TrialMeter
    origin: str
    method: str
    path: str
    api: Api
    started: float
    body: bytes = b""  # the request's, read for its model only when the answer names none
    status: int = 0
    streamed: bool = False
    first: float | None = None
    reader: UsageReader | None = None
    error: str | None = None


def _requested_model(body: bytes) -> str | None:
    """The `model` a JSON request body names (None for anything else)."""
    if not body.lstrip().startswith(b"{"):
        return None
    try:
        value = json.loads(body)
    except ValueError:
        return None
    model = value.get("model") if isinstance(value, dict) else None
    return model if isinstance(model, str) and model else None


#: Each meter's directory (its Unix socket, and the holder file naming its process) starts so.
METER_PREFIX = "plumbline-meter"
HOLDER = "holder.json"
SOCKET = "meter.sock"
#: The longest Unix socket path (sun_path is 108 bytes on Linux, with its closing NUL).
MAX_SOCKET_PATH = 107


def meter_parent(directory: Path | None) -> Path:
    """Where the meter's directory goes: `directory`, or else the system's temporary directory,
    or /tmp when a socket under that one would be too long (a long TMPDIR)."""
    if directory is not None:
        return directory
    parent = Path(tempfile.gettempdir())
    # mkdtemp adds "/<prefix>.<8 random characters>" to the parent, then the socket's name
    longest = len(os.fsencode(parent)) + len(f"/{METER_PREFIX}.") + 8 + len(f"/{SOCKET}")
    return parent if longest <= MAX_SOCKET_PATH else Path("/tmp")


def sweep_orphans(parent: Path) -> list[Path]:
    """Remove the directories that meters of killed harnesses left in `parent` (a SIGKILL gives
    `close` no chance); returns them. A directory whose holder still runs, or that has no
    holder file yet (a meter starting now), is left alone."""
    removed = []
    for directory in sorted(parent.glob(f"{METER_PREFIX}.*")):
        try:
            document = json.loads((directory / HOLDER).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(document, dict) and not holder_alive(document):
            remove_tree(directory)
            removed.append(directory)
    return removed


class Meter:
    """The run's proxy (a context manager): a thread serving TCP 127.0.0.1 and a Unix socket.

    Its directory (under `directory`, default the system's temporary directory, or /tmp when
    that one is too long for a Unix socket's path) names its process, so the next meter removes
    it if a kill left it."""

    def __init__(self, allow: Iterable[str] = DEFAULT_ALLOW, *, directory: Path | None = None):
        self.allow = tuple(dict.fromkeys(a.strip() for a in allow if a.strip()))
        parent = meter_parent(directory)
        sweep_orphans(parent)
        self._directory = Path(tempfile.mkdtemp(prefix=f"{METER_PREFIX}.", dir=parent))
        write_json_atomic(self._directory / HOLDER, holder())
        self.socket_path = self._directory / SOCKET
        self.port = 0
        self._routes: dict[str, int] = {}
        self._trials: dict[str, TrialMeter] = {}
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="meter", daemon=True)
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Meter:
        self._thread.start()
        try:
            asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=60)
        except Exception as error:
            self.close()
            raise MeterError(f"the metering proxy could not start: {error}") from None
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    async def _start(self) -> None:
        self._session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=60, sock_read=900),
            auto_decompress=True,
        )
        app = web.Application(client_max_size=256 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        tcp = web.TCPSite(self._runner, "127.0.0.1", 0)
        await tcp.start()
        await web.UnixSite(self._runner, str(self.socket_path)).start()
        self.socket_path.chmod(0o666)
        ports = [a[1] for a in self._runner.addresses if isinstance(a, tuple)]
        self.port = int(ports[0])

    async def _stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    def close(self) -> None:
        if self._thread.is_alive():
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(timeout=30)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=30)
        if not self._loop.is_running():
            self._loop.close()
        remove_tree(self._directory)

    # -- trials --------------------------------------------------------------------------

    def open_trial(self) -> TrialMeter:
        """A new trial's token, routes and (empty) call log."""
        trial = TrialMeter(secrets.token_hex(16), self.origin, self._routes, self.allow)
        with self._lock:
            self._trials[trial.token] = trial
        return trial

    def close_trial(self, trial: TrialMeter) -> list[MeteredCall]:
        """End a trial: its token stops working; the calls it made."""
        with self._lock:
            self._trials.pop(trial.token, None)
            return list(trial.calls)

    # -- forwarding ----------------------------------------------------------------------

    def _target(self, raw_path: str) -> tuple[TrialMeter, str, str] | web.Response:
        parts = raw_path.split("/", 3)  # "", token, route, rest
        with self._lock:
            trial = self._trials.get(parts[1]) if len(parts) > 2 else None
        if trial is None:
            return web.json_response({"error": {"message": "unknown trial"}}, status=403)
        origins = {number: origin for origin, number in self._routes.items()}
        origin = origins.get(int(parts[2])) if parts[2].isdigit() else None
        if origin is None or origin not in trial.rewritten:
            return web.json_response({"error": {"message": "no such upstream route"}}, status=404)
        return trial, origin, "/" + (parts[3] if len(parts) > 3 else "")

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        started = time.perf_counter()
        target = self._target(request.raw_path)
        if isinstance(target, web.Response):
            return target
        trial, origin, rest = target
        headers = {k: self._swap(trial, v) for k, v in request.headers.items()}
        headers = {k: v for k, v in headers.items() if k.lower() not in _HOP}
        path = rest.split("?", 1)[0]
        body = await request.read()
        call = _Pending(trial, origin, request.method, path, api_of(path), started, body)
        assert self._session is not None
        url = URL(origin + self._swap(trial, rest), encoded=True)
        try:
            async with self._session.request(
                request.method, url, headers=headers, data=body, allow_redirects=False
            ) as upstream:
                return await self._relay(request, upstream, call)
        except (aiohttp.ClientError, TimeoutError, OSError) as error:
            call.status, call.error = 502, f"{type(error).__name__}: {error}"
            self._record(call)
            return web.json_response({"error": {"message": "upstream unreachable"}}, status=502)

    async def _relay(
        self, request: web.Request, upstream: aiohttp.ClientResponse, call: _Pending
    ) -> web.StreamResponse:
        """Pass the upstream response through as it arrives, reading its usage on the way."""
        response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
        for name, value in upstream.headers.items():
            if name.lower() not in _HOP:
                response.headers.add(name, value)
        call.status = upstream.status
        call.streamed = upstream.content_type == "text/event-stream"
        reader = call.reader = UsageReader(call.api, event_stream=call.streamed)
        try:
            await response.prepare(request)
            async for chunk in upstream.content.iter_any():
                if call.first is None:
                    call.first = time.perf_counter() - call.started
                await response.write(chunk)
                reader.feed(chunk)
        except (aiohttp.ClientError, ConnectionError, TimeoutError) as failure:
            call.error = f"the stream broke: {type(failure).__name__}: {failure}"
        finally:
            # Counted before the body's end reaches the agent: once it has the whole answer,
            # the call is in the trial's log.
            reader.close()
            self._record(call)
        with contextlib.suppress(ConnectionError):
            await response.write_eof()
        return response

    def _record(self, call: _Pending) -> None:
        reader = call.reader
        error = call.error
        if reader is not None and reader.overflow:
            error = error or "the response was too large to read its usage"
        metered = MeteredCall(
            call.api,
            call.method,
            call.origin,
            call.path,
            call.status,
            (reader.model if reader else None) or _requested_model(call.body),
            reader.tokens if reader else None,
            time.perf_counter() - call.started,
            call.first,
            call.streamed,
            error,
        )
        with self._lock:
            call.trial.calls.append(metered)

    @staticmethod
    def _swap(trial: TrialMeter, value: str) -> str:
        for credential, real in trial.credentials.items():
            if credential in value:
                value = value.replace(credential, real)
        return value


__all__ = [
    "DEFAULT_ALLOW",
    "KEY_NAME",
    "PROFILE_BASE_URLS",
    "Meter",
    "MeterError",
    "MeteredCall",
    "TrialMeter",
    "allowed",
]
