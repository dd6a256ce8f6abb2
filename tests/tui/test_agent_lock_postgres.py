"""The agent console while PostgreSQL holds the conversation log locked (a psql session's `LOCK
TABLE entries IN ACCESS EXCLUSIVE MODE`): nothing fails at once, nothing answers.

A tester found the consoles silent for the whole lock (90 s): a reply's Enter said nothing,
Escape did nothing, the queue's Enter opened nothing and said nothing, and the team view said
"Nobody holds a claim." while two agents held claims. The desk ran each call in turn, each
waiting its whole deadline, and the console's handlers awaited them, taking no key meanwhile.

Keys go in through the driver, as a terminal sends them: Pilot's `press` waits for every widget
to be idle, which is what a console stuck on the desk is not.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from textual import events

from chatbot.assembly import open_service
from chatbot.config import load_settings
from chatbot.desk.models import Author, ChatMessage
from chatbot.tui import HelpDeskApp, create_app
from chatbot.tui.widgets.agent_console import AgentConsole
from chatbot.tui.widgets.queue_list import QueueList
from tests.backends import postgres_server
from tests.tui.conftest import SIZE
from tests.tui.helpers import flat, screen_text

DEADLINE_S = 2.0
GIVE_UP_S = 30.0
TROUBLE = "The desk's database cannot be reached: retrying. Nothing is lost."
REPLY = "Your refund is on its way"


@pytest.fixture(autouse=True)
def busy_console(monkeypatch: pytest.MonkeyPatch) -> None:
    """The console's periodic read (every 5 s: how long questions wait for a bot) runs every
    0.2 s here, so that, as on a console left open through a long lock, reads pile up behind
    the one stuck there."""
    monkeypatch.setattr(QueueList, "BOT_CHECK_S", 0.2)


@pytest.fixture
def desk_db() -> Iterator[tuple[str, int, psycopg.Connection[Any]]]:
    """A database of its own holding one conversation claimed by ana, and a connection to take
    the lock on its log with (not yet taken)."""
    server = postgres_server()
    url = server.create()
    desk = open_service(load_settings(store={"db": url}))
    try:
        conversation = desk.start_conversation().id
        desk.talk_to_person(conversation)
        desk.ask(conversation, "Where is my refund?")
        desk.claim(conversation, agent="ana")
    finally:
        desk.close()
    locker = psycopg.connect(url)  # Not autocommit: the lock is held until rollback.
    try:
        yield url, conversation, locker
    finally:
        locker.close()
        server.drop(url)


def console_app(url: str) -> HelpDeskApp:
    settings = load_settings(store={"db": url, "timeout_s": DEADLINE_S})
    return create_app(settings, mode="agent", timings=False, bot=False, agent="ana")


def keys(app: HelpDeskApp, *pressed: str) -> None:
    """Send keys as a terminal does (a word is its letters), without waiting for the app."""
    driver = app._driver
    assert driver is not None
    for key in pressed:
        for name, character in (
            [(key, None)] if key in ("enter", "escape", "f4", "down") else [(c, c) for c in key]
        ):
            event = events.Key("space" if name == " " else name, character)
            event.set_sender(app)
            driver.send_message(event)


async def until(condition: Callable[[], bool], timeout: float = GIVE_UP_S) -> float:
    """Wait until `condition` holds (polled, the app running meanwhile); the seconds it took."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    while not condition():
        if loop.time() - started > timeout:
            raise AssertionError(f"condition not met within {timeout} s")
        await asyncio.sleep(0.02)
    return loop.time() - started


def shown(app: HelpDeskApp) -> str:
    return flat(screen_text(app))


def agent_replies(url: str, conversation: int) -> list[str]:
    desk = open_service(load_settings(store={"db": url}))
    try:
        return [
            entry.text
            for entry in desk.page(conversation).entries
            if isinstance(entry, ChatMessage) and entry.author is Author.AGENT
        ]
    finally:
        desk.close()


async def test_a_reply_in_a_lock_says_so_within_the_deadline_and_keeps_the_text(
    desk_db: tuple[str, int, psycopg.Connection[Any]],
) -> None:
    url, conversation, locker = desk_db
    app = console_app(url)
    async with app.run_test(size=SIZE):
        console = app.screen.query_one(AgentConsole)
        view = await console.open_conversation(conversation)
        await until(lambda: view.is_mine)
        view.reply_input.focus()
        locker.execute("LOCK TABLE entries IN ACCESS EXCLUSIVE MODE")
        keys(app, REPLY, "enter")
        # Timed from the Enter on: the letters before it take their own while (seconds on a
        # busy machine), and are no part of the deadline.
        await until(lambda: view.reply_input.value == REPLY)
        took = await until(lambda: "Not done: the desk's database cannot be reached" in shown(app))
        # Told within about its own deadline, not after every call queued before it.
        assert took < 2 * DEADLINE_S + 1.0, took
        assert view.reply_input.value == REPLY  # Kept, to send again.
        locker.rollback()
    assert agent_replies(url, conversation) == []  # Not stored later either.


