"""`helpdesk valen check` says, on a terminal, that it waits for Valen's reply and for how long
at most, as `helpdesk ask` says it asks, and takes the line away before its report (a tester's
finding: the heading alone sat there for up to 20 s while Valen hung). Through a pipe it says
nothing extra."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import threading
import time

import pytest

from tests.cli_run import run_cli
from tests.conftest import ROOT
from tests.terminal import read_until
from tests.valen_server import Received, Reply, ValenTestServer, probability_reply

WAIT_S = 60.0
"""The most anything is waited for before the test fails (never a fixed sleep)."""
LINE = "waiting for Valen's reply (at most 20 s)…"


class Held:
    """A responder holding every request until `released`, then answering 0.9."""

    def __init__(self) -> None:
        self.released = threading.Event()

    def __call__(self, received: Received, _: int) -> Reply:
        self.released.wait(WAIT_S)
        return probability_reply(received, 0.9)


def test_valen_check_on_a_terminal_says_it_waits_and_takes_the_line_away(
    valen_server: ValenTestServer,
) -> None:
    held = Held()
    valen_server.responder = held
    leader, follower = pty.openpty()
    command = [sys.executable, "-m", "chatbot", "valen", "check",
               "--base-url", valen_server.base_url]  # fmt: skip
    try:
        process = subprocess.Popen(
            command, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=follower,
        )  # fmt: skip
        os.close(follower)  # The process's end alone: the terminal closes as it exits.
        try:
            # Said while Valen still holds the request: nothing else was, till the end.
            shown = read_until(leader, lambda out: LINE.encode() in out, WAIT_S)
            given_up = time.monotonic() + WAIT_S
            while valen_server.count() < 1:  # The line goes up just before the request.
                assert process.poll() is None and time.monotonic() < given_up, "never asked"
                threading.Event().wait(0.01)
            assert shown.decode() == "\r" + LINE
            held.released.set()
            out, _ = process.communicate(timeout=WAIT_S)
            shown += read_until(leader, lambda _: False, WAIT_S)  # Up to the terminal's close.
        finally:
            held.released.set()
            if process.poll() is None:
                process.kill()
                process.communicate()
    finally:
        os.close(leader)
    assert process.returncode == 0
    # Taken away before the report, as `ask`'s line is: nothing is left on the terminal's line.
    assert shown.decode().rsplit("\r", 1)[1] == ""
    lines = out.decode().splitlines()
    assert lines[0] == f"Valen check: POST {valen_server.base_url}/decisions"
    assert "  result       ok" in lines and LINE not in out.decode()


def test_a_piped_valen_check_says_nothing_extra(
    valen_server: ValenTestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "valen", "check", "--base-url", valen_server.base_url)
    assert (code, err) == (0, "")
    assert "waiting for Valen" not in out
