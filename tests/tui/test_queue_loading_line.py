"""Until the console's first read of the queue comes back (0.05-0.45 s at 3,340 waiting, on every
start, longer on PostgreSQL), the queue says it is reading it: it said "Nobody is waiting.
Escalated questions appear here." meanwhile, exactly when an agent looks. The read is held on an
event the test sets, so the moment before it is there to look at."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import httpx
import pytest

from chatbot.config import Settings
from chatbot.desk.models import QueueItem
from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.queue_list import QueueList
from tests.tui.conftest import FrozenClock
from tests.tui.desk_helpers import waiting
from tests.tui.helpers import agent_app, flat, in_chinese, queue_rows, screen_text, wait_until

READING = {"en": "Reading the queue…", "zh": "正在读取转人工队列…"}
NOBODY = {"en": "Nobody is waiting.", "zh": "没有人在等待。"}


def held_first_read(app: HelpDeskApp) -> asyncio.Event:
    """The desk's queue reads wait for the returned event (the first, the console's, at start)."""
    desk = app.services.desk
    read = desk.queue
    release = asyncio.Event()

    async def slow_queue(*, agent: str | None = None) -> list[QueueItem]:
        await release.wait()
        return await read(agent=agent)

    desk.queue = slow_queue  # type: ignore[method-assign]
    return release


def text(app: HelpDeskApp) -> str:
    return flat(screen_text(app))


async def shown_while_held(app: HelpDeskApp, condition: Callable[[], bool]) -> None:
    """Let the app run until `condition` holds, while the queue's read is held: `wait_until`'s
    pause waits for every widget to be idle, and the queue is not (it waits on its read)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5.0
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("condition not met within 5 s")
        await asyncio.sleep(0.02)  # The app's turns, as `wait_until`'s pause gives them.


@pytest.mark.parametrize(
    ("locale", "size"), [("en", (80, 24)), ("en", (120, 36)), ("zh", (60, 20))]
)
async def test_the_queue_says_it_is_reading_until_its_first_read_is_back(
    settings: Settings,
    http: httpx.AsyncClient,
    clock: FrozenClock,
    other: DeskService,
    locale: str,
    size: tuple[int, int],
) -> None:
    questions = ["Helmet", "Refund"]
    for question in questions:
        waiting(other, question)
    app = agent_app(in_chinese(settings) if locale == "zh" else settings, http, clock)
    release = held_first_read(app)
    async with app.run_test(size=size) as pilot:
        try:
            await shown_while_held(app, lambda: READING[locale] in text(app))
            assert NOBODY[locale] not in text(app)
            assert queue_rows(app) == []
            # The focus is in the queue meanwhile: the console's keys work before the rows come.
            queue = app.screen.query_one(QueueList)
            assert app.focused is not None and queue in app.focused.ancestors
        finally:
            release.set()  # Else the app waits on the read as it closes.
        await wait_until(pilot, lambda: len(queue_rows(app)) == len(questions))
        await wait_until(pilot, lambda: all(q in text(app) for q in questions))
        assert READING[locale] not in text(app) and NOBODY[locale] not in text(app)
        assert app.focused is app.screen.query_one("#queue-table")


async def test_an_empty_queue_says_nobody_is_waiting_once_read(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock
) -> None:
    app = agent_app(settings, http, clock)
    release = held_first_read(app)
    async with app.run_test(size=(80, 24)) as pilot:
        try:
            await shown_while_held(app, lambda: READING["en"] in text(app))
            assert NOBODY["en"] not in text(app)
        finally:
            release.set()
        await wait_until(pilot, lambda: NOBODY["en"] in text(app))
        assert READING["en"] not in text(app)
