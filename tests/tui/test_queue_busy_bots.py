"""The queue's line about questions waiting for a bot says, as `helpdesk doctor` does, that the
bots are busy while a bot holds questions (its lease renewed by a live worker), and asks
whether one runs only when none holds any: a live bot stuck on a hanging Valen was taken for
none."""

from __future__ import annotations

from functools import partial

import pytest

from chatbot.desk.models import BOT_STALLED_S
from chatbot.desk.service import DeskService
from chatbot.tui.widgets.queue_list import QueueList
from tests.tui.conftest import Q1, Q3, SIZE, FrozenClock, MakeApp
from tests.tui.helpers import flat, screen_text, wait_until

BUSY = "the bots are busy with 1 (a slow Valen, or more concurrency needed)"


async def test_the_queue_says_the_bots_are_busy_while_one_holds_a_question(
    make_app: MakeApp, other: DeskService, clock: FrozenClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(QueueList, "BOT_CHECK_S", 0.05)
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        queue = app.screen.query_one(QueueList)
        text = partial(screen_text, app, queue)
        for question in (Q1, Q3, Q1):
            other.ask(other.start_conversation().id, question)
        [held] = other.lease("bot-1", limit=1, lease_s=60)  # A bot with one slot takes one.
        clock.advance(BOT_STALLED_S + 8)
        await wait_until(
            pilot, lambda: "2 questions have waited up to 38s for a bot: " + BUSY in flat(text())
        )
        assert "is one running?" not in flat(text())
        # The bot stops, giving its question back: nothing is held, so the queue asks.
        assert other.release_leases("bot-1", [held.id]) == 1
        await wait_until(
            pilot,
            lambda: "3 questions have waited up to 38s for a bot: is one running?" in flat(text()),
        )
        assert "busy" not in flat(text())
