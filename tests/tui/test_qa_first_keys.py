"""Keys typed while `helpdesk chat` starts all reach the question box, in order: the chat's shell
takes typing from the first frame, then the chat panel takes its place with what was typed. A key
that arrived as the shell was read and removed (still queued to its box, or sent to a screen with
nothing focused before the panel's box took the focus) was lost: a tester typing at once lost a
character in about 2 runs of 17."""

from __future__ import annotations

import asyncio
from itertools import cycle, islice

import httpx
from textual import events
from textual.message import Message
from textual.messages import Prune

from chatbot.config import Settings
from chatbot.desk.service import DeskService
from chatbot.tui.widgets.chat_panel import ChatPanel
from tests.tui.conftest import SIZE, FrozenClock
from tests.tui.helpers import wait_until
from tests.tui.test_loading_first import GatedLoader, loading_app

WORDS = "where can I leave my bike overnight "


def key(char: str) -> events.Key:
    return events.Key("space" if char == " " else char, char)


async def test_keys_typed_as_the_shell_goes_reach_the_panels_box(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock
) -> None:
    """Keys arriving at the very moment the shell is taken off the screen: its box had lost the
    focus and the panel's had not got it yet, so they went to the screen, which drops them."""
    load = GatedLoader(settings)
    app = loading_app(load, http, clock, "chat", bot=False)
    before, during, after = "where can I ", "leave my bike", " overnight?"
    removed = False

    def hook(message: Message) -> None:
        nonlocal removed
        # The first removal once the desk is open is the shell's: its text has been read, its
        # box has lost the focus.
        if isinstance(message, Prune) and app.started and not removed:
            removed = True
            for char in during:
                app.post_message(key(char))

    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await wait_until(pilot, load.entered.is_set)
        await pilot.press(*(key(c).key for c in before))
        load.opened.set()
        await wait_until(pilot, lambda: removed and bool(app.screen.query("ChatPanel #question")))
        panel = app.screen.query_one(ChatPanel)
        await wait_until(pilot, lambda: panel.question.has_focus)
        for char in after:
            app.post_message(key(char))
        await wait_until(pilot, lambda: panel.question.value.endswith("?"))
        assert panel.question.value == before + during + after


async def test_a_burst_typed_all_through_the_start_arrives_whole_and_in_order(
    settings: Settings, http: httpx.AsyncClient, clock: FrozenClock, other: DeskService
) -> None:
    """A customer typing without pause from the first frame until well after the panel is there,
    then pressing Enter: one key every turn of the event loop, so keys are on their way at every
    step of the swap, and the question asked is every one of them."""
    load = GatedLoader(settings)
    app = loading_app(load, http, clock, "chat", bot=False)
    typed: list[str] = []
    letters = cycle(WORDS)

    def type_one() -> None:
        char = next(letters)
        typed.append(char)
        app.post_message(key(char))

    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, load.entered.is_set)
        load.opened.set()
        # One key per loop turn (a yield, not a wait) until the panel's box has the focus (within
        # the question's length limit)...
        while not app.screen.query("ChatPanel #question:focus"):
            if len(typed) < 1500:
                type_one()
            await asyncio.sleep(0)
        # ...and for as many turns again, while the panel settles in.
        for _ in islice(range(len(typed)), 200):
            type_one()
            await asyncio.sleep(0)
        app.post_message(key("?"))
        app.post_message(events.Key("enter", "\r"))
        await wait_until(pilot, lambda: bool(other.conversations()), timeout=10)
        [question] = other.messages(other.conversations()[0].id)
        assert question.text == ("".join(typed) + "?").strip()
