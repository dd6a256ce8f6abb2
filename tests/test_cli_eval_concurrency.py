"""`helpdesk eval` judges several questions at once (`--concurrency N`, default the bot's
`bot.concurrency`), through one Valen client. A tester's 32 questions took 2 min 42 s against a
5 s Valen, and ~11 minutes against one that hung (the 20 s budget per question), one question at
a time. The report stays the one a run of one question at a time prints; the progress line, the
stop at a rejected key, Ctrl+C and `--replay record` keep working with several in flight."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path
from typing import Any

import pytest

from chatbot.cli.evaluate import Progress
from chatbot.valen.errors import ServerError
from tests.cli_run import run_cli
from tests.conftest import DATA, ROOT, SHIPPED_KB
from tests.valen_faults import FAST
from tests.valen_server import (
    Received,
    Reply,
    ValenTestServer,
    input_of,
    probability_reply,
    refusal_reply,
)

QUESTIONS_FILE = DATA / "customer_questions.json"
QUESTIONS = [q["text"] for q in json.loads(QUESTIONS_FILE.read_text())["queries"]]
REJECTED = (
    "helpdesk eval: stopped at question 2 of 32: Valen rejected the API key (auth (HTTP 401): "
    "invalid api key), as it would for every question; no report printed; `helpdesk valen "
    "check` tests the key\n"
)


def question_of(received: Received) -> int:
    """The 1-based number, in the data file, of the question a request asks about."""
    text = input_of(received).split("\n\nHelp-center passage: ")[0]
    return QUESTIONS.index(text.removeprefix("Customer question: ")) + 1


def live(server: ValenTestServer, tmp_path: Path, *more: str) -> list[str]:
    return ["eval", str(QUESTIONS_FILE), "--passages", str(SHIPPED_KB), "--replay", "off",
            "--base-url", server.base_url, "--cache", str(tmp_path / "cache.json"),
            *more]  # fmt: skip


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three attempts, waits of hundredths of a second, here and in a process of its own."""
    for name, value in FAST.items():
        monkeypatch.setenv(f"HELPDESK_VALEN__{name.upper()}", str(value))


def by_input(received: Received, _index: int) -> Reply:
    """The same answer to the same request whenever it comes, whatever was asked before: a
    probability from the text, and for some texts a refusal or a server that always fails."""
    body = received.body
    text = input_of(received) + "".join(str(q) for q in body.get("questions", []))
    digest = zlib.crc32(text.encode())
    if digest % 11 == 0:
        return Reply(status=503, body={"detail": "engine busy"})
    if digest % 13 == 0:
        return refusal_reply(received)
    return probability_reply(received, (digest % 1000) / 1000)


