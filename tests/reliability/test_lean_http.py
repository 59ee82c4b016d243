"""The lean HTTP/1.1 transport answers, and fails, as the transport it stands in for.

Every case is sent through two clients in the same run, one on Inspect's standard transport
(httpx2 over httpcore) and one on `LeanTransport` installed in its place, to a raw asyncio server
that answers each case with scripted bytes (every body framing, informational answers, early
closes, resets, hangs, garbage); the answers (status, headers, body) or the exception classes
must be the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import gzip
import json
import socket
import ssl
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from inspect_ai._util.http_defaults_httpx2 import default_client_kwargs

from plumbline.reliability.lean_http import LeanTransport, install_lean_transport

_BODY = json.dumps({"choices": [{"message": {"content": "hi"}}]}).encode()


def _answer(status: str, headers: list[str], body: bytes) -> bytes:
    head = "".join(f"{line}\r\n" for line in [f"HTTP/1.1 {status}", *headers])
    return head.encode() + b"\r\n" + body


_CHUNKED = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    + b"5;ext=1\r\n"
    + _BODY[:5]
    + b"\r\n"
    + f"{len(_BODY) - 5:x}\r\n".encode()
    + _BODY[5:]
    + b"\r\n0\r\nX-Trailer: t\r\n\r\n"
)

# case -> (bytes the server writes, what it does next: keep | close | reset | hang)
CASES: dict[str, tuple[bytes, str]] = {
    "length": (
        _answer(
            "200 OK", ["Content-Type: application/json", f"Content-Length: {len(_BODY)}"], _BODY
        ),
        "keep",
    ),
    "chunked": (_CHUNKED, "keep"),
    "to the end": (
        _answer("200 OK", ["Content-Type: application/json", "Connection: close"], _BODY),
        "close",
    ),
    "http/1.0": (b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + _BODY, "close"),
    "no content": (_answer("204 No Content", [], b""), "keep"),
    "continue first": (
        b"HTTP/1.1 100 Continue\r\n\r\n"
        + _answer("200 OK", [f"Content-Length: {len(_BODY)}"], _BODY),
        "keep",
    ),
    "gzip": (
        _answer(
            "200 OK",
            ["Content-Encoding: gzip", f"Content-Length: {len(gzip.compress(_BODY, mtime=0))}"],
            gzip.compress(_BODY, mtime=0),
        ),
        "keep",
    ),
    "error status": (
        _answer("429 Too Many Requests", ["Retry-After: 1", "Content-Length: 7"], b"slow up"),
        "keep",
    ),
    "repeated header": (
        _answer(
            "200 OK",
            ["Set-Cookie: a=1", "Set-Cookie: b=2", "X-Odd:  spaced value\t", "Content-Length: 2"],
            b"ok",
        ),
        "keep",
    ),
    "close without answer": (b"", "close"),
    "partial head": (b"HTTP/1.1 200 OK\r\nContent-Le", "close"),
    "partial body": (_answer("200 OK", ["Content-Length: 100"], b"0123456789"), "close"),
    "partial chunk": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123", "close"),
    "reset": (b"", "reset"),
    "reset in the body": (_answer("200 OK", ["Content-Length: 100"], b"0123456789"), "reset"),
    "hang": (b"", "hang"),
    "hang in the body": (_answer("200 OK", ["Content-Length: 100"], b"0123456789"), "hang"),
    "not http": (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "close"),
    "bad status": (b"HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n", "close"),
    "negative length": (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nabc", "close"),
    "signed chunk size": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+2\r\nok\r\n0\r\n\r\n",
        "close",
    ),
}


class ScriptedServer:
    """Answers each request with the bytes of the case named by its path (`/case/<name>`)."""

    def __init__(self) -> None:
        self.connections = 0
        self.open_now = 0
        self.most_open = 0
        self.close_idle_after: float | None = None
        self._server: asyncio.Server | None = None
        self.ssl: ssl.SSLContext | None = None

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.ssl)
        port = self._server.sockets[0].getsockname()[1]
        return f"{'https' if self.ssl else 'http'}://127.0.0.1:{port}"

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 1)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.open_now += 1
        self.most_open = max(self.most_open, self.open_now)
        try:
            while True:
                try:
                    head = await asyncio.wait_for(
                        reader.readuntil(b"\r\n\r\n"), self.close_idle_after
                    )
                except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                length = next(
                    (
                        int(h.split(":", 1)[1])
                        for h in lines
                        if h.lower().startswith("content-length")
                    ),
                    0,
                )
                await reader.readexactly(length)
                name = lines[0].split(" ")[1].split("/case/", 1)[1].replace("%20", " ")
                if name.startswith("slow "):
                    await asyncio.sleep(0.2)
                    name = name[5:]
                data, then = CASES[name]
                writer.write(data)
                await writer.drain()
                if then == "reset":
                    sock = writer.get_extra_info("socket")
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    writer.transport.abort()
                    return
                if then == "hang":
                    with contextlib.suppress(asyncio.CancelledError):
                        await asyncio.sleep(30)
                    return
                if then != "keep":
                    return
        finally:
            self.open_now -= 1
            writer.close()


def _clients(**kwargs: Any) -> tuple[httpx2.AsyncClient, httpx2.AsyncClient]:
    standard = httpx2.AsyncClient(**default_client_kwargs(**kwargs))
    lean = httpx2.AsyncClient(**default_client_kwargs(**kwargs))
    assert install_lean_transport(lean, "http://127.0.0.1/")
    assert isinstance(lean._transport, LeanTransport)
    return standard, lean


async def _outcome(client: httpx2.AsyncClient, url: str, **kwargs: Any) -> Any:
    try:
        response = await client.post(url, content=b'{"q": 1}', **kwargs)
    except httpx2.HTTPError as error:
        # a reset may reach the reader as a reset or as an end of stream, on either transport
        if isinstance(error, (httpx2.ReadError, httpx2.RemoteProtocolError)):
            return "connection ended"
        return type(error).__name__
    return (response.status_code, response.headers.multi_items(), response.content)


def run(coroutine: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(coroutine())  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def serving(server: ScriptedServer) -> AsyncIterator[str]:
    url = await server.start()
    try:
        yield url
    finally:
        await server.stop()


def test_every_answer_and_failure_is_the_standard_transports() -> None:
    async def main() -> dict[str, tuple[Any, Any]]:
        server = ScriptedServer()
        standard, lean = _clients(timeout=httpx2.Timeout(2.0, read=0.3))
        outcomes = {}
        async with serving(server) as url, standard, lean:
            for name in CASES:
                outcomes[name] = (
                    await _outcome(standard, f"{url}/case/{name}"),
                    await _outcome(lean, f"{url}/case/{name}"),
                )
        return outcomes

    outcomes = run(main)
    for name, (expected, got) in outcomes.items():
        assert got == expected, name
    # the cases cover answers of every framing and every kind of failure
    assert outcomes["chunked"][1][2] == outcomes["length"][1][2] == _BODY
    assert outcomes["gzip"][1][2] == _BODY
    assert outcomes["hang"][1] == outcomes["hang in the body"][1] == "ReadTimeout"
    assert outcomes["close without answer"][1] == "connection ended"
    assert outcomes["reset"][1] == outcomes["reset in the body"][1] == "connection ended"


def test_a_refused_connection_is_a_connect_error_on_both() -> None:
    async def main() -> tuple[Any, Any]:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        standard, lean = _clients()
        async with standard, lean:
            return (
                await _outcome(standard, f"http://127.0.0.1:{port}/"),
                await _outcome(lean, f"http://127.0.0.1:{port}/"),
            )

    standard, lean = run(main)
    assert standard == lean == "ConnectError"


def test_connections_are_kept_alive_reused_and_replaced_when_the_server_drops_them() -> None:
    async def main() -> list[tuple[int, Any]]:
        counts = []
        for client in _clients():
            server = ScriptedServer()
            async with serving(server) as url, client:
                # three in a row on one connection; the server then closes it while idle
                answers = [await _outcome(client, f"{url}/case/length") for _ in range(3)]
                server.close_idle_after = 0.05
                answers.append(await _outcome(client, f"{url}/case/length"))
                await asyncio.sleep(0.3)
                answers.append(await _outcome(client, f"{url}/case/length"))
                # an answer that ends its connection is not reused either
                answers.append(await _outcome(client, f"{url}/case/to the end"))
                answers.append(await _outcome(client, f"{url}/case/length"))
            assert all(answer[0] == 200 for answer in answers)
            counts.append((server.connections, [a[2] for a in answers]))
        return counts

    (standard, standard_bodies), (lean, lean_bodies) = run(main)
    assert lean == standard == 3
    assert lean_bodies == standard_bodies


def test_the_pool_keeps_to_its_limit_and_times_out_as_the_standard_one() -> None:
    async def main() -> list[tuple[int, list[Any]]]:
        results = []
        limits = httpx2.Limits(max_connections=2, max_keepalive_connections=2)
        for client in _clients(limits=limits, timeout=5.0):
            server = ScriptedServer()
            async with serving(server) as url, client:
                # six slow answers share two connections
                answers = await asyncio.gather(
                    *(_outcome(client, f"{url}/case/slow length") for _ in range(6))
                )
                most_open = server.most_open
                # two hanging calls hold both connections: the third waits, then gives up
                hanging = [
                    asyncio.create_task(_outcome(client, f"{url}/case/hang", timeout=2.0))
                    for _ in range(2)
                ]
                await asyncio.sleep(0.1)
                pool_wait = httpx2.Timeout(5.0, pool=0.3)
                answers.append(await _outcome(client, f"{url}/case/length", timeout=pool_wait))
                for task in hanging:
                    task.cancel()
                await asyncio.gather(*hanging, return_exceptions=True)
                # cancelled calls gave their connections back
                answers.append((await _outcome(client, f"{url}/case/length"))[0])
            results.append((most_open, [a if isinstance(a, (str, int)) else a[0] for a in answers]))
        return results

    (standard_open, standard), (lean_open, lean) = run(main)
    assert lean == standard == [200] * 6 + ["PoolTimeout", 200]
    assert lean_open <= 2 and standard_open <= 2


def test_a_streamed_request_body_goes_to_the_standard_transport() -> None:
    async def body() -> AsyncIterator[bytes]:
        yield b'{"q":'
        yield b" 1}"

    async def main() -> Any:
        server = ScriptedServer()
        _, lean = _clients()
        async with serving(server) as url, lean:
            response = await lean.post(f"{url}/case/length", content=body())
            return response.status_code, response.content

    assert run(main) == (200, _BODY)


def _certificate(directory: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(__import__("ipaddress").ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def test_tls_is_verified_with_the_clients_own_context(tmp_path: Path) -> None:
    cert, key = _certificate(tmp_path)
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert, key)
    trusting = ssl.create_default_context(cafile=str(cert))

    async def main() -> list[Any]:
        server = ScriptedServer()
        server.ssl = server_context
        outcomes = []
        async with serving(server) as url:
            for verify in (trusting, True):
                for client in _clients(verify=verify):
                    async with client:
                        outcome = await _outcome(client, f"{url}/case/length")
                    outcomes.append(outcome if isinstance(outcome, str) else outcome[2])
        return outcomes

    standard_trusting, lean_trusting, standard_default, lean_default = run(main)
    assert standard_trusting == lean_trusting == _BODY
    # a certificate the client does not trust fails to connect, on both
    assert standard_default == lean_default == "ConnectError"


def test_a_proxy_keeps_the_standard_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    client = httpx2.AsyncClient(**default_client_kwargs())
    assert not install_lean_transport(client, "http://api.example.com/v1")
    assert not isinstance(client._transport, LeanTransport)


def test_connect_retries_wait_as_httpcores() -> None:
    from httpcore2._async.connection import RETRIES_BACKOFF_FACTOR, exponential_backoff

    from plumbline.reliability.lean_http import _connect_delays

    ours = _connect_delays(RETRIES_BACKOFF_FACTOR)
    theirs = exponential_backoff(RETRIES_BACKOFF_FACTOR)
    assert [next(ours) for _ in range(5)] == [next(theirs) for _ in range(5)]


def test_a_client_used_by_several_event_loops_keeps_only_the_live_loops_pool() -> None:
    _, lean = _clients()
    transport = lean._transport
    assert isinstance(transport, LeanTransport)

    async def one_call() -> Any:
        server = ScriptedServer()
        async with serving(server) as url:
            return (await _outcome(lean, f"{url}/case/length"))[0]

    assert [asyncio.run(one_call()) for _ in range(3)] == [200, 200, 200]
    # each run's pool is dropped when the next loop starts: one left, the last one's
    assert len(transport._pools) == 1
