"""Bot workers and customers as real processes, where processes are the point: a question waits
for a bot started later; a worker killed mid-judgment loses nothing and answers nothing twice;
four workers and eight customers decide every question exactly once; a customer app closed (or
killed) right after asking finds the answer on reopening.

Workers are `helpdesk bot` processes on the test's database; Valen is the loopback server.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest

from chatbot.assembly import open_service
from chatbot.config import Settings, load_settings
from chatbot.desk.models import Author, State
from chatbot.desk.service import DeskService
from chatbot.tui import create_app
from chatbot.tui.widgets.chat_panel import ChatPanel
from chatbot.tui.widgets.message_bubble import MessageBubble
from chatbot.web.spawn import dies_with_this_process
from tests import racers
from tests.backends import Backend
from tests.conftest import ROOT
from tests.desk.customers import CONVERSATIONS_EACH, QUESTIONS, ask_as_a_customer
from tests.tui.conftest import Q1, SIZE
from tests.tui.helpers import ask, wait_until
from tests.valen_server import (
    Received,
    Reply,
    ValenTestServer,
    constant,
    probability_reply,
)

STARTUP_S = 60.0
"""Generous: a worker imports the whole engine, and the machine may be busy."""


def until(
    condition: Callable[[], object], *, timeout: float = STARTUP_S, step: float = 0.02
) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(step)


@dataclass
class Bot:
    """A `helpdesk bot` process and its stderr."""

    process: subprocess.Popen[bytes]
    log: Path

    @property
    def name(self) -> str:
        """The worker name it announced (empty until it has). A warning may come first (a slow
        start under load, a setting), so the announcement is looked for, not assumed first."""
        for line in self.log.read_text().splitlines():
            if line.startswith("helpdesk bot ") and ": answering questions" in line:
                return line.split()[2].rstrip(":")
        return ""

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=STARTUP_S)


@pytest.fixture
def start_bot(tmp_path: Path) -> Iterator[Callable[..., Bot]]:
    bots: list[Bot] = []

    def start(db: str | Path, *options: str, env: dict[str, str] | None = None) -> Bot:
        log = tmp_path / f"bot-{len(bots)}.log"
        stderr: IO[bytes] = log.open("wb")
        process = subprocess.Popen(
            [sys.executable, "-m", "chatbot", "bot", "--db", str(db), *options],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=stderr, env={**os.environ, **(env or {})},
            preexec_fn=dies_with_this_process(),  # Never outlives a worker killed mid-test.
        )  # fmt: skip
        stderr.close()
        bot = Bot(process, log)
        bots.append(bot)
        return bot

    yield start
    for bot in bots:
        if bot.process.poll() is None:
            bot.process.kill()
            bot.process.wait(timeout=STARTUP_S)


@pytest.fixture
def db(backend: Backend) -> str | Path:
    """The test's database on each backend: a SQLite file or a PostgreSQL URL."""
    return backend.location


@pytest.fixture
def desk(db: str | Path) -> Iterator[DeskService]:
    service = open_service(load_settings(store={"db": db}))
    yield service
    service.close()


class Stuck:
    """A Valen that does not answer (for a minute) until released; then answers 0.9 at once."""

    def __init__(self) -> None:
        self.released = threading.Event()

    def __call__(self, received: Received, index: int) -> Reply:
        if not self.released.is_set():
            return Reply(status=503, delay_s=60)
        return probability_reply(received, 0.9)


def live(server: ValenTestServer, tmp_path: Path) -> tuple[str, ...]:
    """Engine options for a worker judging live against the loopback server."""
    return ("--replay", "off", "--base-url", server.base_url, "--cache", str(tmp_path / "c.json"))


