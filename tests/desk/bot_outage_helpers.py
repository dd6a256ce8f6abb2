"""For the bot worker's tests with PostgreSQL going away: the test's own database refused on
demand, a counted engine, the worker's sleeps let go by the test."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import psycopg

from chatbot.desk.aio import AsyncDesk
from chatbot.desk.bot import BotWorker
from chatbot.engine.models import Decision
from tests.backends import PostgresServer
from tests.desk.bot_helpers import Q1, GatedEngine, replay_engine

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
