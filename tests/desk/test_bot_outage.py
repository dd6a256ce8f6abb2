"""A decision made while the database is away is kept and stored when it is back, not thrown away:
PostgreSQL restarting while a bot judged cost the customer a lease's wait, Valen a second judgment
and the question one of its attempts (three short restarts sent an answerable question to a person
as `bot-failed`, "taken 3 times, never judged").

The outage is the real server's: it refuses the test's database and ends its connections, as a
restart does. The worker's waits between tries are the test's (`Pauses`), so no test waits them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from chatbot.desk.aio import AsyncDesk
from chatbot.desk.bot import BotWorker
from chatbot.desk.clock import utc_now
from chatbot.desk.service import DeskService
from chatbot.store.interface import StoreError
from chatbot.store.postgres import PostgresStore
from tests.backends import Backend
from tests.desk.bot_helpers import Q1
from tests.desk.bot_outage_helpers import (
    LEASE_S,
    CountedEngine,
    Database,
    Pauses,
    judged_while_down,
    until,
)


class Later:
    """The store's clock, `ahead` seconds on from the real time: leases run out when told to."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def __call__(self) -> datetime:
        return utc_now() + timedelta(seconds=self.ahead)


@pytest.fixture
def clock() -> Later:
    return Later()


@pytest.fixture
async def desk(database: Database, clock: Later) -> AsyncIterator[AsyncDesk]:
    opened = AsyncDesk.open(lambda: DeskService(PostgresStore.open(database.url, clock=clock)))
    await opened.watch()
    yield opened
    await opened.aclose()


async def test_a_decision_made_during_a_restart_is_stored_when_the_database_is_back(
    desk: AsyncDesk, database: Database, caplog: pytest.LogCaptureFixture
) -> None:
    engine = CountedEngine()
    pauses = Pauses()
    with caplog.at_level(logging.INFO, logger="helpdesk.bot"):
        worker, task, conversation = await judged_while_down(
            desk, database, engine, pauses, poll_s=60
        )
        pauses.release()  # Still down: it waits longer, and keeps the decision.
        await until(lambda: len(pauses.asked) == 2)
        assert pauses.asked[1] > pauses.asked[0]
        database.up()
        pauses.release()
        await until(lambda: worker.stats.settled == 1)
        worker.stop()
        await asyncio.wait_for(task, 10)
    assert worker.stats.outcomes == {"answered": 1}
    assert engine.asked == 1  # Valen was not asked again.
    [stored] = await desk.decisions(conversation)
    assert stored.worker == worker.name
    assert (await desk.conversation(conversation)).pending == 0
    said = [r.getMessage() for r in caplog.records if "cannot store" in r.getMessage()]
    assert len(said) == 1, said  # Said once per question, not at every try.


async def test_a_decision_is_dropped_when_another_worker_took_the_question_meanwhile(
    desk: AsyncDesk, database: Database, caplog: pytest.LogCaptureFixture
) -> None:
    engine = CountedEngine()
    pauses = Pauses()
    with caplog.at_level(logging.INFO, logger="helpdesk.bot"):
        worker, task, conversation = await judged_while_down(
            desk, database, engine, pauses, poll_s=60
        )
        database.up()
        # The outage outlasted the lease, and another worker took the question first.
        rival_clock = Later()
        rival_clock.ahead = LEASE_S + 1
        rival = AsyncDesk.open(
            lambda: DeskService(PostgresStore.open(database.url, clock=rival_clock))
        )
        try:
            [taken] = await rival.lease("rival", limit=1, lease_s=LEASE_S)
        finally:
            await rival.aclose()
        pauses.release()
        await until(lambda: worker.stats.taken_over)
        worker.stop()
        await asyncio.wait_for(task, 10)
    # Its decision is not stored over the rival's; the question is the rival's, not lost.
    assert (worker.stats.outcomes, worker.stats.taken_over) == ({}, 1)
    assert await desk.decisions(conversation) == []
    assert await database.question(taken.id) == (2, "rival")
    assert engine.asked == 1


async def test_an_outage_longer_than_the_lease_does_not_judge_the_question_twice(
    desk: AsyncDesk, database: Database, clock: Later
) -> None:
    engine = CountedEngine()
    pauses = Pauses()
    worker, task, conversation = await judged_while_down(
        desk, database, engine, pauses, poll_s=0.02
    )
    [question_id] = list(worker._in_flight)
    database.up()
    clock.ahead = LEASE_S + 1  # Its lease ran out while away: its own poll takes the question.

    async def retaken() -> bool:
        return await database.question(question_id) == (2, worker.name)

    async with asyncio.timeout(10):
        while not await retaken():
            await asyncio.sleep(0.01)
    pauses.release()
    await until(lambda: worker.stats.settled == 1)
    worker.stop()
    await asyncio.wait_for(task, 10)
    assert engine.asked == 1  # The judgment it kept is the one stored; none started again.
    assert worker.stats.outcomes == {"answered": 1}
    assert len(await desk.decisions(conversation)) == 1


class RefusedDecisions:
    """A store that answers everything but refuses to store decisions, as a database refuses a
    bad write (not an outage: every other call works)."""

    def __init__(self, service: DeskService) -> None:
        self._real = service.store
        self.refused = 0
        service.store = self

    def record_decision(self, question_id: int, **kwargs: Any) -> Any:
        self.refused += 1
        raise StoreError("helpdesk.sqlite3: cannot write: CHECK constraint failed")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


async def test_a_write_refused_while_the_database_answers_is_not_tried_forever(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    desk = AsyncDesk.open(Backend("sqlite", tmp_path / "bot.sqlite3").service)
    refusing = RefusedDecisions(desk._service)
    engine = CountedEngine()
    engine.gate.set()
    pauses = Pauses()
    worker = BotWorker(desk, lambda: engine, lease_s=LEASE_S, poll_s=60, sleep=pauses)
    try:
        with caplog.at_level(logging.INFO, logger="helpdesk.bot"):
            await desk.ask(None, Q1)
            task = asyncio.create_task(worker.run())
            while not (refusing.refused and not worker._in_flight):
                # Each wait let go of at once; a worker that tried forever never gets here.
                if len(pauses.asked) > 10:
                    pytest.fail(f"tried to store the decision {refusing.refused} times")
                pauses.release()
                await asyncio.sleep(0.01)
            worker.stop()
            await asyncio.wait_for(task, 10)
        assert 1 < refusing.refused <= 5
        assert worker.stats.settled == 0  # Left as before: its lease runs out, and it is retried.
        assert "CHECK constraint failed" in caplog.text
    finally:
        await desk.aclose()
