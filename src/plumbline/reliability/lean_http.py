"""A lean HTTP/1.1 transport for the probe's direct provider calls.

A probe trial is one small JSON request and one small JSON answer; on 2 cores at concurrency
256 the client's share of a trial was 2.3 ms, more than half of it in the general HTTP stack
below the SDK (httpcore's connection pool scan, h11's event machine, anyio's stream wrappers).
`LeanTransport` is an `httpx2` transport that does what that stack does for such a request with
asyncio's protocol callbacks: a keep-alive pool per event loop, the same connect retries,
socket options, TLS context and limits as the transport it stands in for, and the same `httpx2`
exceptions for every failure (connect, timeout, reset, early close, bad answer), so the SDK
above raises, and the records show, exactly what they show on the standard transport. A
request it does not cover (a streamed body, a scheme other than http/https) is passed to that
transport unchanged.

`install_lean_transport(http_client, url)` puts one in place of Inspect's per-loop transport
when no proxy applies. Above it, `PreparedPost` sends the request the openai SDK builds for a
chat completion (its URL, headers and timeouts, built once per client by the SDK itself, with
each trial's body encoded as the SDK encodes it) and turns failures into the SDK's exceptions
as `AsyncAPIClient.request` does, without the per-request option copies and header merging
that were a further fifth of a trial. The identity test of the call paths
(`tests/reliability/test_direct_call.py`) compares the requests the server received and the
records of every kind of failure on this path and on the standard ones.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import ssl
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import httpx2

#: Longest response head (status line and headers) accepted, as h11's default.
MAX_HEAD = 64 * 1024
_DEFAULT_PORTS = {b"http": 80, b"https": 443}
_NO_BODY_STATUS = (204, 304)
_HEX = re.compile(rb"[0-9A-Fa-f]+")

_Key = tuple[bytes, str, int]


def _connect_delays(factor: float = 0.5) -> Iterator[float]:
    """httpcore's waits before each connect retry: 0, then factor * 2**n."""
    yield 0.0
    for n in itertools.count():
        yield factor * 2**n


