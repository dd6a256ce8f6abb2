"""What the customer chat and the agent console say while PostgreSQL holds a table locked (a psql
session's `LOCK TABLE … IN ACCESS EXCLUSIVE MODE`), and after.

A tester found: a question sent in a lock showed nothing for the whole deadline (the words stayed
in the box, no hint), then "cannot be reached" stayed long after the lock ended, until Enter was
pressed again; Enters pressed meanwhile did nothing, without a word; a customer read "What you
sent is saved" while their message was still on its way; an agent's "Not done: … cannot be
reached" stayed above the reply box after the database was back; and F6 in a lock on the
conversations said nothing at all, before or after, and took nobody.

Keys go in through the driver, as a terminal sends them: Pilot's `press` waits for every widget to
be idle, which one waiting on the desk is not.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import psycopg
import pytest
from textual import events
from textual.keys import _character_to_key
from textual.widgets import Static

from chatbot.assembly import open_service
from chatbot.config import load_settings
from chatbot.desk.models import Author, State
from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp, create_app
from chatbot.tui.widgets.agent_console import AgentConsole
from chatbot.tui.widgets.chat_panel import ChatPanel
from tests.backends import postgres_server
from tests.tui.conftest import Q1, Q2, SIZE
from tests.tui.helpers import flat, screen_text

DEADLINE_S = 3.0
"""The desk's deadline for one call (the store's `timeout_s`): 15 s by default."""
GIVE_UP_S = 30.0
SENDING = "Sending… The help desk is slow to answer: what you typed stays here until it is saved."
TROUBLE = "The help desk cannot be reached just now. What you typed stays here"
BACK = "The help desk can be reached again, but what you typed was not sent: press Enter"
SAVED = "What you sent is saved"
NOT_DONE = "Not done: the desk's database cannot be reached. Try again in a moment."
NOT_DONE_BACK = "The desk's database can be reached again, but that was not done: try it again now."
NEXT_WAITING = "Taking the next conversation: waiting for the desk's database…"
NEXT_NOT_DONE = (
    "No conversation was taken: the desk's database did not answer. Press F6 again in a moment."
)
REPLY = "Your refund is on its way"


class Desk:
    """A PostgreSQL database of its own: a desk service on it (another process's), and a
    connection to hold a lock with and one to watch who waits on it."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.other: DeskService = open_service(load_settings(store={"db": url}))
        self._locker = psycopg.connect(url)  # Not autocommit: the lock is held until rollback.
        self._watcher = psycopg.connect(url, autocommit=True)

    def lock(self, table: str) -> None:
        self._locker.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE".encode())

    def unlock(self) -> None:
        self._locker.rollback()

    def held_up(self, seconds: float = 1.0) -> bool:
        """Whether some call of the app's has waited on the lock longer than `seconds`."""
        [(count,)] = self._watcher.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock' AND clock_timestamp() - query_start > %s",
            (f"{seconds} seconds",),
        ).fetchall()
        return bool(count)

    def app(self, mode: str, *, conversation: int | None = None) -> HelpDeskApp:
        settings = load_settings(store={"db": self.url, "timeout_s": DEADLINE_S})
        return create_app(settings, mode=mode, timings=False, bot=False, agent="ana",  # type: ignore[arg-type]
                          conversation_id=conversation)  # fmt: skip

    def close(self) -> None:
        self._locker.close()
        self._watcher.close()
        self.other.close()


@pytest.fixture
def desk() -> Iterator[Desk]:
    server = postgres_server()
    url = server.create()
    desk = Desk(url)
    try:
        yield desk
    finally:
        desk.close()
        server.drop(url)


def keys(app: HelpDeskApp, *pressed: str) -> None:
    """Send keys as a terminal does (a word is its letters), without waiting for the app."""
    driver = app._driver
    assert driver is not None
    for key in pressed:
        named = key in ("enter", "f6")
        typed = [(key, None)] if named else [(_character_to_key(c), c) for c in key]
        for name, character in typed:
            event = events.Key(name, character)
            event.set_sender(app)
            driver.send_message(event)


async def until(condition: Callable[[], bool], timeout: float = GIVE_UP_S) -> None:
    """Wait until `condition` holds, the app running meanwhile."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.05)


def line(app: HelpDeskApp) -> str:
    """What the chat's line above the box says, or "" when it is hidden."""
    error = app.screen.query_one("#chat-error", Static)
    return flat(screen_text(app, error)) if error.display else ""


def customer_messages(desk: DeskService, conversation: int = 1) -> list[str]:
    return [m.text for m in desk.messages(conversation) if m.author is Author.CUSTOMER]


def customers_chat(desk: Desk) -> HelpDeskApp:
    """The chat of a customer who asked `Q1` (no bot: it stays pending), opened afterwards: no
    change notice of it comes once the chat is up, and the chat reads only when told of one."""
    desk.other.ask(None, Q1)
    return desk.app("chat", conversation=1)


async def shown(app: HelpDeskApp) -> ChatPanel:
    """The chat's panel, once the conversation is on screen."""
    panel = app.screen.query_one(ChatPanel)
    await until(lambda: panel.conversation is not None and Q1 in flat(screen_text(app)))
    return panel


