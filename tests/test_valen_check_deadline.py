"""`helpdesk valen check`: an overall deadline, a latency that is the request's own, and messages
that say what happened (a server that closed the connection, a redirect, a port out of range)."""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import struct
import threading
import time
import types
from collections.abc import Iterator
from typing import Any

import pytest

from chatbot.cli.main import main
from chatbot.cli.valen import check
from chatbot.valen.transport import ValenTransport
from tests.valen_deadline import ExpiringClock, Trickle, use_clock
from tests.valen_server import (
    ManualClock,
    Reply,
    ValenTestServer,
    closed_port_url,
    fixed,
    until,
)

KEY = "sk-qa-check-0123456789abcdef"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["valen", "check", *args])
    out, err = capsys.readouterr()
    return code, out, err


async def test_check_gives_up_at_the_bots_budget(
    monkeypatch: pytest.MonkeyPatch, valen_server: ValenTestServer
) -> None:
    # A 200 that never completes used to be waited for as long as the server kept sending:
    # two minutes, then "result ok".
    trickle = Trickle()
    valen_server.responder = fixed(trickle.reply())
    clock = ManualClock()
    use_clock(monkeypatch, clock)
    monkeypatch.setenv("HELPDESK_VALEN__BUDGET_S", "20")
    checking = asyncio.ensure_future(check(argparse.Namespace(base_url=valen_server.base_url)))
    try:
        await until(trickle.sent.is_set)
        clock.advance(19.9)
        for _ in range(50):  # Turns of the loop: a timeout due would end the check in a few.
            await asyncio.sleep(0)
        assert not checking.done()  # Within the budget: still waiting.
        clock.advance(0.1)
        await until(checking.done, timeout_s=10)
        report = checking.result()
    finally:
        trickle.release.set()
        checking.cancel()
    assert not report.ok
    assert report.problem is not None
    assert report.problem.startswith("budget: no complete reply within 20 s (valen.budget_s")


def test_a_check_past_the_budget_fails_with_one_line_and_exit_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer,
) -> None:  # fmt: skip
    clock = ExpiringClock()
    # The budget runs out once the first byte is out; with no timeout to end, the reply completes.
    trickle = Trickle(then=lambda: None if clock.expire() else trickle.release.set())
    valen_server.responder = fixed(trickle.reply())
    use_clock(monkeypatch, clock)
    monkeypatch.setenv("VALEN_API_KEY", KEY)
    try:
        code, out, err = run(capsys, "--base-url", valen_server.base_url)
    finally:
        trickle.release.set()
    assert clock.asked == [20.0]  # valen.budget_s, the bot's own.
    assert code == 1
    assert "  result       FAILED" in out.splitlines()
    assert err == (
        "helpdesk: error: Valen check failed: budget: no complete reply within 20 s "
        "(valen.budget_s, the time the bot gives Valen per question): the bot would give up on "
        "it too\n"
    )
    assert KEY not in out + err
    assert len(valen_server.received) == 1


@pytest.fixture
def slow_aiohttp_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """Importing aiohttp and building its pool (the transport's start) takes 1000 s of the check's
    timer, without taking any real time: only a latency that leaves it out is under that."""
    offset = [0.0]
    real = time.perf_counter
    fake_time = types.SimpleNamespace(perf_counter=lambda: real() + offset[0])
    monkeypatch.setattr("chatbot.cli.valen.time", fake_time)
    start = ValenTransport._start

    def slow_start(self: ValenTransport) -> Any:
        offset[0] += 1000.0
        return start(self)

    monkeypatch.setattr(ValenTransport, "_start", slow_start)


@pytest.mark.usefixtures("slow_aiohttp_start")
def test_latency_leaves_out_the_aiohttp_import(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer
) -> None:
    # A server answering in 2 ms showed "latency 103 ms": the first request imported aiohttp.
    code, out, _ = run(capsys, "--base-url", valen_server.base_url, "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"]
    assert 0 < report["latency_ms"] < 60_000


