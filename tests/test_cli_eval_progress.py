"""A live `helpdesk eval` says where it is, stops at a rejected key, and says how far it got when
interrupted. Against a failing Valen the 32 questions of customer_questions.json ran for minutes
on a blank screen; a rejected key was sent for every passage of every question; Ctrl+C exited 130
saying nothing."""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.cli_run import run_cli
from tests.conftest import DATA, ROOT, SHIPPED_KB
from tests.valen_faults import FAST
from tests.valen_server import Received, Reply, ValenTestServer, fixed, probability_reply

QUESTIONS = DATA / "customer_questions.json"
KEY = "sk-eval-0123456789"
FIRST_THREE = (
    "Do I get a helmet with my bike?",
    "Are helmets provided on the electric bikes in Porto?",
    "Is headgear included when I rent a bicycle?",
)
THIRD = FIRST_THREE[2]
"""Two passages are retrieved for it."""


def live(server: ValenTestServer, tmp_path: Path) -> list[str]:
    return ["eval", str(QUESTIONS), "--passages", str(SHIPPED_KB), "--replay", "off",
            "--base-url", server.base_url, "--cache", str(tmp_path / "cache.json")]  # fmt: skip


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}  # `quick_retries` included.


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """The policy of the fault tests (three attempts, waits of hundredths of a second), for the
    runs in this process as for those in a process of their own."""
    for name, value in FAST.items():
        monkeypatch.setenv(f"HELPDESK_VALEN__{name.upper()}", str(value))


def test_a_rejected_key_stops_the_run_at_the_first_question(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer,
    tmp_path: Path,
) -> None:
    valen_server.responder = fixed(Reply(status=401, body={"error": "invalid api key"}))
    monkeypatch.setenv("VALEN_API_KEY", KEY)
    code, out, err = run_cli(capsys, *live(valen_server, tmp_path))
    assert code == 1
    assert out == ""
    # The first question's one passage, not every passage of every question (83 here).
    assert valen_server.count() == 1
    assert err == (
        "helpdesk eval: stopped at question 1 of 32: Valen rejected the API key (auth (HTTP "
        "401): invalid api key), as it would for every question; no report printed; `helpdesk "
        "valen check` tests the key\n"
    )  # No progress line: stderr is no terminal here.
    assert KEY not in err


def test_with_no_key_set_the_stop_says_to_set_one(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer, tmp_path: Path
) -> None:
    valen_server.responder = fixed(Reply(status=401, body={"error": "missing api key"}))
    code, _out, err = run_cli(capsys, *live(valen_server, tmp_path), "--json")
    assert code == 1 and valen_server.count() == 1
    assert "stopped at question 1 of 32: Valen wants an API key and none is set" in err
    assert err.endswith("; set VALEN_API_KEY\n")


def test_a_key_refused_mid_run_stops_there_and_one_refusal_among_answers_does_not(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer,
    tmp_path: Path,
) -> None:
    # Questions 1 and 2 answered; question 3 refused once among answers; from question 4 on,
    # the key refused (revoked, say): the run stops at the first question refused whole.
    first, second, third = FIRST_THREE
    lock = threading.Lock()
    thirds: list[str] = []

    def respond(received: Received, _: int) -> Reply:
        text = str(received.body.get("input"))
        if first in text or second in text:
            return probability_reply(received, 0.9)
        if third in text:
            with lock:
                thirds.append(text)
                if len(thirds) > 1:
                    return probability_reply(received, 0.9)
        return Reply(status=401, body={"error": "key revoked"})

    valen_server.responder = respond
    monkeypatch.setenv("VALEN_API_KEY", KEY)
    code, out, err = run_cli(capsys, *live(valen_server, tmp_path))
    assert (code, out) == (1, "")
    assert err.startswith("helpdesk eval: stopped at question 4 of 32: Valen rejected the API key")


def test_a_rate_limit_does_not_stop_the_run(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer, tmp_path: Path
) -> None:
    # Only the key stops it: a limit or an outage may pass, so every question is still asked.
    valen_server.responder = fixed(Reply(status=429, body={"error": "slow down"}))
    code, out, err = run_cli(capsys, *live(valen_server, tmp_path), "--json")
    assert code == 1  # Nothing judged.
    assert valen_server.count() == 83 * FAST["max_attempts"]
    assert "stopped" not in err and "Valen failed 83 of 83 judgments: rate-limited 83" in err


def test_progress_is_shown_on_a_terminal_and_taken_away(
    valen_server: ValenTestServer, tmp_path: Path
) -> None:
    valen_server.responder = fixed(Reply(status=503, body={"detail": "engine busy"}))
    leader, follower = pty.openpty()
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the last writer closed.
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        process = subprocess.run(
            [sys.executable, "-m", "chatbot", *live(valen_server, tmp_path)],
            cwd=ROOT, env=environment(), stdout=subprocess.PIPE, stderr=follower,
            stdin=subprocess.DEVNULL, timeout=120, check=False,
        )  # fmt: skip
    finally:
        os.close(follower)
        reader.join(10)
        os.close(leader)
    # The terminal writes each line break as "\r\n": only the other carriage returns are ours.
    shown = b"".join(chunks).decode().replace("\r\n", "\n")
    assert process.returncode == 1  # Nothing judged: every judgment failed.
    lines = shown.split("\r")
    assert any(line.startswith("question 1 of 32") for line in lines), shown
    assert any(line.startswith("question 32 of 32") for line in lines), shown
    # What failed so far comes with it, so a screen of retries says why it is slow.
    assert "question 3 of 32 (so far Valen failed 3 of 3: server-error 3)" in shown
    # Taken away before the last line, which starts a clean line.
    last = shown.rsplit("\r", 1)[1]
    assert last.startswith("helpdesk eval: nothing was judged"), repr(shown[-300:])
    assert b"\r" not in process.stdout and b"question 1 of" not in process.stdout


def test_ctrl_c_says_how_far_the_run_got(valen_server: ValenTestServer, tmp_path: Path) -> None:
    released = threading.Event()

    def respond(received: Received, _: int) -> Reply:
        if THIRD in str(received.body.get("input")):
            released.wait(60)  # Held: the run is at the third question when interrupted.
        return probability_reply(received, 0.9)

    valen_server.responder = respond
    # One question at a time: the third at the server then means the second is done (with
    # several at once, tests/test_cli_eval_concurrency.py).
    process = subprocess.Popen(
        [sys.executable, "-m", "chatbot", *live(valen_server, tmp_path), "--concurrency", "1"],
        cwd=ROOT, env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        # Both passages of the third question held at the server: the run is at it.
        given_up = time.monotonic() + 60
        while sum(THIRD in str(r.body.get("input")) for r in valen_server.received) < 2:
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < given_up, "the third question never reached the server"
            threading.Event().wait(0.01)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        released.set()
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, err
    assert out == ""
    assert err == (
        "helpdesk eval: interrupted at question 3 of 32, the ones before it done; no report "
        "printed\n"
    )
