"""A database outage under the change feed is said once, and its end once: every app and worker
watches the feed, and each used to log a line at every retry (one a second, for as long as the
outage lasted; in the terminal apps, written over their screen)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from urllib.parse import urlsplit

import pytest

from chatbot.desk.aio import AsyncDesk
from chatbot.desk.service import DeskService
from chatbot.store.interface import ChangeFeed
from chatbot.store.postgres import PostgresStore
from tests.backends import postgres_server


async def until(condition: Callable[[], object], timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def test_an_outage_is_said_once_and_its_end_once(caplog: pytest.LogCaptureFixture) -> None:
    server = postgres_server()
    url = server.take()
    name = urlsplit(url).path.lstrip("/")
    desk = AsyncDesk.open(lambda: DeskService(PostgresStore.open(url)))
    failures = 0
    service = desk._service
    opened = service.open_feed

    def counted_feed() -> ChangeFeed:
        feed = opened()
        wait = feed.wait

        def counting(timeout: float) -> bool:
            nonlocal failures
            try:
                return wait(timeout)
            except Exception:
                failures += 1
                raise

        feed.wait = counting  # type: ignore[method-assign]
        return feed

    service.open_feed = counted_feed  # type: ignore[method-assign]
    admin = server._conn
    try:
        await desk.watch()
        heard: list[int] = []
        desk.subscribe(heard.append)
        with caplog.at_level(logging.WARNING, logger="helpdesk.desk"):
            # The server refuses the database and ends its connections, as a restart would.
            admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false'.encode())
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = %s AND pid <> pg_backend_pid()",
                (name,),
            )
            await until(lambda: failures >= 3)  # Three retries at least, a second apart.
            admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true'.encode())
            await until(lambda: "change feed: back" in caplog.text)
            await until(lambda: heard)  # What was committed meanwhile is looked at again.
        said = [r.getMessage() for r in caplog.records if "change feed" in r.getMessage()]
        assert len(said) == 2, said
        assert said[0].endswith("(retrying every second)") and said[1] == "change feed: back"
    finally:
        admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true'.encode())
        await desk.aclose()
        server.give_back(url)
