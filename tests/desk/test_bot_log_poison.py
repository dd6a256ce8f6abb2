"""`helpdesk bot`'s line for a question taken too many times says what the worker knows: a tester
saw "taken 3 times, never judged" for a question judged each time, whose decision the database
would not take (a table was locked). The database refuses here as it did there, by a trigger on
`decisions` that fails every insert at once, on every backend."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import psycopg
import pytest

from chatbot.desk.aio import AsyncDesk
from chatbot.desk.bot import BotWorker
from chatbot.desk.models import State
from chatbot.engine.models import Reason
from tests.backends import Backend
from tests.desk.bot_helpers import Q1, replay_engine, start, stopped, until

LEASE_S = 0.5
"""Short, so the refused question comes back to the worker soon: it waits on the lease's end."""


async def no_pause(_seconds: float) -> None:
    """The worker's wait between tries to store a decision (the test's own: none)."""


def _refuse_decisions(backend: Backend, *, refuse: bool) -> None:
    """Make the database fail (or stop failing) every new decision, as a lock held too long
    did."""
    if backend.name == "postgresql":
        with psycopg.connect(str(backend.location), autocommit=True) as conn:
            if refuse:
                conn.execute(
                    "CREATE FUNCTION refuse_decisions() RETURNS trigger LANGUAGE plpgsql AS"
                    " $$ BEGIN RAISE EXCEPTION 'table decisions is locked'; END $$"
                )
                conn.execute(
                    "CREATE TRIGGER refuse_decisions BEFORE INSERT ON decisions"
                    " FOR EACH ROW EXECUTE FUNCTION refuse_decisions()"
                )
            else:
                conn.execute("DROP TRIGGER IF EXISTS refuse_decisions ON decisions")
                conn.execute("DROP FUNCTION IF EXISTS refuse_decisions()")
        return
    with sqlite3.connect(Path(backend.location), isolation_level=None) as lite:
        if refuse:
            lite.execute(
                "CREATE TRIGGER refuse_decisions BEFORE INSERT ON decisions"
                " BEGIN SELECT RAISE(ABORT, 'table decisions is locked'); END"
            )
        else:
            lite.execute("DROP TRIGGER IF EXISTS refuse_decisions")
    lite.close()


@pytest.fixture
async def desk(backend: Backend) -> AsyncIterator[AsyncDesk]:
    opened = AsyncDesk.open(lambda: backend.service(max_attempts=3))
    await opened.watch()
    yield opened
    await opened.aclose()


@pytest.fixture
def refused(backend: Backend, desk: AsyncDesk) -> Iterator[None]:
    """Decisions refused for the test (the database is made and migrated by then); the database
    is left as it was, for the next test that uses it."""
    _refuse_decisions(backend, refuse=True)
    try:
        yield
    finally:
        _refuse_decisions(backend, refuse=False)


def bot_failed_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "(bot-failed)" in r.getMessage()]


@pytest.mark.usefixtures("refused")
async def test_a_question_judged_each_time_is_not_said_never_judged(
    desk: AsyncDesk, caplog: pytest.LogCaptureFixture
) -> None:
    asked = await desk.ask(None, Q1)
    worker = BotWorker(desk, replay_engine, lease_s=LEASE_S, poll_s=60, sleep=no_pause)
    with caplog.at_level(logging.INFO, logger="helpdesk.bot"):
        task = start(worker)
        await until(lambda: worker.stats.settled == 1, timeout=60)
        await stopped(worker, task)
    assert worker.stats.outcomes == {"escalated": 1}
    # Each take was judged (the engine answered it); each decision was refused.
    assert sum("cannot store its decision" in r.getMessage() for r in caplog.records) == 3
    assert bot_failed_lines(caplog) == [
        f"question {asked.message.id} (conversation {asked.conversation.id}): escalated "
        "(bot-failed): taken 3 times, judged each time, no decision stored"
    ]
    conversation = await desk.conversation(asked.conversation.id)
    assert (conversation.state, conversation.reason) == (State.WAITING, Reason.BOT_FAILED)
    assert await desk.decisions(asked.conversation.id) == []


@pytest.mark.usefixtures("refused")
async def test_a_worker_says_how_many_of_the_takes_it_judged(
    desk: AsyncDesk, caplog: pytest.LogCaptureFixture
) -> None:
    """Two workers took it and died; this one judged it once and could not store the decision.
    What the others did, it cannot tell."""
    asked = await desk.ask(None, Q1)
    for dead in ("w1", "w2"):  # Each took it and died at once: its lease is already over.
        assert [q.id for q in await desk.lease(dead, limit=1, lease_s=0)] == [asked.message.id]
    worker = BotWorker(desk, replay_engine, lease_s=LEASE_S, poll_s=60, sleep=no_pause)
    with caplog.at_level(logging.INFO, logger="helpdesk.bot"):
        task = start(worker)
        await until(lambda: worker.stats.settled == 1, timeout=60)
        await stopped(worker, task)
    assert bot_failed_lines(caplog) == [
        f"question {asked.message.id} (conversation {asked.conversation.id}): escalated "
        "(bot-failed): taken 3 times, judged 1 time by this worker, no decision stored"
    ]
    assert not worker._judged_unstored  # Said once, then forgotten.
