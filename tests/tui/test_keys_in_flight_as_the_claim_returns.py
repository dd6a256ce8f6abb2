"""Words typed at a browser's pace while Ctrl+L's claim, then its reload, wait on the desk reach
the reply box exactly as typed, wherever in them the claim and the reload return.

A re-tester in a browser pressed Enter on a waiting row, Ctrl+L, then typed "Hello trial 3, your
reply is intact 0123456789" at once: 1 try in 5 stored "Hello trial 3, your reply is inct
0123456ta789". The claim returned with "ta" on its way to the view (in the app's queue, or the
transcript's) but not yet waiting on it: the box took the focus at once, the view then waited on
its reload with "ta" behind it, and "ct 0123456" went straight into the box ahead of them.

Keys go in through the driver one at a time, the app running a moment between them (as a
browser's websocket messages come); the claim, then the reads of the log after it, wait on the
test, which lets them go at each point of the typing in turn."""

from __future__ import annotations

import asyncio

from chatbot.desk.service import DeskService
from chatbot.tui import HelpDeskApp
from tests.tui.conftest import MakeApp
from tests.tui.desk_helpers import waiting
from tests.tui.driver_helpers import HeldClaim, typed, until

TEXT = "Hello trial, your reply is intact 0123456789"
PACE = 3
"""Turns of the event loop between two keys: each is a websocket message of its own."""


async def _type_at_a_browsers_pace(app: HelpDeskApp, text: str, desk: HeldClaim, claim_at: int,
                                   reads_at: int) -> None:  # fmt: skip
    for index, character in enumerate(text):
        if index == claim_at:
            desk.let_claim_go()
        if index == reads_at:
            desk.let_reads_go()
        typed(app, character)
        for _ in range(PACE):
            await asyncio.sleep(0)
    desk.let_claim_go()
    desk.let_reads_go()


async def _typed_as_claimed(
    app: HelpDeskApp, other: DeskService, claim_at: int, reads_at: int
) -> str:
    """What the reply box of a new waiting conversation holds once `TEXT` has been typed after
    Ctrl+L, the claim going through at its `claim_at`th key and the reload at its `reads_at`th."""
    view = await app.open_conversation(waiting(other))
    await until(lambda: view.check_action("claim", ()) is True)
    desk = HeldClaim(app)
    try:
        typed(app, "\x0c")
        await until(desk.claiming.is_set)
        await _type_at_a_browsers_pace(app, TEXT, desk, claim_at, reads_at)
        await until(lambda: view.is_mine and view.reply_input.has_focus)
        await until(lambda: len(view.reply_input.value) == len(TEXT))
    finally:
        desk.let_claim_go()
        desk.let_reads_go()
        app.services.desk._service.store = desk._real
    return view.reply_input.value


async def test_words_typed_as_the_claim_and_its_reload_return_reach_the_box_as_typed(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("agent", bot=False)
    wrong: list[tuple[int, int, str]] = []
    async with app.run_test(size=(80, 24)):
        for claim_at in range(0, 30, 3):
            for reads_after in (0, 1, 4, 9):
                got = await _typed_as_claimed(app, other, claim_at, claim_at + reads_after)
                if got != TEXT:
                    wrong.append((claim_at, reads_after, got))
    assert wrong == []
