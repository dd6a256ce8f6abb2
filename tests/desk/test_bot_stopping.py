"""Stopping a bot worker with questions in flight: it says at once what it waits for, a second
stop (Ctrl+C again) gives them back without the rest of the grace, and its last line says
truthfully what became of a decision the database could not take."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest

from chatbot.desk.aio import AsyncDesk
from chatbot.desk.bot import BotStats, BotWorker
from chatbot.desk.service import DeskService
from chatbot.store.postgres import PostgresStore
from tests.desk.bot_helpers import Q1, Q3, GatedEngine, desk, replay_engine, start, until
from tests.desk.bot_outage_helpers import CountedEngine, Database, Pauses, judged_while_down

__all__ = ["desk"]  # A fixture.


@pytest.fixture
async def postgres_desk(database: Database) -> AsyncIterator[AsyncDesk]:  # noqa: F811
    """A desk on the test's own PostgreSQL database, which `database.down()` takes away."""
    opened = AsyncDesk.open(lambda: DeskService(PostgresStore.open(database.url)))
    await opened.watch()
    yield opened
    await opened.aclose()


async def test_a_second_stop_gives_back_at_once(
    desk: AsyncDesk, caplog: pytest.LogCaptureFixture
) -> None:
    engine = GatedEngine(replay_engine())
    for question in (Q1, Q3):
        await desk.ask(None, question)
    worker = BotWorker(desk, lambda: engine, grace_s=600, poll_s=60)
    task = start(worker)
    await until(lambda: engine.waiting == 2)
    with caplog.at_level(logging.INFO, logger="helpdesk.bot"):
        worker.stop()
        # Said as the first Ctrl+C comes, not after the grace: it was silent for up to 10 s.
        await until(lambda: "stopping" in caplog.text)
        assert [r.getMessage() for r in caplog.records] == [
            "stopping: waiting up to 600 s for 2 questions; Ctrl+C again to give them back now"
        ]
        await asyncio.sleep(0)
        assert not task.done()
        worker.stop()  # Ctrl+C again: the 600 s are not waited for.
        await asyncio.wait_for(task, 5)
    assert worker.stats.given_back == 2
    assert "stopping now: giving back 2 questions" in caplog.text
    assert (await desk.conversation(1)).pending == 1


async def test_a_stop_with_nothing_in_flight_says_nothing(
    desk: AsyncDesk, caplog: pytest.LogCaptureFixture
) -> None:
    worker = BotWorker(desk, replay_engine, grace_s=600, poll_s=60)
    task = start(worker)
    await worker.ready.wait()
    with caplog.at_level(logging.INFO, logger="helpdesk.bot"):
        worker.stop()
        await asyncio.wait_for(task, 5)
    assert caplog.records == []


def test_a_judged_question_whose_decision_was_not_stored_is_not_called_unjudged() -> None:
    held = BotStats(taken=1, unstored=1, unstored_held=True)
    assert held.summary() == (
        "1 judged but not stored (the database was unreachable), held until the lease runs out "
        "to be judged again"
    )
    given = BotStats(taken=1, unstored=1)
    assert given.summary() == (
        "1 judged but not stored (the database was unreachable), given back to be judged again"
    )


async def test_stopping_while_the_database_is_down_says_the_question_was_judged(
    postgres_desk: AsyncDesk,
    database: Database,  # noqa: F811
) -> None:
    # The worker judged it, the database went away before the decision was stored, and Ctrl+C
    # came while it waited: "1 unjudged, held until the lease runs out" denied the judgment.
    engine = CountedEngine()
    pauses = Pauses()
    worker, task, _ = await judged_while_down(postgres_desk, database, engine, pauses, grace_s=0)
    worker.stop()
    await asyncio.wait_for(task, 10)
    assert worker.stats.summary() == (
        "1 judged but not stored (the database was unreachable), held until the lease runs out "
        "to be judged again"
    )