class _Connection(asyncio.Protocol):
    """One keep-alive connection: bytes in a buffer, a waiter woken by each arrival."""

    def __init__(self, loop: asyncio.AbstractEventLoop, key: _Key) -> None:
        self.loop = loop
        self.key = key
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.eof = False
        self.lost: BaseException | None = None
        self.idle_since = 0.0
        self._waiter: asyncio.Future[None] | None = None

    # asyncio callbacks
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self._wake()

    def eof_received(self) -> bool | None:
        self.eof = True
        self._wake()
        return None  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.lost = exc
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # use
    @property
    def usable(self) -> bool:
        return not self.eof and not self.buffer and self.transport is not None

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
        self.eof = True

    def send(self, data: bytes) -> None:
        assert self.transport is not None
        self.transport.write(data)

    async def _more(self, timeout: float | None, request: httpx2.Request) -> None:
        """Wait for more bytes; the end of the connection raises as httpcore raises it."""
        if self.eof:
            raise self._ended(request)
        waiter = self.loop.create_future()
        self._waiter = waiter
        timer = None
        if timeout is not None:
            timer = self.loop.call_later(timeout, _expire, waiter)
        try:
            await waiter
        except TimeoutError:
            raise httpx2.ReadTimeout("timed out", request=request) from None
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()

    def _ended(self, request: httpx2.Request) -> httpx2.TransportError:
        if self.lost is not None:
            return httpx2.ReadError(str(self.lost), request=request)
        if self.buffer:
            return httpx2.RemoteProtocolError(
                "peer closed connection without sending complete message body", request=request
            )
        return httpx2.RemoteProtocolError(
            "Server disconnected without sending a response.", request=request
        )

    async def _take(self, size: int, timeout: float | None, request: httpx2.Request) -> bytes:
        while len(self.buffer) < size:
            if self.eof and self.lost is not None:
                raise httpx2.ReadError(str(self.lost), request=request)
            if self.eof:
                raise httpx2.RemoteProtocolError(
                    "peer closed connection without sending complete message body: "
                    f"received {len(self.buffer)} bytes, expected {size}",
                    request=request,
                )
            await self._more(timeout, request)
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    async def _line(self, timeout: float | None, request: httpx2.Request) -> bytes:
        while (end := self.buffer.find(b"\r\n")) < 0:
            if len(self.buffer) > MAX_HEAD:
                raise httpx2.RemoteProtocolError("line too long", request=request)
            await self._more(timeout, request)
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 2]
        return line

    async def read_response(
        self, method: bytes, timeout: float | None, request: httpx2.Request
    ) -> tuple[int, bytes, list[tuple[bytes, bytes]], bytes, bool]:
        """Status, reason, headers, body and whether the connection can be reused."""
        while True:
            status, reason, version, headers = await self._head(timeout, request)
            if not 100 <= status < 200 or status == 101:
                break  # an informational answer (100 Continue) precedes the real one
        fields = {name: value for name, value in headers}
        connection = fields.get(b"connection", b"").lower()
        reusable = (version == b"HTTP/1.1" and b"close" not in connection) or (
            version == b"HTTP/1.0" and b"keep-alive" in connection
        )
        if method == b"HEAD" or status in _NO_BODY_STATUS or 100 <= status < 200:
            body = b""
        elif b"chunked" in fields.get(b"transfer-encoding", b"").lower():
            body = await self._chunked(timeout, request)
        elif (length := fields.get(b"content-length")) is not None:
            if not length.isdigit():
                raise httpx2.RemoteProtocolError("bad Content-Length", request=request)
            body = await self._take(int(length), timeout, request)
        else:  # the body runs to the end of the connection
            while not self.eof:
                await self._more(timeout, request)
            if self.lost is not None:
                raise httpx2.ReadError(str(self.lost), request=request)
            body, reusable = bytes(self.buffer), False
            self.buffer.clear()
        return status, reason, headers, body, reusable and not self.buffer

    async def _head(
        self, timeout: float | None, request: httpx2.Request
    ) -> tuple[int, bytes, bytes, list[tuple[bytes, bytes]]]:
        while (end := self.buffer.find(b"\r\n\r\n")) < 0:
            if len(self.buffer) > MAX_HEAD:
                raise httpx2.RemoteProtocolError("response head too long", request=request)
            await self._more(timeout, request)
        lines = bytes(self.buffer[:end]).split(b"\r\n")
        del self.buffer[: end + 4]
        version, _, rest = lines[0].partition(b" ")
        code, _, reason = rest.partition(b" ")
        if not version.startswith(b"HTTP/1.") or len(code) != 3 or not code.isdigit():
            raise httpx2.RemoteProtocolError("illegal status line", request=request)
        headers = []
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon or not name or name != name.strip():
                raise httpx2.RemoteProtocolError("illegal header line", request=request)
            headers.append((name.lower(), value.strip(b" \t")))
        return int(code), reason, version, headers

    async def _chunked(self, timeout: float | None, request: httpx2.Request) -> bytes:
        body = bytearray()
        while True:
            size_field = (await self._line(timeout, request)).split(b";", 1)[0].strip()
            if not _HEX.fullmatch(size_field):
                raise httpx2.RemoteProtocolError("bad chunk size", request=request)
            size = int(size_field, 16)
            if size == 0:
                trailer = await self._line(timeout, request)
                while trailer:  # trailers are read and dropped, up to the empty line
                    trailer = await self._line(timeout, request)
                return bytes(body)
            chunk = await self._take(size + 2, timeout, request)
            if chunk[-2:] != b"\r\n":
                raise httpx2.RemoteProtocolError("bad chunk end", request=request)
            body += chunk[:-2]


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError())


