"""The app's HTTP transport (httpx over aiohttp's pool): at most `max_connections` requests at the
server at once, a timeout for a request that waits too long for one, no connection lost to a
failed or cancelled request, every failure raised as the httpx error httpcore would raise, and
aiohttp never imported by a process that sends no request."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from chatbot.valen.transport import ValenTransport
from tests.conftest import ROOT
from tests.valen_server import Received, Reply, ValenTestServer, closed_port_url, until


class Counting:
    """A responder that holds each request `hold_s` and records how many it held at once."""

    def __init__(self, hold_s: float) -> None:
        self.hold_s = hold_s
        self.now = self.most = 0
        self._lock = threading.Lock()

    def __call__(self, _received: Received, _index: int) -> Reply:
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(self.hold_s)
        with self._lock:
            self.now -= 1
        return Reply(raw=b"{}")


def client(transport: ValenTransport, *, pool_s: float | None = 5.0, read_s: float = 5.0
           ) -> httpx.AsyncClient:  # fmt: skip
    return httpx.AsyncClient(transport=transport, timeout=httpx.Timeout(read_s, pool=pool_s))


async def test_more_requests_than_connections_all_finish_and_never_exceed_them() -> None:
    counting = Counting(0.05)
    server = ValenTestServer(counting, validate=False).start()
    transport = ValenTransport(max_connections=3)
    try:
        async with client(transport) as http:
            replies = await asyncio.gather(
                *(http.post(server.base_url + "/decisions", content=b"{}") for _ in range(10))
            )
            assert [r.status_code for r in replies] == [200] * 10
        assert counting.most == 3  # They overlapped, three at a time and never four.
    finally:
        server.stop()


async def test_waiting_past_the_pool_timeout_is_a_timeout_and_loses_no_connection() -> None:
    counting = Counting(0.3)
    server = ValenTestServer(counting, validate=False).start()
    url = server.base_url + "/decisions"
    try:
        async with client(ValenTransport(max_connections=1), pool_s=0.05) as http:
            first = asyncio.create_task(http.post(url, content=b"{}"))
            await until(lambda: counting.now == 1)  # The first request holds the only one.
            with pytest.raises(httpx.TimeoutException):
                await http.post(url, content=b"{}")
            # A request cancelled while it waits gives nothing away either.
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(http.post(url, content=b"{}"), 0.02)
            assert (await first).status_code == 200
            assert (await http.post(url, content=b"{}")).status_code == 200
        assert counting.most == 1
    finally:
        server.stop()


async def test_a_refused_connection_is_a_connect_error_and_gives_its_connection_back(
    valen_server: ValenTestServer,
) -> None:
    # httpx-aiohttp 0.2 on its own calls this a ConnectTimeout: a timeout, to every caller.
    valen_server.validate = False
    async with client(ValenTransport(max_connections=1)) as http:
        for _ in range(3):
            with pytest.raises(httpx.ConnectError):
                await http.post(closed_port_url() + "/decisions", content=b"{}")
        reply = await http.post(valen_server.base_url + "/decisions", content=b"{}")
        assert reply.status_code == 200


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        pytest.param(Reply(drop=True), httpx.RemoteProtocolError, id="dropped"),
        pytest.param(Reply(delay_s=1.0), httpx.ReadTimeout, id="slow"),
        # aiohttp refuses a header line this long with an error of its own, which httpx-aiohttp
        # let through unmapped (and so past every `except httpx...` above it).
        pytest.param(
            Reply(headers={"x-padding": "a" * 20_000}),
            httpx.RemoteProtocolError,
            id="header-too-long",
        ),
    ],
)
async def test_each_failure_is_the_httpx_error_httpcore_would_raise(
    reply: Reply, error: type[httpx.TransportError], valen_server: ValenTestServer
) -> None:
    valen_server.validate = False
    valen_server.responder = lambda _r, _i: reply
    async with client(ValenTransport(max_connections=2), read_s=0.2) as http:
        with pytest.raises(httpx.TransportError) as raised:
            await http.post(valen_server.base_url + "/decisions", content=b"{}")
    assert type(raised.value) is error, repr(raised.value)


async def test_a_url_httpx_lets_through_and_aiohttp_refuses_is_an_invalid_url() -> None:
    # httpx parses port 99999 when the URL is a string; httpcore then crashed with an
    # ExceptionGroup that no `except httpx...` caught.
    async with client(ValenTransport(max_connections=1)) as http:
        with pytest.raises(httpx.InvalidURL):
            await http.post("http://127.0.0.1:99999/v1/decisions", content=b"{}")


async def test_a_body_cut_short_is_a_protocol_error_while_it_streams(
    valen_server: ValenTestServer,
) -> None:
    def cut() -> Iterator[bytes]:
        yield b'{"answers": ['
        raise ConnectionResetError  # The server closes the connection mid-body.

    valen_server.validate = False
    valen_server.responder = lambda _r, _i: Reply(chunks=cut)
    async with client(ValenTransport(max_connections=1)) as http:
        url = valen_server.base_url + "/decisions"
        async with http.stream("POST", url, content=b"{}") as response:
            assert response.status_code == 200
            with pytest.raises(httpx.RemoteProtocolError):
                async for _ in response.aiter_raw():
                    pass


async def test_credentials_in_the_url_are_sent_as_basic_auth_only(
    valen_server: ValenTestServer,
) -> None:
    valen_server.validate = False
    valen_server.responder = lambda _r, _i: Reply(raw=b"{}")
    url = valen_server.base_url.replace("http://", "http://valen-user:hunter2@") + "/decisions"
    async with client(ValenTransport(max_connections=1)) as http:
        reply = await http.post(url, content=b"{}")
    assert reply.status_code == 200
    sent = valen_server.received[0]
    assert sent.headers["authorization"] == "Basic dmFsZW4tdXNlcjpodW50ZXIy"
    assert "hunter2" not in str(reply.request.url)


def test_replay_mode_never_imports_aiohttp(cache_copy: Path) -> None:
    # Replay mode sends no request, so it must not pay for importing aiohttp (~110 ms).
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "chatbot", "ask", "--cache", str(cache_copy),
         "I was charged twice for the same ride, can I get my money back?"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Answer from card-charged-twice"), result.stdout
    imported = [line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()]
    assert "chatbot.valen.judge" in imported  # The measurement works...
    # ... and replaying made no HTTP client at all, let alone started aiohttp's pool.
    assert not [name for name in imported if name.startswith(("aiohttp", "httpx_aiohttp"))]


async def test_a_live_request_starts_the_transport(valen_server: ValenTestServer) -> None:
    valen_server.validate = False
    valen_server.responder = lambda _r, _i: Reply(raw=b"{}")
    transport = ValenTransport(max_connections=1)
    async with client(transport) as http:
        assert not transport.started
        assert (await http.post(valen_server.base_url + "/decisions")).status_code == 200
        assert transport.started


def test_every_transport_of_a_process_verifies_with_one_shared_context(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Loading the CA bundle costs ~20 ms of CPU: made once, not per client, and made again only
    for another SSL_CERT_FILE (read as httpx reads it)."""
    import ssl

    import certifi

    from chatbot.valen import _aiohttp

    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    first = _aiohttp.make_transport(max_connections=1, keepalive_expiry=1.0, verify=True)
    second = _aiohttp.make_transport(max_connections=2, keepalive_expiry=1.0, verify=True)
    assert first.ssl_context is second.ssl_context
    assert first.ssl_context.verify_mode is ssl.CERT_REQUIRED
    assert first.ssl_context.check_hostname

    bundle = tmp_path / "ca.pem"
    bundle.write_bytes(Path(certifi.where()).read_bytes())
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    other = _aiohttp.make_transport(max_connections=1, keepalive_expiry=1.0, verify=True)
    assert other.ssl_context is not first.ssl_context
    assert other.ssl_context.verify_mode is ssl.CERT_REQUIRED

    unverified = _aiohttp.make_transport(max_connections=1, keepalive_expiry=1.0, verify=False)
    assert unverified.ssl_context.verify_mode is ssl.CERT_NONE