async def test_a_question_asked_with_no_bot_is_answered_by_a_bot_started_later(
    db: str | Path, desk: DeskService, start_bot: Callable[..., Bot]
) -> None:
    settings = load_settings(store={"db": db})
    app = create_app(settings, mode="chat", agent="ana", timings=False, bot=False)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, Q1, wait=False)
        [question] = desk.messages(1)
        assert question.pending and desk.decisions(1) == []  # Stored; nobody is answering.

        bot = start_bot(db)
        decided_at: list[float] = []

        def decided() -> bool:
            if not decided_at and desk.decisions(1):
                decided_at.append(time.monotonic())
            return bool(decided_at)

        await wait_until(pilot, decided, timeout=STARTUP_S)
        panel = app.screen.query_one(ChatPanel)
        await wait_until(pilot, lambda: any(b.message.author is Author.BOT
                                            for b in panel.query(MessageBubble)))  # fmt: skip
        shown_after = time.monotonic() - decided_at[0]
        # Live, not on a reload; the bound leaves room for a busy machine (updates from
        # another process took 0.1-0.7 s on an idle one; 1.43 s with the suite on both cores).
        assert shown_after < 3.0, f"the answer took {shown_after:.2f} s to show"
    [stored] = desk.decisions(1)
    assert stored.decision.answer is not None and stored.worker == bot.name
    assert bot.stop() == 0
    assert "stopped; 1 answered" in bot.log.read_text()


def test_a_worker_killed_mid_judgment_loses_nothing_and_answers_once(
    db: str | Path, desk: DeskService, tmp_path: Path, start_bot: Callable[..., Bot]
) -> None:
    # Valen hangs while the first worker judges; once it is dead, Valen answers at once.
    valen = Stuck()
    server = ValenTestServer(valen).start()
    try:
        # Short, but not so short that a loaded machine delays a renewal past it: then a worker
        # loses its own lease, takes the question again, and three attempts hand it to a person.
        short_lease = {"HELPDESK_BOT__LEASE_S": "3", "HELPDESK_VALEN__BUDGET_S": "60"}
        first = start_bot(db, *live(server, tmp_path), env=short_lease)
        asked = desk.ask(None, Q1)
        until(lambda: server.count() >= 1)  # The first worker is judging it now.
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(timeout=STARTUP_S)
        valen.released.set()
        assert desk.decisions(asked.conversation.id) == []

        second = start_bot(db, *live(server, tmp_path), env=short_lease)
        until(lambda: desk.conversation(asked.conversation.id).pending == 0)
        assert second.stop() == 0
    finally:
        server.stop()
    conversation_id = asked.conversation.id
    [stored] = desk.decisions(conversation_id)
    assert stored.worker == second.name != first.name
    bots = [m for m in desk.messages(conversation_id) if m.author is Author.BOT]
    assert len(bots) == 1 and bots[0].passage_id == stored.decision.answer.id  # type: ignore[union-attr]
    assert desk.conversation(conversation_id).state is State.BOT


WORKERS = 4
"""Not fewer, though each costs ~0.6 CPU-s (mostly its start-up): the more workers, the more often
two take one question at once. With the take broken into a check, then an update, 2 workers took
5-6 of the 200 questions twice, 3 took 11, 4 took 23-26 (SQLite)."""
CUSTOMERS = 8


def test_four_workers_and_eight_customers_decide_every_question_exactly_once(
    db: str | Path, desk: DeskService, tmp_path: Path, start_bot: Callable[..., Bot]
) -> None:
    server = ValenTestServer(constant(0.9, delay_s=0.02)).start()
    # One passage judged per question (-k 1): the race is over taking questions and recording
    # decisions, not over judging; up to five passages made 640 Valen requests instead of 200.
    options = (*live(server, tmp_path), "--concurrency", "4", "-k", "1")
    try:
        bots = [start_bot(db, *options) for _ in range(WORKERS)]
        until(lambda: all(bot.name for bot in bots))  # All are up before anyone asks.
        context = racers.context()
        barrier = context.Barrier(CUSTOMERS)
        results: multiprocessing.Queue[list[int]] = context.Queue()
        customers = [racers.start(ask_as_a_customer, str(db), barrier, results)
                     for _ in range(CUSTOMERS)]  # fmt: skip
        per_customer = [results.get(timeout=STARTUP_S) for _ in customers]
        for customer in customers:
            customer.join(timeout=STARTUP_S)
            assert customer.exitcode == 0
        asked = sorted(question for mine in per_customer for question in mine)
        assert len(asked) == len(set(asked)) == CUSTOMERS * CONVERSATIONS_EACH * len(QUESTIONS)

        def pending() -> int:
            return sum(c.pending for c in desk.conversations(limit=1000))

        until(lambda: pending() == 0, timeout=120)
        assert [bot.stop() for bot in bots] == [0] * WORKERS
    finally:
        server.stop()

    decisions = [d for c in desk.conversations(limit=1000) for d in desk.decisions(c.id)]
    decided = Counter(d.message_id for d in decisions)
    assert sorted(decided) == asked  # None lost...
    assert set(decided.values()) == {1}  # ...and none decided twice.
    answers = [m for c in desk.conversations(limit=1000) for m in desk.messages(c.id)
               if m.author is Author.BOT]  # fmt: skip
    assert len(answers) == len(asked) and len({m.decision_id for m in answers}) == len(asked)
    # They raced: each worker's decisions span every other's (each decided one before any had
    # decided its last), so all four were deciding at once (first ids 1-29, last 190-200 seen).
    # The customers are not asserted to interleave: SQLite takes one writer at a time and a
    # customer often keeps the lock for a run of its questions (as few as one interleaving seen
    # under load); the barrier is what makes them ask at once.
    spans: dict[str | None, list[int]] = {}
    for decision in sorted(decisions, key=lambda d: d.id):
        spans.setdefault(decision.worker, [decision.id, decision.id])[1] = decision.id
    assert max(first for first, _ in spans.values()) < min(last for _, last in spans.values())
    by_worker = Counter(d.worker for d in decisions)
    assert set(by_worker) == {bot.name for bot in bots}, by_worker