class _Pool:
    """The keep-alive connections of one event loop, at most `max_connections` in all."""

    def __init__(self, transport: LeanTransport, loop: asyncio.AbstractEventLoop) -> None:
        self.transport = transport
        self.loop = loop
        self.idle: dict[_Key, list[_Connection]] = {}
        self.count = 0
        self.waiters: deque[asyncio.Future[None]] = deque()
        self.closed = False

    async def acquire(self, key: _Key, timeouts: dict[str, Any]) -> _Connection:
        expiry = self.transport.keepalive_expiry
        while True:
            idle = self.idle.get(key)
            while idle:
                connection = idle.pop()
                if connection.usable and (
                    expiry is None or time.monotonic() - connection.idle_since < expiry
                ):
                    return connection
                self._drop(connection)
            limit = self.transport.max_connections
            if limit is None or self.count < limit:
                self.count += 1
                try:
                    return await self.transport.connect(self.loop, key, timeouts)
                except BaseException:
                    self.count -= 1
                    self._notify()
                    raise
            if self._drop_an_idle_connection():
                continue
            waiter = self.loop.create_future()
            self.waiters.append(waiter)
            woken = False
            try:
                async with asyncio.timeout(timeouts.get("pool")):
                    await waiter
                woken = True
            except TimeoutError:
                raise httpx2.PoolTimeout("no connection became free in time") from None
            finally:
                if waiter in self.waiters:
                    self.waiters.remove(waiter)
                elif not woken:
                    self._notify()  # a wake-up this request can no longer use goes on

    def release(self, connection: _Connection, reusable: bool) -> None:
        if reusable and connection.usable and not self.closed:
            keep = self.transport.max_keepalive_connections
            if keep is None or sum(map(len, self.idle.values())) < keep:
                connection.idle_since = time.monotonic()
                self.idle.setdefault(connection.key, []).append(connection)
                self._notify()
                return
        self._drop(connection)

    def _drop(self, connection: _Connection) -> None:
        connection.close()
        self.count -= 1
        self._notify()

    def _drop_an_idle_connection(self) -> bool:
        for connections in self.idle.values():
            if connections:
                self._drop(connections.pop(0))
                return True
        return False

    def _notify(self) -> None:
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def close(self) -> None:
        """Close the idle connections; those in use are closed when they come back."""
        self.closed = True
        for connections in self.idle.values():
            for connection in connections:
                connection.close()
        self.idle.clear()


