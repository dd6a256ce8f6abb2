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
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
import pytest

from chatbot.desk.aio import AsyncDesk
from chatbot.desk.bot import BotWorker
from chatbot.desk.clock import utc_now
from chatbot.desk.service import DeskService
from chatbot.engine.models import Decision
from chatbot.store.interface import StoreError
from chatbot.store.postgres import PostgresStore
from tests.backends import Backend, PostgresServer, postgres_server
from tests.desk.test_bot import Q1, GatedEngine, replay_engine

LEASE_S = 60.0
"""Long enough that no heartbeat (every lease_s/3, in real time) runs during a test."""


class CountedEngine(GatedEngine):
    """The gated real engine, counting the judgments asked of it (each one is Valen's work)."""

    def __init__(self) -> None:
        super().__init__(replay_engine())
        self.asked = 0

    async def answer(self, question: str) -> Decision:
        self.asked += 1
        return await super().answer(question)


class Pauses:
    """The worker's sleep: records each wait asked for and returns when the test lets it."""

    def __init__(self) -> None:
        self.asked: list[float] = []
        self._go = asyncio.Semaphore(0)

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)
        await self._go.acquire()

    def release(self) -> None:
        self._go.release()


class Later:
    """The store's clock, `ahead` seconds on from the real time: leases run out when told to."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def __call__(self) -> datetime:
        return utc_now() + timedelta(seconds=self.ahead)


@dataclass
class Database:
    """The test's own database on the test server, and the server refusing it on demand."""

    server: PostgresServer
    url: str

    def down(self) -> None:
        name = urlsplit(self.url).path.lstrip("/")
        admin = self.server._conn
        admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false'.encode())
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        )

    def up(self) -> None:
        name = urlsplit(self.url).path.lstrip("/")
        self.server._conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true'.encode())

    async def question(self, question_id: int) -> tuple[int, str | None] | None:
        """The question's attempts and lease holder, read as another process would."""

        def read() -> Any:
            with psycopg.connect(self.url, autocommit=True) as conn:
                return conn.execute(
                    "SELECT attempts, lease_owner FROM questions WHERE entry_id = %s",
                    (question_id,),
                ).fetchone()

        row = await asyncio.to_thread(read)
        return None if row is None else (row[0], row[1])


@pytest.fixture
def database() -> Iterator[Database]:
    server = postgres_server()
    db = Database(server, server.take())
    try:
        yield db
    finally:
        db.up()
        server.give_back(db.url)


@pytest.fixture
def clock() -> Later:
    return Later()


@pytest.fixture
async def desk(database: Database, clock: Later) -> AsyncIterator[AsyncDesk]:
    opened = AsyncDesk.open(lambda: DeskService(PostgresStore.open(database.url, clock=clock)))
    await opened.watch()
    yield opened
    await opened.aclose()


async def until(condition: Callable[[], object], timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def judged_while_down(
    desk: AsyncDesk, database: Database, engine: CountedEngine, pauses: Pauses, **options: Any
) -> tuple[BotWorker, asyncio.Task[None], int]:
    """A worker judges Q1; the database goes away before the judgment ends; returns once the
    worker, unable to store the decision, waits to try again (the old worker let it go)."""
    asked = await desk.ask(None, Q1)
    worker = BotWorker(desk, lambda: engine, lease_s=LEASE_S, sleep=pauses, **options)
    task = asyncio.create_task(worker.run())
    await until(lambda: engine.waiting == 1)
    database.down()
    engine.gate.set()
    await until(lambda: pauses.asked or not worker._in_flight)
    assert pauses.asked, "the decision that could not be stored was thrown away"
    assert list(worker._in_flight) == [asked.message.id]  # Still its: nobody else may take it.
    return worker, task, asked.conversation.id


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
        await until(lambda: worker.stats.outcomes)
        worker.stop()
        await asyncio.wait_for(task, 10)
    assert worker.stats.outcomes == {"lost": 1}  # Its decision is not stored over the rival's.
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