def report(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code, out, _err = run_cli(capsys, *argv, "--json")
    assert code == 0
    parsed: dict[str, Any] = json.loads(out)
    return parsed


def test_a_concurrent_report_is_the_one_question_at_a_time_gives(
    capsys: pytest.CaptureFixture[str], valen_server: ValenTestServer, tmp_path: Path
) -> None:
    valen_server.responder = by_input
    wordings = ("--sweep", "--predicate", "Does the passage answer the question?",
                "--predicate", "Would this passage help the customer?")  # fmt: skip
    one_at_a_time = report(capsys, *live(valen_server, tmp_path, *wordings, "--concurrency", "1"))
    judgments = one_at_a_time["judgments"]
    # Every kind of outcome is in it: answers, refusals, failures.
    assert judgments["judged"] and {"refused", "server-error"} <= set(judgments["not_judged"])
    for several in ([], ["--concurrency", "5"], ["--concurrency", "32"]):
        assert report(capsys, *live(valen_server, tmp_path, *wordings, *several)) == one_at_a_time

    # Recorded by a concurrent run, every answer is in the cache: replayed one at a time and
    # several at once, the reports agree, and only what Valen failed is missing.
    cache = tmp_path / "cache.json"
    valen_server.received.clear()
    recorded = report(capsys, *live(valen_server, tmp_path, *wordings, "--replay", "record"))
    assert recorded == one_at_a_time
    answered = {
        (input_of(r), r.body["questions"][0]["instructions"])
        for r in valen_server.received
        if by_input(r, 0).status == 200
    }
    entries = json.loads(cache.read_text())["entries"].values()
    assert {(e["input"], e["instructions"]) for e in entries} == answered
    replayed = [
        report(capsys, "eval", str(QUESTIONS_FILE), "--passages", str(SHIPPED_KB),
               "--cache", str(cache), *wordings, "--concurrency", n)
        for n in ("1", "8")
    ]  # fmt: skip
    assert replayed[0] == replayed[1]
    not_judged = replayed[0]["judgments"]["not_judged"]
    assert not_judged == {
        "replay-miss": judgments["not_judged"]["server-error"],
        "refused": judgments["not_judged"]["refused"],
    }
    assert [q["reranked"] for q in replayed[0]["queries"]] == [
        q["reranked"] for q in one_at_a_time["queries"]
    ]


def test_questions_are_judged_at_once_through_one_client(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    valen_server: ValenTestServer,
    tmp_path: Path,
) -> None:
    # How many requests the file makes, asked one question at a time.
    code, _out, _err = run_cli(capsys, *live(valen_server, tmp_path, "--concurrency", "1"))
    assert code == 0
    total = valen_server.count()
    valen_server.received.clear()

    # The server holds each request until another is held beside it (the first question, asked
    # alone, and the very last request excepted): the run only ends if requests of different
    # questions are in flight at once. The client's in-flight limit of 2 caps all of them.
    monkeypatch.setenv("HELPDESK_VALEN__MAX_IN_FLIGHT", "2")
    changed = threading.Condition()
    held: list[int] = []
    pairs: list[set[int]] = []
    most = 0

    def respond(received: Received, _index: int) -> Reply:
        nonlocal most
        number = question_of(received)
        with changed:
            if number != 1:
                held.append(number)
                most = max(most, len(held))
                pairs.append(set(held))
                changed.notify_all()
                released = changed.wait_for(
                    lambda: len(held) >= 2 or valen_server.count() == total, timeout=60
                )
                held.remove(number)
                assert released, "held alone"
        return probability_reply(received, 0.9)

    valen_server.responder = respond
    code, out, err = run_cli(capsys, *live(valen_server, tmp_path))  # The default concurrency.
    assert (code, err) == (0, ""), err
    assert valen_server.count() == total and "top-1 correct" in out
    assert any(len(questions) == 2 for questions in pairs), "no two questions in flight at once"
    assert most == 2  # One client's limit, shared by every question.


def test_a_rejected_key_with_several_questions_in_flight_stops_them_all(
    valen_server: ValenTestServer, tmp_path: Path
) -> None:
    # Question 1 answered; question 2 refused for the key once question 3 is being asked too;
    # every later one held until the test ends: only cancelling them ends the run, since the
    # budget and the read timeout are longer than the test waits.
    release = threading.Event()
    later = threading.Event()

    def respond(received: Received, _index: int) -> Reply:
        number = question_of(received)
        if number == 1:
            return probability_reply(received, 0.9)
        if number == 2:
            later.wait(60)
            return Reply(status=401, body={"error": "invalid api key"})
        later.set()
        release.wait(120)
        return probability_reply(received, 0.9)

    valen_server.responder = respond
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VALEN_API_KEY": "sk-eval-0123456789",
           "HELPDESK_VALEN__BUDGET_S": "600", "HELPDESK_VALEN__READ_TIMEOUT_S": "600"}  # fmt: skip
    try:
        process = subprocess.run(
            [sys.executable, "-m", "chatbot", *live(valen_server, tmp_path)],
            cwd=ROOT, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
            timeout=90, check=False,
        )  # fmt: skip
    finally:
        release.set()
    assert (process.returncode, process.stdout) == (1, "")
    # One line: no task left pending or unretrieved, nothing of the later questions.
    assert process.stderr == REJECTED
    assert later.is_set()


def test_ctrl_c_with_several_questions_in_flight(
    valen_server: ValenTestServer, tmp_path: Path
) -> None:
    release = threading.Event()

    def respond(received: Received, _index: int) -> Reply:
        if question_of(received) != 1:
            release.wait(120)
        return probability_reply(received, 0.9)

    valen_server.responder = respond
    process = subprocess.Popen(
        [sys.executable, "-m", "chatbot", *live(valen_server, tmp_path, "--replay", "record")],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        given_up = time.monotonic() + 60
        while len({question_of(r) for r in list(valen_server.received)} - {1}) < 2:
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < given_up, "two questions never reached the server at once"
            threading.Event().wait(0.01)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        release.set()
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert (process.returncode, out) == (130, "")
    assert err == (
        "helpdesk eval: interrupted at question 2 of 32, the ones before it done; no report "
        "printed\n"
    )
    # The first question's answer was recorded; nothing of the ones interrupted.
    entries = json.loads((tmp_path / "cache.json").read_text())["entries"].values()
    assert {e["input"].split("\n\n")[0] for e in entries} == {f"Customer question: {QUESTIONS[0]}"}


class Screen(io.StringIO):
    """A terminal's stderr as text: what the progress line wrote, carriage returns included."""

    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.getvalue().split("\r") if line.strip()]


def test_the_progress_line_moves_as_questions_settle_in_order() -> None:
    screen = Screen()
    progress = Progress(["a", "b", "c", "d"], screen)
    failed = ServerError("engine busy")
    progress.start(1)
    assert progress.where() == "question 1 of 4"
    progress.judged(1, [failed])
    progress.settled(1)
    for number in (2, 3, 4):
        progress.start(number)
    progress.judged(3, [failed, failed])
    progress.settled(3)  # Settled before question 2: the run is still at question 2.
    assert progress.where() == "question 2 of 4" and progress.in_flight == {2, 4}
    progress.judged(2, [0.9])
    progress.settled(2)
    assert progress.where() == "question 4 of 4" and progress.in_flight == {4}
    assert screen.lines() == [
        "question 1 of 4",
        "question 2 of 4 (so far Valen failed 1 of 1: server-error 1)",
        "question 3 of 4 (so far Valen failed 1 of 2: server-error 1)",
        "question 4 of 4 (so far Valen failed 3 of 4: server-error 3)",
    ]