async def test_escape_leaves_a_conversation_while_its_reply_waits_on_the_lock(
    desk_db: tuple[str, int, psycopg.Connection[Any]],
) -> None:
    url, conversation, locker = desk_db
    app = console_app(url)
    async with app.run_test(size=SIZE):
        console = app.screen.query_one(AgentConsole)
        view = await console.open_conversation(conversation)
        await until(lambda: view.is_mine)
        # Read, and the read marked (the view's one write of its own): from now on only the
        # reply awaits the desk here.
        await until(lambda: (item := console.queue.table.item(conversation)) is not None
                    and item.read_entry > 0)  # fmt: skip
        view.reply_input.focus()
        locker.execute("LOCK TABLE entries IN ACCESS EXCLUSIVE MODE")
        keys(app, REPLY, "enter")
        # The reply is with the desk: its Enter read, and the view waiting on the desk.
        await until(
            lambda: view.check_action("leave", ()) is True and not view.reply_input.guard.unread
        )
        keys(app, "escape")
        await until(lambda: console.open_view is None and console.queue.table.has_focus)
        # Back on the queue, its keys working, before the reply failed: Escape did not wait.
        assert not app._notifications
        # Then it fails, and the agent, no longer looking at the conversation, is told (a toast:
        # tests run with toasts off the screen).
        said = f"Not done in conversation #{conversation}: the desk's database cannot be reached."
        await until(lambda: any(said in note.message for note in app._notifications))
        locker.rollback()
        # Open again: the reply waits in its box, unsent.
        await until(lambda: TROUBLE not in shown(app))
        view = await console.open_conversation(conversation)
        assert view.reply_input.value == REPLY
    assert agent_replies(url, conversation) == []


async def test_enter_on_the_queue_in_a_lock_says_so_within_the_deadline(
    desk_db: tuple[str, int, psycopg.Connection[Any]],
) -> None:
    url, conversation, locker = desk_db
    app = console_app(url)
    async with app.run_test(size=SIZE):
        console = app.screen.query_one(AgentConsole)
        table = console.queue.table
        await until(lambda: table.item(conversation) is not None)
        table.focus()
        locker.execute("LOCK TABLE entries IN ACCESS EXCLUSIVE MODE")
        # Reads already waiting on the desk, as a console's queue, views and bot worker have
        # when a lock lasts: the conversation's read waited behind every one of them.
        others = [asyncio.create_task(app.services.desk.claims()) for _ in range(3)]
        keys(app, "enter")
        opens = f"Conversation #{conversation} will open once it is back."
        took = await until(lambda: opens in shown(app) and TROUBLE in shown(app))
        assert took < 2 * DEADLINE_S + 1.0, took
        await asyncio.gather(*others, return_exceptions=True)
        assert console.open_view is None
        locker.rollback()
        # Once the database answers, it opens (and is shown whole before the app quits).
        await until(lambda: (view := console.open_view) is not None and view.loaded.is_set())


async def test_the_team_view_in_a_lock_says_it_cannot_read_not_that_nobody_has_a_claim(
    desk_db: tuple[str, int, psycopg.Connection[Any]],
) -> None:
    url, conversation, locker = desk_db
    app = console_app(url)
    async with app.run_test(size=SIZE):
        console = app.screen.query_one(AgentConsole)
        await until(lambda: console.queue.table.item(conversation) is not None)
        locker.execute("LOCK TABLE entries IN ACCESS EXCLUSIVE MODE")
        keys(app, "f4")
        await until(lambda: "Claims by agent" in shown(app))
        said: list[str] = []

        def read_or_failed() -> bool:
            said.append(shown(app))
            return TROUBLE in said[-1]

        await until(read_or_failed)
        # Never a claim-less desk while ana held one: it said it was reading, then that it
        # could not.
        assert not any("Nobody holds a claim." in text for text in said)
        assert "Reading the claims…" in said[0]
        keys(app, "escape")  # Closes the dialog at once, a read stuck or not.
        await until(lambda: "Claims by agent" not in shown(app), timeout=DEADLINE_S)
        locker.rollback()