class LeanTransport(httpx2.AsyncBaseTransport):
    """HTTP/1.1 over asyncio protocols, standing in for `fallback` (see the module docstring)."""

    def __init__(
        self,
        fallback: httpx2.AsyncBaseTransport,
        *,
        ssl_context: ssl.SSLContext,
        max_connections: int | None,
        max_keepalive_connections: int | None,
        keepalive_expiry: float | None,
        connect_retries: int,
        socket_options: Iterable[tuple[Any, ...]] = (),
    ) -> None:
        self.fallback = fallback
        self.ssl_context = ssl_context
        self.max_connections = max_connections
        self.max_keepalive_connections = max_keepalive_connections
        self.keepalive_expiry = keepalive_expiry
        self.connect_retries = connect_retries
        self.socket_options = list(socket_options)
        self._pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Pool] = (
            weakref.WeakKeyDictionary()
        )

    def _pool(self) -> _Pool:
        loop = asyncio.get_running_loop()
        pool = self._pools.get(loop)
        if pool is None:
            # pools of closed loops are dropped, not closed (closing is what fails there): the
            # sockets' finalizers close them (a pool holds its loop, so the weak key alone
            # would keep them)
            for other in [other for other in self._pools if other.is_closed()]:
                del self._pools[other]
            pool = self._pools[loop] = _Pool(self, loop)
        return pool

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        scheme = url.raw_scheme
        try:
            content = request.content
        except httpx2.RequestNotRead:
            content = None
        if (
            scheme not in _DEFAULT_PORTS
            or content is None
            or "transfer-encoding" in request.headers
            or request.extensions.get("sni_hostname") is not None
        ):
            return await self.fallback.handle_async_request(request)
        key = (scheme, url.host, url.port or _DEFAULT_PORTS[scheme])
        timeouts: dict[str, Any] = request.extensions.get("timeout", {})
        method = request.method.encode()
        lines = [method, b" ", url.raw_path, b" HTTP/1.1\r\n"]
        for name, value in request.headers.raw:
            lines += (name, b": ", value, b"\r\n")
        lines += (b"\r\n", content)
        pool = self._pool()
        connection = await pool.acquire(key, timeouts)
        done = False
        try:
            connection.send(b"".join(lines))
            status, reason, headers, body, reusable = await connection.read_response(
                method, timeouts.get("read"), request
            )
            done = True
        finally:
            pool.release(connection, reusable=done and reusable)
        return httpx2.Response(
            status,
            headers=headers,
            stream=httpx2.ByteStream(body),
            request=request,
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": reason},
        )

    async def connect(
        self,
        loop: asyncio.AbstractEventLoop,
        key: _Key,
        timeouts: dict[str, Any],
    ) -> _Connection:
        """A new connection, with httpcore's connect retries and error mapping."""
        delays = _connect_delays()
        for attempt in range(self.connect_retries + 1):
            if attempt:
                await asyncio.sleep(next(delays))
            try:
                return await self._open(loop, key, timeouts.get("connect"))
            except (httpx2.ConnectError, httpx2.ConnectTimeout):
                if attempt == self.connect_retries:
                    raise
        raise AssertionError("unreachable")

    async def _open(
        self,
        loop: asyncio.AbstractEventLoop,
        key: _Key,
        timeout: float | None,
    ) -> _Connection:
        scheme, host, port = key
        try:
            async with asyncio.timeout(timeout):
                transport, connection = await loop.create_connection(
                    _protocol_factory(loop, key), host, port
                )
        except TimeoutError:
            raise httpx2.ConnectTimeout("timed out") from None
        except OSError as error:
            raise httpx2.ConnectError(str(error)) from None
        # as httpcore: socket options once connected, then TLS under a timeout of its own
        try:
            sock = transport.get_extra_info("socket")
            if sock is not None:
                for option in self.socket_options:
                    sock.setsockopt(*option)
            if scheme == b"https":
                async with asyncio.timeout(timeout):
                    secured = await loop.start_tls(
                        transport, connection, self.ssl_context, server_hostname=host
                    )
                assert isinstance(secured, asyncio.Transport)
                connection.transport = secured
        except BaseException as error:
            transport.close()
            if isinstance(error, TimeoutError):
                raise httpx2.ConnectTimeout("timed out") from None
            if isinstance(error, OSError):  # ssl.SSLError included
                raise httpx2.ConnectError(str(error)) from None
            raise
        return connection

    async def aclose(self) -> None:
        with_loop = self._pools.pop(asyncio.get_running_loop(), None)
        self._pools.clear()
        if with_loop is not None:
            with_loop.close()
        await self.fallback.aclose()


def _protocol_factory(loop: asyncio.AbstractEventLoop, key: _Key) -> Callable[[], _Connection]:
    return lambda: _Connection(loop, key)


