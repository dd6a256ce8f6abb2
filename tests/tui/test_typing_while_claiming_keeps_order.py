"""Words typed while Ctrl+L's claim waits on the desk reach the reply box in the order typed.

A tester in a browser claimed a conversation and typed "Hi, Ben here" at once: ", Ben here" went
in first. The keys typed while the claim waited were on the transcript, which passes them to the
view, busy with the claim; as the claim returned the view gave the box the focus, and the keys
typed from then on went straight into the box, ahead of the ones still waiting for the view
(its reload after the claim takes a moment more). An Enter typed next sent ", Ben here".

The desk is held by a store whose claim, then whose read of the log once claimed, wait on the
test: the first keys come while the claim waits, the rest while the reload does. Keys go in
through the driver, as Pilot's `press` waits for a view that is waiting on the desk."""

from __future__ import annotations

import asyncio

from textual import events

from chatbot.desk.models import Author
from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp
from tests.tui.conftest import MakeApp
from tests.tui.desk_helpers import waiting
from tests.tui.driver_helpers import HeldClaim, typed, until

FIRST, REST = "Hi", ", Ben here"


async def taken_by_the_focused_widget(app: HelpDeskApp) -> None:
    """Once every key sent so far has been handed to the widget with the focus, and it has
    taken them (passing on those it does not take): a marker sent through the driver behind
    them goes the same way."""
    done = asyncio.Event()

    def at_the_app() -> None:
        (app.focused or app.screen).call_later(done.set)

    driver = app._driver
    assert driver is not None
    driver.send_message(events.Callback(callback=at_the_app))
    await until(done.is_set)


async def test_words_typed_as_the_claim_returns_go_after_those_typed_while_it_waited(
    make_app: MakeApp, other: DeskService
) -> None:
    conversation = waiting(other)
    app = make_app("agent", bot=False)
    async with app.run_test(size=(80, 24)):
        view = await app.open_conversation(conversation)
        await until(lambda: view.check_action("claim", ()) is True)
        assert view.transcript.has_focus
        desk = HeldClaim(app)
        try:
            typed(app, "\x0c")
            await until(desk.claiming.is_set)
            typed(app, FIRST)  # On the transcript, for the view busy with the claim.
            await taken_by_the_focused_widget(app)
            desk.let_claim_go()
            await until(desk.reading.is_set)  # Claimed; the reload after it waits on the log.
            assert other.conversation(conversation).agent == "ana"
            typed(app, REST)
            await taken_by_the_focused_widget(app)
            desk.let_reads_go()
            await until(lambda: view.reply_input.value == FIRST + REST)
        finally:
            desk.let_go()
        assert view.is_mine
        await until(lambda: view.reply_input.has_focus)
        typed(app, "\r")
        await until(lambda: [m.text for m in other.messages(conversation)
                             if m.author is Author.AGENT] == [FIRST + REST])  # fmt: skip
