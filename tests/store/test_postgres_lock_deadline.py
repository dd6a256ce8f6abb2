"""A table locked for longer than a call's deadline (a `LOCK TABLE entries IN ACCESS EXCLUSIVE
MODE` left open in psql): every call gives up at its deadline, and the server's backends serving
those calls go away while the lock is still held.

Before, the deadline shut the socket on our side only: the server's backend went on waiting for
the lock, and every call tried again on a new connection left one more behind (a tester counted
31 waiting on one database), so a lock held a few minutes would use up the server's connections.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar
from urllib.parse import urlsplit

import psycopg
import pytest

from chatbot.assembly import open_service
from chatbot.config import load_settings
from chatbot.dburl import display
from chatbot.desk.aio import AsyncDesk, unreachable
from chatbot.store.interface import StoreError
from chatbot.store.postgres import Link, PostgresStore
from tests.backends import postgres_server

T = TypeVar("T")
DEADLINE_S = 1.0
CALLS = 4
GONE_WITHIN_S = 10.0
"""How long the backends may take to go once their calls failed: far less than the lock is held
(until the test ends), far more than a cancel or a server timeout takes."""
GIVE_UP_S = 60.0
"""How long a call may take to come back at all: only one that never returns fails here."""


@pytest.fixture
def locked() -> Iterator[tuple[str, psycopg.Connection[Any], psycopg.Connection[Any]]]:
    """A database of its own with a conversation in it; the connection that will hold the lock
    on `entries` (not yet taken), and one to watch `pg_stat_activity` from."""
    server = postgres_server()
    url = server.create()
    store = PostgresStore.open(url)
    store.create_conversation()
    store.close()
    locker = psycopg.connect(url)  # Not autocommit: the lock is held until rollback.
    observer = psycopg.connect(url, autocommit=True)
    try:
        yield url, locker, observer
    finally:
        locker.close()
        observer.close()
        server.drop(url)


def _lock_entries(locker: psycopg.Connection[Any]) -> None:
    locker.execute("LOCK TABLE entries IN ACCESS EXCLUSIVE MODE")


def _backends(observer: psycopg.Connection[Any], url: str, *, waiting: bool) -> list[int]:
    """The server processes connected to the test's database for the help desk (waiting on a
    lock only, with `waiting`), the test's own two connections aside."""
    rows = observer.execute(
        "SELECT pid FROM pg_stat_activity WHERE datname = %s AND application_name = 'helpdesk'"
        " AND (NOT %s OR wait_event_type = 'Lock')",
        (urlsplit(url).path.lstrip("/"), waiting),
    ).fetchall()
    return [int(pid) for (pid,) in rows]


def _eventually(condition: Callable[[], bool], timeout: float) -> bool:
    """Whether `condition` holds within `timeout` seconds (polled)."""
    give_up = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > give_up:
            return False
        time.sleep(0.05)
    return True


def _returns(call: Callable[[], T]) -> T:
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(call).result(timeout=GIVE_UP_S)


def test_calls_stuck_on_a_lock_fail_at_the_deadline_and_leave_no_backend_waiting(
    locked: tuple[str, psycopg.Connection[Any], psycopg.Connection[Any]],
) -> None:
    url, locker, observer = locked
    store = PostgresStore.open(url, timeout_s=DEADLINE_S)
    try:
        [conversation] = store.conversations()
        _lock_entries(locker)
        for n in range(CALLS):
            read = n % 2 == 0
            started = time.monotonic()
            with pytest.raises(StoreError) as failed:
                if read:
                    _returns(lambda: store.entries(conversation.id))
                else:
                    _returns(lambda: store.add_note(conversation.id, agent="ana", text="hi"))
            doing = "cannot read" if read else "cannot write"
            assert str(failed.value) == f"{display(url)}: {doing}: no answer in {DEADLINE_S:g} s"
            assert time.monotonic() - started < DEADLINE_S + 2.0  # Not queued behind the lock.
        # The lock is still held, and no backend of ours waits on it any more: each call was
        # ended on the server, not only given up on here.
        assert _eventually(lambda: not _backends(observer, url, waiting=True), GONE_WITHIN_S), (
            _backends(observer, url, waiting=True)
        )
        assert len(_backends(observer, url, waiting=False)) <= 1  # The store's own connection.
        locker.rollback()
        # The same store carries on; the note reported failed was never written.
        assert [e.id for e in _returns(lambda: store.entries(conversation.id))] == []
    finally:
        store.close()


def test_a_call_cut_at_its_deadline_ends_on_the_server_too(
    locked: tuple[str, psycopg.Connection[Any], psycopg.Connection[Any]],
) -> None:
    # A statement the server would not end before the deadline (a transaction's later one, its
    # own timeout running past the call's): the client cuts the connection, and the server sees
    # its client gone, so the backend ends instead of waiting on for the lock.
    url, locker, observer = locked
    link = Link(url, timeout_s=DEADLINE_S)
    try:
        conn = link.connection()
        conn.execute("SET statement_timeout = 0")
        pid = conn.info.backend_pid
        _lock_entries(locker)

        def stuck() -> None:
            with link.watched(conn):
                conn.execute("SELECT count(*) FROM entries")

        with pytest.raises(psycopg.OperationalError):
            _returns(stuck)
        assert link.timed_out
        assert _eventually(
            lambda: pid not in _backends(observer, url, waiting=False), GONE_WITHIN_S
        )
    finally:
        link.drop()


async def test_desk_calls_queued_behind_a_stuck_one_fail_with_it_not_after_it(
    locked: tuple[str, psycopg.Connection[Any], psycopg.Connection[Any]],
) -> None:
    # The desk runs one call at a time. Before, each call queued behind one stuck on the lock
    # waited for that one's deadline and then its own: an agent's reply behind a queue read, a
    # bot's poll and a presence tick was told nothing for a minute and a half.
    url, locker, _observer = locked
    settings = load_settings(store={"db": url, "timeout_s": DEADLINE_S})
    desk = AsyncDesk.open(lambda: open_service(settings))
    try:
        [conversation] = await desk.conversations()
        _lock_entries(locker)
        loop = asyncio.get_running_loop()
        started = loop.time()
        calls = [desk.queue(), desk.changes(after=0), desk.bot_backlog(), desk.claims()]
        calls += [desk.add_note(conversation.id, agent="ana", text="hi"), desk.queue()]
        failed = await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), GIVE_UP_S)
        took = loop.time() - started
        assert all(isinstance(e, StoreError) and unreachable(e) for e in failed), failed
        # About one deadline for all of them (one was stuck, the others waited behind it),
        # where each used to take its own in turn.
        assert took < 2 * DEADLINE_S + 1.0, took
        locker.rollback()
        # Asked for after the failure, a call is tried again: the desk carries on.
        assert [c.id for c in await desk.conversations()] == [conversation.id]
        page = await desk.page(conversation.id)
        assert not page.entries  # The note reported failed was not written later either.
    finally:
        await desk.aclose()
