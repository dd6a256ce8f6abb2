"""A live `helpdesk ask` and `helpdesk valen check` say what they are doing while Valen hangs and
when they are interrupted; `valen check` names where a refused key was set; any 2xx reply with a
valid body is an answer, and an empty or non-object one is called what it is (a tester's
findings: a blank terminal for the whole budget, exit 130 without a word, "(check
VALEN_API_KEY)" for a key in the settings file, a 201 refused as `valen-error`)."""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from chatbot.config import config_file
from tests.cli_run import run_cli
from tests.conftest import ROOT
from tests.valen_server import Received, Reply, ValenTestServer, fixed, probability_reply

Q1 = "I was charged twice for the same ride, can I get my money back?"
PASSAGES = 5
"""How many passages the shipped knowledge base retrieves for Q1 (k=5)."""
KEY = "sk-qa3-0123456789abcdef"
WAIT_S = 60.0
"""The most a condition is waited for before the test fails (never a fixed sleep)."""


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def helpdesk(*args: str) -> list[str]:
    return [sys.executable, "-m", "chatbot", *args]


def live_ask(server: ValenTestServer, tmp_path: Path) -> list[str]:
    return helpdesk("ask", Q1, "--replay", "off", "--base-url", server.base_url,
                    "--cache", str(tmp_path / "cache.json"))  # fmt: skip


def wait_until(condition: Callable[[], bool], process: subprocess.Popen[bytes], what: str) -> None:
    given_up = time.monotonic() + WAIT_S
    while not condition():
        assert process.poll() is None, f"ended before {what}: {process.returncode}"
        assert time.monotonic() < given_up, f"never: {what}"
        threading.Event().wait(0.01)


class Held:
    """A responder holding every request until `release`, then answering 0.9."""

    def __init__(self) -> None:
        self.released = threading.Event()

    def __call__(self, received: Received, _: int) -> Reply:
        self.released.wait(WAIT_S)
        return probability_reply(received, 0.9)


class Collected:
    """What a descriptor delivers, read as it comes by a thread of its own."""

    def __init__(self, fd: int) -> None:
        self.chunks: list[bytes] = []
        self._fd = fd
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._fd, 65536)
            except OSError:  # EIO: the terminal's last writer closed.
                return
            if not chunk:
                return
            self.chunks.append(chunk)

    @property
    def text(self) -> str:
        return b"".join(self.chunks).decode(errors="replace")

    def join(self) -> None:
        self._thread.join(WAIT_S)


@contextmanager
def terminal() -> Iterator[tuple[int, Collected]]:
    """A pseudo-terminal: the descriptor to give a process, and what it shows."""
    leader, follower = pty.openpty()
    shown = Collected(leader)
    try:
        yield follower, shown
    finally:
        os.close(follower)
        shown.join()
        os.close(leader)


@contextmanager
def started(command: list[str], *, stdout: int, stderr: int) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        command, cwd=ROOT, env=environment(), stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


# -- 1. saying what it is doing while Valen hangs ---------------------------------------------


def test_a_live_ask_on_a_terminal_says_it_is_asking_valen_and_takes_it_away(
    valen_server: ValenTestServer, tmp_path: Path
) -> None:
    held = Held()
    valen_server.responder = held
    with terminal() as (follower, shown):
        try:
            with started(live_ask(valen_server, tmp_path), stdout=subprocess.PIPE,
                         stderr=follower) as process:  # fmt: skip
                wait_until(lambda: valen_server.count() == PASSAGES, process, "Valen asked")
                # Said while Valen still holds every request: the screen was blank till the end.
                wait_until(lambda: "asking Valen" in shown.text, process, "the line shown")
                assert shown.text == "\rasking Valen about 5 passages (at most 20 s)…"
                held.released.set()
                out, _ = process.communicate(timeout=WAIT_S)
        finally:
            held.released.set()
    assert process.returncode == 0
    assert out.decode().startswith("Answer from ")
    # Taken away, as eval's progress line is: nothing is left on the terminal's line.
    assert shown.text.rsplit("\r", 1)[1] == ""
    assert b"asking Valen" not in out


def test_a_piped_ask_says_nothing_extra(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer, tmp_path: Path
) -> None:
    code, out, err = run_cli(capsys, *live_ask(valen_server, tmp_path)[3:])
    assert (code, err) == (0, "")
    assert "asking Valen" not in out