CLOSE_AFTER_ASKING = """
import sys
from chatbot.config import load_settings
from chatbot.tui import create_app
from chatbot.tui.widgets.chat_panel import ChatPanel

app = create_app(load_settings(), mode="chat", agent="ana")

async def ask_and_leave(pilot):
    while not app.screen.query(ChatPanel):
        await pilot.pause(0.01)
    if sys.argv[2] != "early":
        while app.bot is None:  # It starts once the engine is built, after the first screen.
            await pilot.pause(0.01)
    panel = app.screen.query_one(ChatPanel)
    await panel.ask(sys.argv[1])
    print("asked", panel.conversation_id, flush=True)
    if sys.argv[2] in ("close", "early"):
        app.exit()
    else:
        await pilot.pause(3600)  # Killed here.

app.run(headless=True, auto_pilot=ask_and_leave)
"""


@pytest.mark.parametrize("how", ["close", "kill", "early"])
async def test_the_app_closed_right_after_asking_finds_the_answer_on_reopening(
    how: str, db: str | Path, desk: DeskService, tmp_path: Path
) -> None:
    # Valen hangs while the first app's bot judges; after the app is gone, it answers at once.
    # "early": the app is closed before its bot has even started (it starts once the engine is
    # built, after the first screen): the question waits in the store all the same.
    valen = Stuck()
    server = ValenTestServer(valen).start()
    options = {"replay": "off", "base_url": server.base_url, "cache": tmp_path / "c.json"}
    env = {**os.environ, "HELPDESK_DB": str(db), "HELPDESK_BOT__LEASE_S": "1",
           "VALEN_REPLAY": "off", "VALEN_BASE_URL": server.base_url,
           "VALEN_CACHE": str(tmp_path / "c.json")}  # fmt: skip
    try:
        customer = subprocess.Popen(
            [sys.executable, "-c", CLOSE_AFTER_ASKING, Q1, how],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        assert customer.stdout is not None
        assert customer.stdout.readline().split() == [b"asked", b"1"]
        if how != "early":
            until(lambda: server.count() >= 1)  # Its bot took the question and is judging it.
        if how == "kill":
            customer.kill()
        assert customer.wait(timeout=STARTUP_S) == (-signal.SIGKILL if how == "kill" else 0)
        valen.released.set()
        assert desk.messages(1)[0].pending and desk.decisions(1) == []

        settings: Settings = load_settings(store={"db": db}, valen=options, bot={"lease_s": 1})
        reopened = create_app(settings, mode="chat", agent="ana", conversation_id=1)
        async with reopened.run_test(size=SIZE) as pilot:

            def answered() -> bool:
                return any(b.message.author is Author.BOT
                           for b in reopened.screen.query(MessageBubble))  # fmt: skip

            await wait_until(pilot, answered, timeout=30)
    finally:
        server.stop()
    assert len(desk.decisions(1)) == 1
    assert [m.author for m in desk.messages(1)] == [Author.CUSTOMER, Author.BOT]
