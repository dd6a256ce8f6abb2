"""A long conversation opens on its newest messages; earlier ones are shown on request, and new
ones still arrive live."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from chatbot.desk.models import ChatEvent, ChatMessage
from chatbot.desk.service import DeskService
from chatbot.notices import notice
from chatbot.tui.moments import moment
from chatbot.tui.widgets.conversation_view import ConversationView
from chatbot.tui.widgets.transcript import PAGE, Transcript
from tests.tui.conftest import SIZE, FrozenClock, MakeApp
from tests.tui.desk_helpers import long_conversation
from tests.tui.helpers import footer_line, wait_until, written

MESSAGES = PAGE * 2 + 50


def shown(entry: ChatMessage | ChatEvent) -> str:
    """The line a short entry's text is written as."""
    if isinstance(entry, ChatEvent):
        return f"— {notice(entry.event, reader='agent')}"
    return entry.text


async def test_older_messages_are_hidden_on_open_and_shown_on_request(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        conversation = long_conversation(other, MESSAGES)
        view = await app.open_conversation(conversation)
        await pilot.pause()
        transcript = view.query_one(Transcript)
        texts = [shown(entry) for entry in other.entries(conversation)]
        hidden = MESSAGES - PAGE
        lines = written(transcript)
        assert lines[0] == f"— {hidden} earlier messages — press F3 to show {PAGE} more"
        assert texts[hidden] in lines
        assert not set(texts[:hidden]) & set(lines)
        assert "f3 Earlier" in await footer_line(pilot)

        # The message at the top of the view stays there while earlier ones are written above.
        transcript.scroll_to(y=40, animate=False, immediate=True)
        await pilot.pause()
        top = written(transcript)[transcript.scroll_offset.y]
        await pilot.press("f3")
        await pilot.pause()
        lines = written(transcript)
        assert lines[0] == "— 50 earlier messages — press F3 to show them"
        assert texts[hidden - PAGE] in lines
        assert not set(texts[: hidden - PAGE]) & set(lines)
        assert lines[transcript.scroll_offset.y] == top

        await pilot.press("f3")
        await pilot.pause()
        lines = written(transcript)
        assert lines[:3] == ["— The customer asked for a person.", "Customer  09:00",
                             "Message 1: my bike will not unlock."]  # fmt: skip
        assert [line for line in lines if "earlier message" in line] == []
        assert all(text in lines for text in texts)
        assert transcript.hidden == 0
        assert "f3 Earlier" not in await footer_line(pilot)


async def test_new_messages_append_while_earlier_ones_are_hidden(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        conversation = long_conversation(other, MESSAGES)
        view = await app.open_conversation(conversation)
        await pilot.pause()
        other.ask(conversation, "[b]Live[/b]: it unlocked!")
        transcript = view.query_one(Transcript)
        await wait_until(pilot, lambda: "[b]Live[/b]: it unlocked!" in written(transcript))
        lines = written(transcript)
        assert lines[-2:] == ["Customer  09:00", "[b]Live[/b]: it unlocked!"]
        assert transcript.hidden == MESSAGES - PAGE  # Arriving messages reveal nothing earlier.

        await pilot.press("f3")
        await pilot.press("f3")
        await pilot.pause()
        lines = written(transcript)
        assert lines[-2:] == ["Customer  09:00", "[b]Live[/b]: it unlocked!"]
        assert lines.count("[b]Live[/b]: it unlocked!") == 1
        assert all(shown(entry) in lines for entry in other.entries(conversation))


async def test_a_short_conversation_shows_everything_and_offers_nothing_earlier(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        conversation = long_conversation(other, PAGE)
        view = await app.open_conversation(conversation)
        await pilot.pause()
        lines = written(view.query_one(Transcript))
        assert lines[:3] == ["— The customer asked for a person.", "Customer  09:00",
                             "Message 1: my bike will not unlock."]  # fmt: skip
        assert "f3 Earlier" not in await footer_line(pilot)
        assert not view.check_action("show_earlier", ())
        assert isinstance(app.screen.query_one(ConversationView), ConversationView)


def test_beyond_a_thousand_the_earlier_line_says_over() -> None:
    from chatbot.tui.widgets.transcript import earlier_line

    assert (
        earlier_line(1000, exact=False)
        == "— over 1,000 earlier messages — press F3 to show 100 more"
    )
    assert earlier_line(1) == "— 1 earlier message — press F3 to show them"


async def test_each_message_and_note_says_when_it_was_written(
    make_app: MakeApp, other: DeskService, clock: FrozenClock
) -> None:
    """An agent picking a conversation up needs to know whether the customer wrote a minute or a
    day ago: a time today, the date too before today, the year too before this year."""
    conversation = other.start_conversation().id
    clock.now = datetime(2025, 12, 31, 23, 30, tzinfo=UTC)
    other.talk_to_person(conversation)
    other.ask(conversation, "Last year's question.")
    clock.now = datetime(2026, 1, 4, 18, 5, tzinfo=UTC)
    other.ask(conversation, "Yesterday's question.")
    clock.now = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    other.claim(conversation, agent="ana")
    clock.advance(90)
    other.add_note(conversation, agent="ana", text="Refund approved.")
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(conversation)
        await pilot.pause()
        transcript = view.query_one(Transcript)
        lines = written(transcript)
        assert lines[lines.index("Last year's question.") - 1] == "Customer  2025-12-31 23:30"
        assert lines[lines.index("Yesterday's question.") - 1] == "Customer  01-04 18:05"
        note = next(line for line in lines if line.startswith("▌ ") and "09:01" in line)
        assert lines[lines.index(note) + 1] == "▌ Refund approved."
        # A message arriving while the conversation is open gets its time too.
        clock.advance(60)
        other.ask(conversation, "Still there?")
        await wait_until(pilot, lambda: "Still there?" in written(transcript))
        lines = written(transcript)
        assert lines[lines.index("Still there?") - 1] == "Customer  09:02"


def test_a_moment_is_local_and_says_the_date_only_when_needed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    assert moment(now - timedelta(minutes=3), now=now) == "08:57"
    # In Shanghai (UTC+8) 20:00 UTC on the 4th is already the 5th: today, there.
    monkeypatch.setenv("TZ", "Asia/Shanghai")
    time.tzset()
    try:
        assert moment(datetime(2026, 1, 4, 20, 0, tzinfo=UTC), now=now) == "04:00"
        assert moment(datetime(2026, 1, 4, 15, 0, tzinfo=UTC), now=now) == "01-04 23:00"
    finally:
        monkeypatch.undo()
        time.tzset()
    assert moment(datetime(2026, 1, 4, 20, 0, tzinfo=UTC), now=now) == "01-04 20:00"
