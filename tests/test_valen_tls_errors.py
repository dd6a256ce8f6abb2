"""A TLS failure is said as one, and not retried: an `https://` Valen whose certificate is not
trusted (self-signed here, as a private CA's would be), and `https://` pointed at a server that
speaks plain HTTP.

Both used to read "connection: cannot reach URL: ConnectError (is the server running, and is
--base-url right?)", and `helpdesk ask` tried each passage 4 times, though the server was running
and the same handshake can only fail again.
"""

from __future__ import annotations

import shutil
import ssl
import subprocess
from collections.abc import Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from chatbot.config import load_settings
from chatbot.valen.client import RetryPolicy, ValenClient
from chatbot.valen.errors import TLSError
from chatbot.valen.protocol import PREDICATE, Question
from tests.cli_run import run_cli
from tests.valen_faults import QUESTION
from tests.valen_server import FakeClock, ValenTestServer, constant


@dataclass(frozen=True)
class Certificate:
    cert: Path
    key: Path


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> Certificate:
    """A self-signed certificate for 127.0.0.1, made by the openssl command."""
    openssl = shutil.which("openssl")
    assert openssl is not None, "the openssl command makes the test's certificate: install it"
    folder = tmp_path_factory.mktemp("tls")
    made = Certificate(folder / "cert.pem", folder / "key.pem")
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1", "-addext",
         "subjectAltName=IP:127.0.0.1", "-keyout", str(made.key), "-out", str(made.cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return made


class Listener:
    """A `ValenTestServer` whose accepted connections are counted, and served over TLS when given
    a certificate: a handshake the client refuses is dropped, as a real server drops it."""

    def __init__(self, certificate: Certificate | None) -> None:
        self.server = ValenTestServer(constant(0.9))
        self.connections = 0
        context: ssl.SSLContext | None = None
        if certificate is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(certificate.cert, certificate.key)
        http = self.server._http
        accept = http.get_request

        def get_request() -> tuple[Any, Any]:
            connection, address = accept()
            self.connections += 1
            if context is None:
                return connection, address
            # The handshake, here: an SSLError (an OSError) drops the connection.
            return context.wrap_socket(connection, server_side=True), address

        http.get_request = get_request  # type: ignore[method-assign]

    @property
    def https_url(self) -> str:
        return self.server.base_url.replace("http://", "https://", 1)


@pytest.fixture
def tls_valen(certificate: Certificate) -> Iterator[Listener]:
    listener = Listener(certificate)
    listener.server.start()
    yield listener
    listener.server.stop()


@pytest.fixture
def plain_valen() -> Iterator[Listener]:
    listener = Listener(None)
    listener.server.start()
    yield listener
    listener.server.stop()


@pytest.fixture(autouse=True)
def no_private_ca(monkeypatch: pytest.MonkeyPatch) -> None:
    """The certificates trusted are the bundle's, whatever the developer's shell says."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


@asynccontextmanager
async def http_client(kind: str) -> Any:
    """The app's HTTP client (aiohttp's pool under httpx), or httpx's own."""
    if kind == "app":
        from chatbot.assembly import make_http_client

        async with make_http_client(load_settings()) as http:
            yield http
    else:
        async with httpx.AsyncClient() as http:
            yield http


UNTRUSTED = "the server's certificate is not trusted (self"  # "self-signed certificate"
PRIVATE_CA = "if a private CA signed it, set SSL_CERT_FILE to a file holding that CA's certificate"
NOT_TLS = "the server at that address does not speak TLS ("
USE_HTTP = "if it serves plain HTTP, use an http:// base URL"
MISLEADING = ("cannot reach", "is the server running", "ConnectError")


@pytest.mark.parametrize("transport", ["app", "httpx"])
async def test_an_untrusted_certificate_is_said_and_not_retried(
    transport: str, tls_valen: Listener
) -> None:
    async with http_client(transport) as http:
        client = ValenClient(http, base_url=tls_valen.https_url, retry=RetryPolicy(),
                             clock=FakeClock())  # fmt: skip
        with pytest.raises(TLSError) as caught:
            await client.decide("t", [Question("answers", PREDICATE)])
    error = caught.value
    said = error.describe()
    assert said.startswith(f"tls: the TLS handshake with {tls_valen.https_url}/decisions failed: ")
    assert UNTRUSTED in said and PRIVATE_CA in said, said
    assert not any(words in said for words in MISLEADING), said
    # One handshake: a certificate is not trusted the second time either.
    assert error.attempts == 1 and tls_valen.connections == 1
    assert tls_valen.server.received == []


@pytest.mark.parametrize("transport", ["app", "httpx"])
async def test_https_at_a_plain_http_server_says_so_and_is_not_retried(
    transport: str, plain_valen: Listener
) -> None:
    async with http_client(transport) as http:
        client = ValenClient(http, base_url=plain_valen.https_url, retry=RetryPolicy(),
                             clock=FakeClock())  # fmt: skip
        with pytest.raises(TLSError) as caught:
            await client.decide("t", [Question("answers", PREDICATE)])
    said = caught.value.describe()
    assert NOT_TLS in said and USE_HTTP in said, said
    assert not any(words in said for words in MISLEADING), said
    assert caught.value.attempts == 1 and plain_valen.connections == 1


def test_valen_check_names_the_certificate_not_the_server(
    capsys: pytest.CaptureFixture[str], tls_valen: Listener
) -> None:
    code, out, err = run_cli(capsys, "valen", "check", "--base-url", tls_valen.https_url)
    assert code == 1
    assert "  HTTP status  none (no reply)" in out
    assert err.startswith(
        "helpdesk: error: Valen check failed: tls: the TLS handshake with "
        f"{tls_valen.https_url}/decisions failed: {UNTRUSTED}"
    ), err
    assert PRIVATE_CA in err and err.count("\n") == 1
    assert not any(words in err for words in MISLEADING), err


def test_valen_check_at_a_plain_http_server_suggests_http(
    capsys: pytest.CaptureFixture[str], plain_valen: Listener
) -> None:
    code, _, err = run_cli(capsys, "valen", "check", "--base-url", plain_valen.https_url)
    assert code == 1
    assert "Valen check failed: tls: " in err and NOT_TLS in err and USE_HTTP in err, err
    assert not any(words in err for words in MISLEADING), err


def test_ask_tries_each_passage_once_and_says_why(
    capsys: pytest.CaptureFixture[str], tls_valen: Listener, tmp_path: Path
) -> None:
    code, out, err = run_cli(capsys, "ask", QUESTION, "--replay", "off", "--base-url",
                             tls_valen.https_url, "--cache", str(tmp_path / "cache.json"),
                             "-k", "2")  # fmt: skip
    assert code == 1 and "Traceback" not in err
    said = out + err
    assert "tls: the TLS handshake with" in said and UNTRUSTED in said, said
    assert "attempts" not in said and not any(words in said for words in MISLEADING), said
    assert "Valen failed 2 of 2 judgments: tls 2" in said, said
    assert tls_valen.connections == 2, said  # One per passage: none retried.


def test_ssl_cert_file_trusts_a_private_certificate(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    tls_valen: Listener, certificate: Certificate,
) -> None:  # fmt: skip
    # What the message (and the README) says to do for a private CA's certificate.
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate.cert))
    code, out, err = run_cli(capsys, "valen", "check", "--base-url", tls_valen.https_url)
    assert (code, err) == (0, "")
    assert "  HTTP status  200" in out and "  result       ok" in out
    assert len(tls_valen.server.received) == 1