async def test_a_send_held_by_a_lock_says_it_is_sending_and_enter_again_sends_nothing_more(
    desk: Desk,
) -> None:
    app = customers_chat(desk)
    async with app.run_test(size=SIZE):
        panel = await shown(app)
        desk.lock("questions")
        keys(app, Q2, "enter")
        # While it waits, the line says it is on its way, over the words kept in the box.
        await until(lambda: line(app) == SENDING)
        assert panel.question.value == Q2
        # Enter again, twice: the words stay, and the line still says why nothing else happens.
        guard = panel.question.guard
        keys(app, "enter", "enter")
        await until(lambda: guard.unread)
        assert line(app) == SENDING and panel.question.value == Q2
        desk.unlock()  # Within the deadline: it goes, once.
        await until(lambda: line(app) == "" and panel.question.value == "")
        assert customer_messages(desk.other) == [Q1, Q2]
    assert customer_messages(desk.other) == [Q1, Q2]


async def test_a_send_failed_on_a_lock_says_the_desk_is_back_once_the_lock_ends(
    desk: Desk,
) -> None:
    app = customers_chat(desk)
    async with app.run_test(size=SIZE):
        panel = await shown(app)
        desk.lock("questions")
        keys(app, Q2, "enter")
        await until(lambda: TROUBLE in line(app))  # The deadline passed.
        assert panel.question.value == Q2
        # The chat reads again by itself (it did not: the line stayed until Enter), and its read
        # waits on the lock too.
        await until(desk.held_up)
        desk.unlock()
        # Nobody pressed anything, nobody else wrote: the line says the desk is back.
        await until(lambda: BACK in line(app))
        assert panel.question.value == Q2 and customer_messages(desk.other) == [Q1]
        keys(app, "enter")
        await until(lambda: line(app) == "" and panel.question.value == "")
    assert customer_messages(desk.other) == [Q1, Q2]


async def test_what_you_sent_is_saved_is_never_said_over_a_message_still_on_its_way(
    desk: Desk,
) -> None:
    app = customers_chat(desk)
    async with app.run_test(size=SIZE):
        panel = await shown(app)
        desk.other.talk_to_person(1)  # A customer waiting for a person.
        await until(lambda: (shown := panel.conversation) is not None and shown.agent is None
                    and shown.state is State.WAITING)  # fmt: skip

        desk.lock("entries")
        # An agent starts typing (no log entry): the chat reads, and its read fails on the lock.
        desk.other.set_typing(1, author=Author.AGENT)
        await until(lambda: SAVED in line(app))  # True of Q1, stored.

        keys(app, Q2)
        await until(lambda: panel.question.value == Q2)
        keys(app, "enter")
        # It goes as the message goes on its way, not once the send failed.
        await until(lambda: SAVED not in line(app))
        assert TROUBLE not in line(app)
        stored = False
        seen: list[str] = []

        def said(*wanted: str) -> bool:
            """Whether the line says one of `wanted` (or Q2 is stored), noting what it said
            while Q2 was on its way."""
            nonlocal stored
            stored = stored or (not locked and Q2 in customer_messages(desk.other))
            if stored:
                return True
            seen.append(line(app))
            return any(text in seen[-1] for text in wanted)

        locked = True  # Reading the messages would wait on the lock too.
        await until(lambda: said(SENDING, TROUBLE))
        desk.unlock()
        locked = False
        await until(lambda: said(BACK))
        if not stored:  # It failed at the deadline: sent again.
            keys(app, "enter")
            await until(lambda: said())
        assert not [text for text in seen if SAVED in text]
    assert customer_messages(desk.other) == [Q1, Q2]


async def test_not_done_goes_from_above_the_reply_once_the_database_is_back(desk: Desk) -> None:
    conversation = desk.other.start_conversation().id
    desk.other.talk_to_person(conversation)
    desk.other.ask(conversation, "Where is my refund?")
    desk.other.claim(conversation, agent="ana")
    app = desk.app("agent")
    async with app.run_test(size=SIZE):
        console = app.screen.query_one(AgentConsole)
        view = await console.open_conversation(conversation)
        await until(lambda: view.is_mine)
        hint = view.query_one("#reply-hint")
        view.reply_input.focus()
        desk.lock("entries")
        keys(app, REPLY, "enter")
        await until(lambda: flat(screen_text(app, hint)) == NOT_DONE)
        await until(desk.held_up)  # The console reads on, and waits on the lock too.
        assert flat(screen_text(app, hint)) == NOT_DONE
        desk.unlock()
        await until(lambda: flat(screen_text(app, hint)) == NOT_DONE_BACK)
        assert view.reply_input.value == REPLY  # Kept, to send again.
        keys(app, "enter")
        await until(lambda: view.reply_input.value == "")
    assert [m.text for m in desk.other.messages(conversation) if m.author is Author.AGENT] == [
        REPLY
    ]


async def test_f6_in_a_lock_says_it_waits_then_that_it_took_nobody(desk: Desk) -> None:
    conversation = desk.other.start_conversation().id
    desk.other.talk_to_person(conversation)
    desk.other.ask(conversation, "Where is my refund?")
    app = desk.app("agent")
    async with app.run_test(size=SIZE):
        console = app.screen.query_one(AgentConsole)
        table = console.queue.table
        await until(lambda: table.item(conversation) is not None)
        table.focus()
        desk.lock("conversations")
        keys(app, "f6")
        await until(lambda: NEXT_WAITING in flat(screen_text(app)))
        await until(lambda: NEXT_NOT_DONE in flat(screen_text(app)))
        desk.unlock()
        # The console's reads worked all along: its own line said nothing. This one stays.
        assert console.open_view is None
        assert desk.other.conversation(conversation).agent is None
        assert NEXT_NOT_DONE in flat(screen_text(app))
        keys(app, "f6")  # Again, the lock gone: it takes the conversation.
        await until(lambda: (view := console.open_view) is not None and view.is_mine)
        assert NEXT_NOT_DONE not in flat(screen_text(app))
    assert desk.other.conversation(conversation).agent == "ana"