def test_valen_check_prints_its_first_line_before_the_reply_comes(
    valen_server: ValenTestServer,
) -> None:
    held = Held()
    valen_server.responder = held
    command = helpdesk("valen", "check", "--base-url", valen_server.base_url)
    first = f"Valen check: POST {valen_server.base_url}/decisions\n"
    try:
        with started(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
            assert process.stdout is not None
            printed = Collected(process.stdout.fileno())
            wait_until(lambda: valen_server.count() == 1, process, "the request sent")
            # Through a pipe too: flushed before the request went, not held till the end.
            wait_until(lambda: printed.text == first, process, "the first line printed")
            held.released.set()
            process.wait(WAIT_S)
            printed.join()
    finally:
        held.released.set()
    assert process.returncode == 0
    lines = printed.text.splitlines()
    assert lines[0] == first.rstrip("\n") and lines.count(lines[0]) == 1  # Printed once.
    assert "  HTTP status  200" in lines and "  result       ok" in lines


# -- 2. Ctrl+C says it was interrupted --------------------------------------------------------


def interrupted(command: list[str], server: ValenTestServer, requests: int) -> tuple[int, str, str]:
    """`command` interrupted (SIGINT) while Valen holds its `requests` requests."""
    held = Held()
    server.responder = held
    try:
        with started(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
            wait_until(lambda: server.count() == requests, process, "Valen asked")
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=WAIT_S)
    finally:
        held.released.set()
    return process.returncode, out.decode(), err.decode()


def test_ctrl_c_on_a_live_ask_says_it_was_interrupted(
    valen_server: ValenTestServer, tmp_path: Path
) -> None:
    code, out, err = interrupted(live_ask(valen_server, tmp_path), valen_server, PASSAGES)
    assert (code, out) == (130, "")
    assert err == (
        "helpdesk ask: interrupted while asking Valen about 5 passages; no answer printed\n"
    )


def test_ctrl_c_on_valen_check_says_it_was_interrupted(valen_server: ValenTestServer) -> None:
    command = helpdesk("valen", "check", "--base-url", valen_server.base_url)
    code, out, err = interrupted(command, valen_server, 1)
    assert code == 130
    assert out == f"Valen check: POST {valen_server.base_url}/decisions\n"
    assert err == "helpdesk valen check: interrupted while waiting for Valen's reply; no result\n"


# -- 3. a refused key's hint names where the key was set ---------------------------------------


def test_a_refused_key_from_the_settings_file_names_the_file(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer
) -> None:
    path = config_file()  # Under the test's own XDG_CONFIG_HOME.
    path.parent.mkdir(parents=True)
    path.write_text(f'[valen]\napi_key = "{KEY}"\n', encoding="utf-8")
    valen_server.responder = fixed(Reply(status=401, body={"error": "invalid api key"}))
    code, out, err = run_cli(capsys, "valen", "check", "--base-url", valen_server.base_url)
    assert code == 1 and "  API key      rejected" in out
    assert valen_server.received[0].headers["authorization"] == f"Bearer {KEY}"
    assert err == (
        "helpdesk: error: Valen check failed: auth (HTTP 401): invalid api key (check "
        f"valen.api_key in {path})\n"
    )


@pytest.mark.parametrize("variable", ["VALEN_API_KEY", "HELPDESK_VALEN__API_KEY"])
def test_a_refused_key_from_a_variable_names_the_variable_over_the_file(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer,
    variable: str,
) -> None:
    path = config_file()
    path.parent.mkdir(parents=True)
    path.write_text('[valen]\napi_key = "sk-in-the-file-but-not-in-force"\n', encoding="utf-8")
    monkeypatch.setenv(variable, KEY)
    valen_server.responder = fixed(Reply(status=401, body={"error": "invalid api key"}))
    code, _out, err = run_cli(capsys, "valen", "check", "--base-url", valen_server.base_url)
    assert code == 1
    assert err.endswith(f"invalid api key (check {variable})\n")


# -- 4. replies: any 2xx with a valid body; an empty or non-object one said as such ---------------


def test_a_201_with_a_valid_body_is_an_answer(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer,
    tmp_path: Path,
) -> None:
    def created(received: Received, _: int) -> Reply:
        reply = probability_reply(received, 0.93)
        reply.status = 201
        return reply

    valen_server.responder = created
    monkeypatch.setenv("VALEN_API_KEY", KEY)
    code, out, err = run_cli(capsys, "valen", "check", "--base-url", valen_server.base_url)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert "  HTTP status  201" in lines and "  API key      accepted" in lines
    assert "  answer       probability 0.930 that the passage answers the question" in lines
    # The bot's path reads replies the same way: judged, not `valen-error (HTTP 201)`.
    code, out, err = run_cli(capsys, *live_ask(valen_server, tmp_path)[3:])
    assert (code, err) == (0, "")
    assert out.startswith("Answer from ") and "valen-error" not in out


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        (Reply(status=204, raw=b""), "(HTTP 204): empty reply: 204 No Content, where an answer "
         "was expected"),
        (Reply(body=[]), "(HTTP 200): reply is not a JSON object: a list"),
        (Reply(body="answers"), "(HTTP 200): reply is not a JSON object: 'answers'"),
    ],
)  # fmt: skip
def test_an_empty_or_non_object_reply_is_called_what_it_is(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer, reply: Reply, said: str
) -> None:
    valen_server.responder = fixed(reply)
    code, _out, err = run_cli(capsys, "valen", "check", "--base-url", valen_server.base_url)
    assert code == 1
    assert err == (
        f"helpdesk: error: Valen check failed: invalid-response {said} (is this a Valen server, "
        "and is --dialect right?)\n"
    )