def install_lean_transport(http_client: Any, url: str) -> bool:
    """Put a `LeanTransport` in place of Inspect's transport of `http_client` for `url`.

    Only where it stands in exactly: the client's transport is Inspect's per-loop
    `LoopScopedTransport` over HTTP/1.1 (no HTTP/2, no local address, no Unix socket) and no
    proxy is mounted for `url`. Returns whether it was installed.
    """
    from inspect_ai._util.http_defaults_httpx2 import LoopScopedTransport

    if not isinstance(http_client, httpx2.AsyncClient):
        return False
    current = http_client._transport
    if type(current) is not LoopScopedTransport:
        return False
    if http_client._transport_for_url(httpx2.URL(url)) is not current:
        return False  # a proxy applies
    kwargs = dict(current._kwargs)
    if kwargs.get("http2") or kwargs.get("uds") or kwargs.get("local_address"):
        return False
    if kwargs.get("proxy") is not None or kwargs.get("http1", True) is not True:
        return False
    limits: httpx2.Limits = kwargs.get("limits") or httpx2.Limits()
    context = httpx2.create_ssl_context(
        verify=kwargs.get("verify", True),
        cert=kwargs.get("cert"),
        trust_env=kwargs.get("trust_env", True),
    )
    http_client._transport = LeanTransport(
        current,
        ssl_context=context,
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        connect_retries=int(kwargs.get("retries", 0)),
        socket_options=kwargs.get("socket_options") or (),
    )
    return True


class PreparedPost:
    """The openai SDK's POST to `path`, built once by the SDK and sent with a new JSON body.

    For a client with a plain API key only (no key provider, workload identity, provider
    runtime or custom auth, which change a request per call); `of` returns None otherwise.
    The request is built on the first call (in the event loop, where the SDK builds it) and
    again when the client's API key changes.
    """

    def __init__(self, client: Any, path: str) -> None:
        from openai._base_client import make_request_options
        from openai._utils._json import openapi_dumps

        self.client = client
        self.path = path
        self.options = make_request_options(security={"bearer_auth": True})
        self.dumps: Callable[[Any], bytes] = openapi_dumps
        self.api_key: str | None = None
        self.headers: list[tuple[bytes, bytes]] | None = None

    @classmethod
    def of(cls, client: Any, path: str) -> PreparedPost | None:
        plain = (
            getattr(client, "_provider_runtime", None) is None
            and getattr(client, "_workload_identity_auth", None) is None
            and getattr(client, "_api_key_provider", None) is None
            and getattr(client, "custom_auth", None) is None
            and isinstance(getattr(client, "_client", None), httpx2.AsyncClient)
        )
        return cls(client, path) if plain else None

    async def _build(self) -> None:
        # in the event loop, as the SDK builds it: some headers name the async library
        from openai._base_client import get_platform
        from openai._models import FinalRequestOptions
        from openai._utils import asyncify

        if self.client._platform is None:
            self.client._platform = await asyncify(get_platform)()
        if self.headers is not None and self.client.api_key == self.api_key:
            return  # built by a call that ran while this one waited
        options = FinalRequestOptions.construct(
            method="post", url=self.path, json_data={}, **self.options
        )
        template = self.client._build_request(options, retries_taken=0)
        self.api_key = self.client.api_key
        self.url = template.url
        self.headers = [(k, v) for k, v in template.headers.raw if k.lower() != b"content-length"]
        self.extensions = template.extensions

    async def send(self, body: dict[str, Any]) -> httpx2.Response:
        """The answer to `body` (a 2xx), or the SDK's exception for a failure."""
        from openai import APIConnectionError, APITimeoutError, OpenAIError
        from openai._httpx2 import request_exceptions, status_exceptions, timeout_exceptions

        if self.headers is None or self.client.api_key != self.api_key:
            await self._build()
        request = httpx2.Request(
            "POST",
            self.url,
            headers=self.headers,
            content=self.dumps(body),
            # a copy per request, as the SDK builds it: request hooks may change the timeouts
            extensions={
                k: dict(v) if isinstance(v, dict) else v for k, v in self.extensions.items()
            },
        )
        try:
            response: httpx2.Response = await self.client._send_request(request, stream=False)
        except timeout_exceptions() as error:
            raise APITimeoutError(request=request) from error
        except OpenAIError:
            raise
        except request_exceptions() as error:
            raise APIConnectionError(request=request) from error
        try:
            response.raise_for_status()
        except status_exceptions() as error:
            if not error.response.is_closed:
                await error.response.aread()
            raise self.client._make_status_error_from_response(error.response) from None
        return response
