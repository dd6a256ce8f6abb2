"""SVG snapshots at a fixed size, with a frozen clock and timings off so they never drift.

Re-record with `make snapshot-update` after reviewing the report pytest prints on a mismatch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

from chatbot.config import Settings
from chatbot.tui import HelpDeskApp, Mode, create_app
from chatbot.tui.widgets.queue_list import QueueList
from tests.tui.conftest import Q1, Q3, SIZE, FrozenClock
from tests.tui.helpers import ask, footer_offers, steady, wait_until

SnapCompare = Callable[..., bool]


def make(settings: Settings, clock: FrozenClock, mode: Mode) -> HelpDeskApp:
    return create_app(settings, mode=mode, clock=clock, agent="ana", timings=False)


async def escalate_q3(pilot: Pilot[Any], clock: FrozenClock) -> None:
    """Seed question 3 asked as a customer's chat would, escalated by the app's bot, then 2 min
    pass."""
    app: HelpDeskApp = pilot.app  # type: ignore[assignment]
    await app.services.desk.ask(None, Q3)
    queue = app.screen.query_one(QueueList)
    await wait_until(pilot, lambda: bool(queue.items))
    clock.advance(125)


def test_chat_with_an_answer(
    snap_compare: SnapCompare, settings: Settings, clock: FrozenClock
) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.pause()  # Headless runs start this before the first screen has mounted.
        await ask(pilot, Q1)
        app: HelpDeskApp = pilot.app  # type: ignore[assignment]
        await wait_until(pilot, lambda: footer_offers(app, "feedback('helpful')"))
        await steady(pilot)

    assert snap_compare(make(settings, clock, "chat"), terminal_size=SIZE, run_before=run_before)


def test_queue_with_a_waiting_conversation(
    snap_compare: SnapCompare, settings: Settings, clock: FrozenClock
) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        await escalate_q3(pilot, clock)
        await pilot.pause(1.1)  # The wait column ticks each second.
        await steady(pilot)

    assert snap_compare(make(settings, clock, "agent"), terminal_size=SIZE, run_before=run_before)


def test_open_conversation(
    snap_compare: SnapCompare, settings: Settings, clock: FrozenClock
) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        app: HelpDeskApp = pilot.app  # type: ignore[assignment]
        await pilot.pause()
        await escalate_q3(pilot, clock)
        await app.open_conversation(1)
        await wait_until(pilot, lambda: footer_offers(app, "claim"))
        await steady(pilot)

    assert snap_compare(make(settings, clock, "agent"), terminal_size=SIZE, run_before=run_before)


def test_desk_after_an_escalation(
    snap_compare: SnapCompare, settings: Settings, clock: FrozenClock
) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        await ask(pilot, Q3)
        queue = pilot.app.screen.query_one(QueueList)
        await wait_until(pilot, lambda: bool(queue.items))
        await steady(pilot)

    assert snap_compare(make(settings, clock, "all"), terminal_size=SIZE, run_before=run_before)
