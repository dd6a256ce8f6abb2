"""A question another bot worker took over is said as such, never as lost. A tester's worker held
a question through an outage longer than its lease; another worker took it and escalated it (the
customer got exactly one escalation), yet the first logged `question 48 (conversation 4): lost:
low-score` and, on SIGTERM, `stopped; 1 lost`: to an operator, a customer's question vanished.

Leases lapse by the store's clock, moved by the test (`Later`); the outage is the real server's
refusing the test's database, or a store whose write lands and whose answer is lost."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from chatbot.desk.aio import AsyncDesk
from chatbot.desk.bot import BotStats, BotWorker
from chatbot.desk.clock import utc_now
from chatbot.desk.service import DeskService
from chatbot.store.interface import StoreError
from chatbot.store.postgres import PostgresStore
from tests.backends import Backend
from tests.desk.bot_helpers import Q1, Q3, REFUSED, GatedEngine, replay_engine, start, stopped
from tests.desk.bot_outage_helpers import (
    LEASE_S,
    CountedEngine,
    Database,
    Pauses,
    judged_while_down,
    until,
)

RIVAL = "helpdesk.bot.rival"
"""The other worker's logger: its lines apart from the first worker's (`helpdesk.bot`)."""


class Later:
    """The store's clock, `ahead` seconds on from the real time: leases run out when told to."""

    def __init__(self, ahead: float = 0.0) -> None:
        self.ahead = ahead

    def __call__(self) -> datetime:
        return utc_now() + timedelta(seconds=self.ahead)


def lost(said: list[str]) -> list[str]:
    """The worker's own lines that say "lost" (not the driver's words, which the line that could
    not store a decision quotes)."""
    return [line for line in said if "lost" in line and "cannot store" not in line]


def lines(caplog: pytest.LogCaptureFixture, logger: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger]


