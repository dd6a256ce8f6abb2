"""Keys typed while the conversation Enter opened is still being read act, in order, once it is
shown: Ctrl+L claims it, and the words typed after go to its reply box.

A tester in a browser pressed Enter on a waiting row, then Ctrl+L (at once, or 150 ms later):
3 tries in 5 opened the conversation without claiming it, and "Hi, Ben here" typed next lost
its first letters. A browser sends each key in a websocket message of its own, so Ctrl+L came
once the conversation view had the focus but had not read its conversation yet: it was refused
there ("still loading", a line the read then took away), where a terminal's burst reached the
queue, which keeps the keys after Enter for the conversation it opens. Here the view's first
read waits on the test, so the keys come in that gap every time; they go in through the driver,
as Pilot's `press` waits for a console that is, here, waiting on the desk."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from textual import events

from chatbot.desk.models import State
from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp
from chatbot.tui.widgets.agent_console import AgentConsole
from chatbot.tui.widgets.conversation_view import ConversationView
from chatbot.tui.widgets.queue_list import QueueTable
from tests.tui.conftest import SIZE, MakeApp
from tests.tui.desk_helpers import waiting
from tests.tui.driver_helpers import typed, until
from tests.tui.helpers import queue_rows, wait_until

REPLY = "Hi, Ben here"


class HeldPages:
    """Stands in for the desk's read of a conversation's first page: it waits on the test (as on
    a busy desk), so the view is shown, and has the focus, before it has read anything."""

    def __init__(self, app: HelpDeskApp, monkeypatch: pytest.MonkeyPatch) -> None:
        desk = app.services.desk
        self._real = desk.page
        self.reading = asyncio.Event()
        """Set once a read waits here."""
        self._gate = asyncio.Event()
        monkeypatch.setattr(desk, "page", self.page)

    async def page(self, *args: Any, **kwargs: Any) -> Any:
        self.reading.set()
        await self._gate.wait()
        return await self._real(*args, **kwargs)

    def let_go(self) -> None:
        self._gate.set()


@contextmanager
def held_pages(app: HelpDeskApp, monkeypatch: pytest.MonkeyPatch) -> Iterator[HeldPages]:
    """Reads of a first page held in the block; let go as it ends, whatever happened in it."""
    pages = HeldPages(app, monkeypatch)
    try:
        yield pages
    finally:
        pages.let_go()


async def handed_on(app: HelpDeskApp, view: ConversationView) -> None:
    """Once the app has handed on every key sent so far, the widget with the focus has taken
    them, and the view has taken those it passed up: a marker sent through the driver behind
    them goes the same way."""
    done = asyncio.Event()

    def at_the_app() -> None:
        focused = app.focused or app.screen
        focused.call_later(lambda: view.call_later(done.set))

    driver = app._driver
    assert driver is not None
    driver.send_message(events.Callback(callback=at_the_app))
    await until(done.is_set)


def console(app: HelpDeskApp) -> AgentConsole:
    return app.screen.query_one(AgentConsole)


def shown_with_focus(app: HelpDeskApp, conversation: int) -> ConversationView | None:
    """The view of `conversation`, once it is shown and the focus is in it (not yet loaded)."""
    view = console(app).open_view
    focused = app.focused
    if view is None or view.conversation_id != conversation or focused is None:
        return None
    return view if view in focused.ancestors_with_self else None


async def open_with_enter_then_type(
    app: HelpDeskApp, other: DeskService, monkeypatch: pytest.MonkeyPatch, conversation: int
) -> ConversationView:
    """Enter on `conversation`'s row, then Ctrl+L and `REPLY` once the view it opens has the
    focus and waits for its first read; let the read go once they are handed on. Returns the
    view once the conversation is claimed and the words are in its box."""
    table = app.screen.query_one(QueueTable)
    table.move_cursor(next(i for i, item in enumerate(table.items)
                           if item.conversation_id == conversation))  # fmt: skip
    table.focus()
    await until(lambda: table.has_focus)
    with held_pages(app, monkeypatch) as pages:
        typed(app, "\r")
        await until(lambda: pages.reading.is_set() and bool(shown_with_focus(app, conversation)))
        view = shown_with_focus(app, conversation)
        assert view is not None and view.conversation is None  # Shown, nothing read yet.
        typed(app, "\x0c" + REPLY)
        await handed_on(app, view)
    await until(lambda: other.conversation(conversation).agent == "ana")
    await until(lambda: view.is_mine and view.reply_input.value == REPLY)
    return view


async def test_ctrl_l_while_the_conversation_loads_claims_it_and_keeps_the_words(
    make_app: MakeApp, other: DeskService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The console's first conversation: the view is made for it."""
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        conversation = waiting(other)
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1)
        view = await open_with_enter_then_type(app, other, monkeypatch, conversation)
        # The box takes the focus by the app's queue, a moment after its last word is in.
        await until(lambda: view.reply_input.has_focus)
        assert other.conversation(conversation).state is State.CLAIMED


async def test_ctrl_l_while_the_next_conversation_loads_claims_that_one(
    make_app: MakeApp, other: DeskService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Conversations opened after another (the view shows each in place of the one before), one
    after the other: each is claimed, with the words in its own box."""
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        first = waiting(other)
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1)
        await app.open_conversation(first)
        table = app.screen.query_one(QueueTable)
        for conversation in [waiting(other) for _ in range(3)]:
            await pilot.press("escape")
            await wait_until(pilot, lambda: console(app).open_view is None)
            await wait_until(pilot, lambda: table.item(conversation) is not None)  # noqa: B023
            view = await open_with_enter_then_type(app, other, monkeypatch, conversation)
            assert view.conversation_id == conversation
        assert other.conversation(first).agent is None
