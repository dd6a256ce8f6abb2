"""SVG snapshots at a fixed size, with a frozen clock and timings off so they never drift.

Re-record with `make snapshot-update` after reviewing the report pytest prints on a mismatch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

from chatbot.config import Settings
from chatbot.tui import HelpDeskApp, Mode, create_app
from tests.tui.conftest import Q1, Q3, SIZE, FrozenClock
from tests.tui.helpers import ask

SnapCompare = Callable[..., bool]


def make(settings: Settings, clock: FrozenClock, mode: Mode) -> HelpDeskApp:
    return create_app(settings, mode=mode, clock=clock, agent="ana", timings=False)


async def escalate_q3(app: HelpDeskApp, clock: FrozenClock) -> None:
    """Put seed question 3 in the queue the way a customer's chat would, then let 2 min pass."""
    store = app.services.store
    conversation = store.start_conversation()
    message = store.add_customer_message(conversation.id, Q3)
    decision = await app.services.engine.answer(Q3)
    store.record_decision(conversation.id, message_id=message.id, decision=decision)
    clock.advance(125)
    app.poll_store()


def test_chat_with_an_answer(
    snap_compare: SnapCompare, settings: Settings, clock: FrozenClock
) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.pause()  # Headless runs start this before the first screen has mounted.
        await ask(pilot, Q1)

    assert snap_compare(make(settings, clock, "chat"), terminal_size=SIZE, run_before=run_before)


def test_queue_with_a_waiting_conversation(
    snap_compare: SnapCompare, settings: Settings, clock: FrozenClock
) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        await escalate_q3(pilot.app, clock)  # type: ignore[arg-type]
        await pilot.pause()

    assert snap_compare(make(settings, clock, "agent"), terminal_size=SIZE, run_before=run_before)


def test_open_conversation(
    snap_compare: SnapCompare, settings: Settings, clock: FrozenClock
) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        app: HelpDeskApp = pilot.app  # type: ignore[assignment]
        await pilot.pause()
        await escalate_q3(app, clock)
        await app.open_conversation(1)
        await pilot.pause()

    assert snap_compare(make(settings, clock, "agent"), terminal_size=SIZE, run_before=run_before)


def test_desk_after_an_escalation(
    snap_compare: SnapCompare, settings: Settings, clock: FrozenClock
) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        await ask(pilot, Q3)

    assert snap_compare(make(settings, clock, "all"), terminal_size=SIZE, run_before=run_before)