@pytest.fixture
def worker_lines(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    with caplog.at_level(logging.INFO, logger="helpdesk.bot"):
        yield caplog


async def test_a_question_taken_over_during_an_outage_is_not_called_lost(
    database: Database, worker_lines: pytest.LogCaptureFixture
) -> None:
    desk = AsyncDesk.open(lambda: DeskService(PostgresStore.open(database.url)))
    rival_desk = AsyncDesk.open(
        lambda: DeskService(PostgresStore.open(database.url, clock=Later(LEASE_S + 1)))
    )
    try:
        pauses = Pauses()
        worker, task, conversation = await judged_while_down(
            desk, database, CountedEngine(), pauses, poll_s=60, concurrency=1
        )
        [question] = list(worker._in_flight)
        database.up()
        # The outage outlasted the lease: another worker takes the question and settles it.
        rival = BotWorker(rival_desk, replay_engine, lease_s=LEASE_S, poll_s=0.05,
                          log=logging.getLogger(RIVAL))  # fmt: skip
        rival_task = start(rival)
        await until(lambda: rival.stats.settled == 1)
        await stopped(rival, rival_task)
        pauses.release()  # The first worker finds the database back, and the question not its.
        await until(lambda: not worker._in_flight)
        await stopped(worker, task)
    finally:
        await rival_desk.aclose()
        await desk.aclose()
    assert rival.stats.summary() == "1 answered"
    assert worker.stats.summary() == "1 taken over by another worker"
    assert worker.stats.settled == 0  # Settled by the other: not counted twice.
    said = lines(worker_lines, "helpdesk.bot")
    [settled] = lines(worker_lines, RIVAL)
    assert settled.startswith(f"question {question} (conversation {conversation}): answered")
    assert (
        f"question {question}: taken over by another worker while the database was away; this "
        "worker's decision is not stored"
    ) in said
    assert f"question {question} (conversation {conversation}): taken over by another worker" in (
        said
    )
    assert not lost(said), said


async def test_a_judgment_that_outlasts_its_lease_is_taken_over_not_lost(
    backend: Backend, worker_lines: pytest.LogCaptureFixture
) -> None:
    clock = Later()
    desk = AsyncDesk.open(lambda: backend.service(clock))
    rival_desk = AsyncDesk.open(lambda: backend.service(clock))
    try:
        engine = GatedEngine(replay_engine())
        asked = await desk.ask(None, Q3)
        worker = BotWorker(desk, lambda: engine, lease_s=LEASE_S, poll_s=60, concurrency=1)
        task = start(worker)
        await until(lambda: engine.waiting == 1)
        clock.ahead = LEASE_S + 1  # Judging outlasted the lease (no heartbeat came in time).
        rival = BotWorker(rival_desk, replay_engine, lease_s=LEASE_S, poll_s=0.05,
                          log=logging.getLogger(RIVAL))  # fmt: skip
        rival_task = start(rival)
        await until(lambda: rival.stats.settled == 1)
        await stopped(rival, rival_task)
        engine.gate.set()  # The first worker's decision comes too late to be stored.
        await until(lambda: not worker._in_flight)
        await stopped(worker, task)
        [stored] = await desk.decisions(asked.conversation.id)
    finally:
        await rival_desk.aclose()
        await desk.aclose()
    assert stored.worker == rival.name  # The customer's one escalation is the other worker's.
    question, conversation = asked.message.id, asked.conversation.id
    assert f"question {question} (conversation {conversation}): escalated: low-score" in lines(
        worker_lines, RIVAL
    )
    said = lines(worker_lines, "helpdesk.bot")
    assert f"question {question} (conversation {conversation}): taken over by another worker" in (
        said
    )
    assert not lost(said), said
    assert worker.stats.summary() == "1 taken over by another worker"


class AnswerLost:
    """A store whose first decision is written and committed, and whose answer the outage then
    loses: the worker is told the database could not be reached, as PostgreSQL's driver says it."""

    def __init__(self, service: DeskService) -> None:
        self._real = service.store
        self.lost = 0
        service.store = self

    def record_decision(self, question_id: int, **kwargs: Any) -> Any:
        result = self._real.record_decision(question_id, **kwargs)
        if not self.lost:
            self.lost += 1
            raise StoreError(REFUSED)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


async def test_a_decision_whose_write_landed_after_all_is_counted_as_stored(
    tmp_path: Path, worker_lines: pytest.LogCaptureFixture
) -> None:
    # No longer held when the database answered again, it was not taken over: this worker's own
    # write had landed. Neither "lost" nor "taken over by another worker" would be true.
    desk = AsyncDesk.open(Backend("sqlite", tmp_path / "bot.sqlite3").service)
    AnswerLost(desk._service)
    pauses = Pauses()
    worker = BotWorker(desk, replay_engine, lease_s=LEASE_S, poll_s=60, sleep=pauses)
    try:
        asked = await desk.ask(None, Q1)
        task = start(worker)
        await until(lambda: pauses.asked)
        pauses.release()
        await until(lambda: not worker._in_flight)
        await stopped(worker, task)
        [stored] = await desk.decisions(asked.conversation.id)
    finally:
        await desk.aclose()
    assert stored.worker == worker.name
    assert worker.stats.summary() == "1 answered"
    said = lines(worker_lines, "helpdesk.bot")
    assert (
        f"question {asked.message.id}: its decision was stored after all (the write that failed "
        "had landed)"
    ) in said
    assert said[-1].startswith(
        f"question {asked.message.id} (conversation {asked.conversation.id}): answered"
    )
    assert not [line for line in said if "taken over" in line or "lost" in line], said


def test_the_last_line_counts_questions_taken_over_apart() -> None:
    # "stopped; 1 lost" was the tester's last line.
    stats = BotStats(taken=3, outcomes={"escalated": 1, "answered": 1}, taken_over=1)
    assert stats.summary() == "1 answered, 1 escalated, 1 taken over by another worker"
    assert stats.settled == 2