@pytest.mark.usefixtures("slow_aiohttp_start")
def test_a_refused_connection_times_the_attempt_only(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--base-url", closed_port_url(), "--json")
    report = json.loads(out)
    assert code == 1 and report["status"] is None
    assert 0 < report["latency_ms"] < 60_000


def cut_short() -> Iterator[bytes]:
    """A chunked body that ends, connection closed, in the middle."""
    yield b'{"answers": [{"type": "predicate", '
    raise ConnectionResetError  # The test server closes the connection on this.


@pytest.mark.parametrize(
    "reply",
    [Reply(drop=True), Reply(chunks=cut_short)],
    ids=["before-answering", "mid-body"],
)
def test_a_server_that_closes_the_connection_is_not_called_unreachable(
    reply: Reply, capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer
) -> None:
    valen_server.validate = False
    valen_server.responder = fixed(reply)
    code, out, err = run(capsys, "--base-url", valen_server.base_url)
    # Mid-body, the status had come: the message says so (tests/test_valen_check_cut_reply.py).
    closed = "closed the connection before answering completely"
    if reply.chunks is not None:
        closed = "answered 200 but closed the connection before the reply was complete"
    assert code == 1 and err.count("\n") == 1
    assert err.startswith(
        f"helpdesk: error: Valen check failed: connection: the server at "
        f"{valen_server.base_url}/decisions {closed}: "
        "RemoteProtocolError (the server was reached"
    )
    assert "cannot reach" not in err and "is the server running" not in err


def test_a_server_that_resets_the_connection_is_not_called_unreachable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:

        def reset_once() -> None:
            connection, _ = listener.accept()
            connection.recv(65536)  # The request, then a reset (RST) instead of a reply.
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            connection.close()

        serving = threading.Thread(target=reset_once, daemon=True)
        serving.start()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        code, _, err = run(capsys, "--base-url", url)
        serving.join(30)
    assert code == 1
    assert err.startswith(
        f"helpdesk: error: Valen check failed: connection: the server at {url}/decisions reset "
        "the connection before answering completely: ReadError (the server was reached"
    )


@pytest.mark.parametrize(
    ("location", "shown"),
    [
        ("https://valen.example/v1/decisions", "https://valen.example/v1/decisions"),
        # Relative: read against the request's URL. A key in it is hidden, as everywhere.
        (f"/v2/decisions?api_key={KEY}", "/v2/decisions?api_key=[redacted]"),
    ],
    ids=["absolute", "relative"],
)
def test_a_redirect_names_its_target_and_is_not_followed(
    location: str, shown: str, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, valen_server: ValenTestServer,
) -> None:  # fmt: skip
    monkeypatch.setenv("VALEN_API_KEY", KEY)
    valen_server.responder = fixed(Reply(status=307, headers={"location": location}))
    code, out, err = run(capsys, "--base-url", valen_server.base_url)
    if shown.startswith("/"):
        shown = valen_server.base_url.removesuffix("/v1") + shown
    assert code == 1 and "  HTTP status  307" in out
    assert err == (
        "helpdesk: error: Valen check failed: redirect (HTTP 307): the server redirected the "
        f"request to {shown}; redirects are not followed (if Valen has moved there, point "
        "--base-url at it)\n"
    )
    assert "null" not in err and KEY not in out + err
    assert len(valen_server.received) == 1  # Not followed.


def test_a_port_out_of_range_is_called_an_invalid_port(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VALEN_BASE_URL", "http://127.0.0.1:99999/v1")
    code, _, err = run(capsys)
    assert code != 0
    assert err == (
        "helpdesk: error: invalid setting valen.base_url from VALEN_BASE_URL: "
        "'http://127.0.0.1:99999/v1' has an invalid port, 99999: a port is a number from 1 to "
        "65535\n"
    )
