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
from tests.tui.helpers import ask, flat, footer_offers, screen_text, steady, wait_until

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
        app: HelpDeskApp = pilot.app  # type: ignore[assignment]
        await pilot.pause()
        await escalate_q3(pilot, clock)
        queue = app.screen.query_one(QueueList)
        queue.table.tick()  # What the once-a-second tick does, without waiting a second for it.
        await wait_until(pilot, lambda: "2m 05s" in screen_text(app, queue))
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


# -- issue 14: 80x24, where every column and key must still be there -------------------------------

SMALL = (80, 24)
LONG = "My e-bike stopped in the middle of the bridge and the app says the battery is full"


def crowded_queue(settings: Settings, clock: FrozenClock) -> None:
    """Another process: one conversation ana claimed 3 minutes ago whose customer wrote again,
    one waiting with a long question."""
    from chatbot.assembly import open_service

    desk = open_service(settings, clock=clock)
    try:
        for question in (LONG, "Where is my helmet?"):
            conversation = desk.start_conversation().id
            desk.talk_to_person(conversation)
            desk.ask(conversation, question)
        desk.claim(1, agent="ana")
        desk.mark_read(1, agent="ana", entry_id=desk.conversation(1).last_entry)
        clock.advance(180)
        desk.ask(1, "Hello? Still there?")
        desk.add_note(2, agent="ben", text="Asked twice before: send the helmet policy.")
    finally:
        desk.close()


def test_queue_at_80x24(snap_compare: SnapCompare, settings: Settings, clock: FrozenClock) -> None:
    crowded_queue(settings, clock)

    async def run_before(pilot: Pilot[Any]) -> None:
        app: HelpDeskApp = pilot.app  # type: ignore[assignment]
        await pilot.pause()
        queue = app.screen.query_one(QueueList)
        # Everything the snapshot shows, waited for: both rows, the table focused (its cursor
        # row drawn as focused) and the footer offering Open (only offered once there are rows).
        await wait_until(
            pilot,
            lambda: (
                len(queue.items) == 2
                and queue.table.has_focus
                and footer_offers(app, "select_cursor")
            ),
        )
        await pilot.wait_for_scheduled_animations()
        await steady(pilot)

    app = create_app(settings, mode="agent", clock=clock, agent="ana", timings=False, bot=False)
    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)


def test_own_conversation_with_a_note_at_80x24(
    snap_compare: SnapCompare, settings: Settings, clock: FrozenClock
) -> None:
    crowded_queue(settings, clock)

    async def run_before(pilot: Pilot[Any]) -> None:
        app: HelpDeskApp = pilot.app  # type: ignore[assignment]
        await pilot.pause()
        await app.open_conversation(2)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: footer_offers(app, "resolve"))
        await steady(pilot)

    app = create_app(settings, mode="agent", clock=clock, agent="ana", timings=False, bot=False)
    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)


def test_desk_at_80x24(snap_compare: SnapCompare, settings: Settings, clock: FrozenClock) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        await ask(pilot, Q3)
        queue = pilot.app.screen.query_one(QueueList)
        await wait_until(pilot, lambda: bool(queue.items))
        await pilot.wait_for_scheduled_animations()  # The chat scrolls to its last message.
        await steady(pilot)

    assert snap_compare(make(settings, clock, "all"), terminal_size=SMALL, run_before=run_before)


# -- issue 14, the customer chat at 80x24: a repeated question, a rating ---------------------------


def test_chat_repeated_question_at_80x24(
    snap_compare: SnapCompare, settings: Settings, clock: FrozenClock
) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.pause()
        await ask(pilot, Q1)
        await ask(pilot, Q1)
        await wait_until(pilot, lambda: "You asked this before" in screen_text(pilot.app))  # type: ignore[arg-type]
        await steady(pilot)

    assert snap_compare(make(settings, clock, "chat"), terminal_size=SMALL, run_before=run_before)


def test_chat_asks_for_a_rating_at_80x24(
    snap_compare: SnapCompare, settings: Settings, clock: FrozenClock
) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        from chatbot.assembly import open_service

        app: HelpDeskApp = pilot.app  # type: ignore[assignment]
        await pilot.pause()
        await ask(pilot, Q3)
        desk = open_service(settings, clock=clock)
        try:
            desk.claim(1, agent="ben")
            desk.reply(1, agent="ben", text="No late fee when the station is full.")
            desk.resolve(1, agent="ben")
        finally:
            desk.close()
        await wait_until(pilot, lambda: "Rate it from" in screen_text(app))
        await pilot.press("shift+tab")  # On the rating: it says which keys rate.
        await wait_until(pilot, lambda: "press a number" in flat(screen_text(app)))
        await steady(pilot)

    assert snap_compare(make(settings, clock, "chat"), terminal_size=SMALL, run_before=run_before)


# -- issue 15: the customer's chat in Chinese ---------------------------------------------------

Q1_ZH = "同一次骑行被扣了两次钱，能把钱退给我吗？"


def test_chat_in_chinese_at_80x24(
    snap_compare: SnapCompare, settings: Settings, clock: FrozenClock
) -> None:
    """Wide characters take two cells each: lines wrap at the panel's edge, never past it, and
    nothing overlaps the bubble borders. (Rich draws each one a cell wide in the SVG itself,
    Textualize/rich#2742; tests/tui/test_languages.py checks the layout.)"""

    async def run_before(pilot: Pilot[Any]) -> None:
        app: HelpDeskApp = pilot.app  # type: ignore[assignment]
        await pilot.pause()
        await ask(pilot, Q1_ZH)
        # Waiting for a person: the footer offers a new chat, not "Talk to a person".
        await wait_until(pilot, lambda: footer_offers(app, "new_conversation"))
        await wait_until(pilot, lambda: "English" in str(app.query_one("#chat-language").render()))
        await steady(pilot)

    assert snap_compare(make(settings, clock, "chat"), terminal_size=SMALL, run_before=run_before)
