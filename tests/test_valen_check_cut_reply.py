"""`helpdesk valen check` against a server that sends its status and headers, then breaks off the
body: the check used to print "HTTP status  none (no reply)" and blame a closed connection "before
answering", though a 200 had arrived. It now shows the status and says the reply was cut short."""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from httpx import AsyncClient, Response

from chatbot import assembly
from chatbot.cli.main import main
from chatbot.config import Settings
from tests.valen_deadline import ExpiringClock, Trickle, use_clock
from tests.valen_server import Reply, ValenTestServer, fixed

PARTIAL = b'{"model": "valen-test", "answers": [{"type": "predicate", '


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["valen", "check", *args])
    out, err = capsys.readouterr()
    return code, out, err


def cut_short() -> Iterator[bytes]:
    """A chunked body that ends, connection closed, in the middle."""
    yield PARTIAL
    raise ConnectionResetError  # The test server closes the connection on this.


@contextmanager
def one_reply_then(finish: Callable[[socket.socket], None]) -> Iterator[str]:
    """A server for one request: it answers 200 with a content-length of 500 and sends less,
    then `finish`es the connection (closes it, or resets it); yields its base URL."""
    with socket.create_server(("127.0.0.1", 0)) as listener:

        def serve() -> None:
            connection, _ = listener.accept()
            with connection:
                request = b""
                while b"\r\n\r\n" not in request:  # The body is small: it comes with the head.
                    request += connection.recv(65536)
                connection.sendall(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    b"content-length: 500\r\n\r\n" + PARTIAL
                )
                finish(connection)

        serving = threading.Thread(target=serve, daemon=True)
        serving.start()
        try:
            yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        finally:
            serving.join(30)


def close(connection: socket.socket) -> None:
    connection.shutdown(socket.SHUT_RDWR)


def reset(connection: socket.socket) -> None:
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def assert_cut_after_200(code: int, out: str, err: str, url: str) -> None:
    assert code == 1
    assert "  HTTP status  200 (no complete reply)" in out.splitlines()
    assert "none" not in out.split("HTTP status", 1)[1].splitlines()[0]
    assert "  result       FAILED" in out.splitlines()
    assert err.count("\n") == 1
    assert err.startswith(
        f"helpdesk: error: Valen check failed: connection: the server at {url}/decisions "
        "answered 200 but closed the connection before the reply was complete: "
        "RemoteProtocolError (the server was reached"
    )
    assert "before answering" not in err and "cannot reach" not in err


def test_a_chunked_body_cut_short_reports_the_200_and_the_cut(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer
) -> None:
    valen_server.validate = False
    valen_server.responder = fixed(Reply(chunks=cut_short))
    code, out, err = run(capsys, "--base-url", valen_server.base_url)
    assert_cut_after_200(code, out, err, valen_server.base_url)
    assert "  API key      not set (none needed)" in out.splitlines()  # It said 200 to no key.


@pytest.mark.parametrize("finish", [close, reset], ids=["closed", "reset"])
def test_a_body_shorter_than_its_content_length_reports_the_200_and_the_cut(
    finish: Callable[[socket.socket], None], capsys: pytest.CaptureFixture[str]
) -> None:
    with one_reply_then(finish) as url:
        code, out, err = run(capsys, "--base-url", url)
    assert code == 1
    assert "  HTTP status  200 (no complete reply)" in out.splitlines()
    assert err.count("\n") == 1
    assert f"the server at {url}/decisions answered 200 but " in err
    assert "before the reply was complete" in err and "before answering" not in err


def test_the_json_report_has_the_status_that_came(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer
) -> None:
    valen_server.validate = False
    valen_server.responder = fixed(Reply(chunks=cut_short))
    code, out, _ = run(capsys, "--base-url", valen_server.base_url, "--json")
    report = json.loads(out)
    assert code == 1 and not report["ok"]
    assert (report["status"], report["incomplete"]) == (200, True)
    assert (
        "answered 200 but closed the connection before the reply was complete"
        in (report["problem"])
    )


def test_a_complete_reply_is_not_called_incomplete(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer
) -> None:
    code, out, _ = run(capsys, "--base-url", valen_server.base_url)
    assert code == 0
    assert "  HTTP status  200" in out.splitlines()


def test_a_body_too_slow_for_the_budget_reports_the_200_that_came(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer,
) -> None:  # fmt: skip
    # Before, "HTTP status  none (no reply)": the status line said nothing had come.
    clock = ExpiringClock()
    trickle = Trickle()  # The body stops after its first byte until released.
    valen_server.responder = fixed(trickle.reply())
    use_clock(monkeypatch, clock)
    made = assembly.make_http_client

    def expiring_once_answered(settings: Settings, *, started: bool = False) -> AsyncClient:
        # The budget runs out the moment the headers are in, however fast the body would come.
        http = made(settings, started=started)

        async def expire(_: Response) -> None:
            clock.expire()

        http.event_hooks["response"].append(expire)
        return http

    monkeypatch.setattr(assembly, "make_http_client", expiring_once_answered)
    try:
        code, out, err = run(capsys, "--base-url", valen_server.base_url)
    finally:
        trickle.release.set()
    assert code == 1
    assert "  HTTP status  200 (no complete reply)" in out.splitlines()
    assert err == (
        "helpdesk: error: Valen check failed: budget: no complete reply within 20 s "
        "(valen.budget_s, the time the bot gives Valen per question): the bot would give up on "
        "it too\n"
    )
