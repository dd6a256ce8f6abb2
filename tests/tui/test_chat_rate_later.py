"""A terminal customer whose conversation a person resolved is asked to rate it, even across a
quit: a `5` typed for the prompt just before Ctrl+Q went to a new chat as a question (and to a
person), and a conversation resolved while they were away was never offered for rating. Once
rated, a lone digit typed again is not sent: it reopened the conversation for a person."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from chatbot.desk.models import Author, State
from chatbot.desk.service import DeskService
from chatbot.tui.screens.chat import ResumedNote
from tests.tui.conftest import Q1, FrozenClock
from tests.tui.helpers import flat, screen_text, type_text, wait_until
from tests.tui.resume_helpers import (
    SIZE,
    START_S,
    ask_for_a_person,
    chat_ready,
    state,
    terminal_app,
)

__all__ = ["state"]


@pytest.fixture
def clock() -> FrozenClock:
    """Now, as the command's own clock reads it: a conversation resolved long before is not
    offered again for its rating."""
    now = FrozenClock()
    now.now = datetime.now(UTC)
    return now


async def test_a_rating_typed_before_quitting_is_asked_for_again_and_taken(
    db_path: Path, state: Path, other: DeskService
) -> None:
    command = f"helpdesk chat --db {db_path} --no-bot"
    app = terminal_app("chat", db=db_path)
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_ready(pilot, app)
        await ask_for_a_person(pilot, panel)
        await wait_until(pilot, lambda: other.conversation(1).state is State.WAITING)
        other.claim(1, agent="ben")
        other.resolve(1, agent="ben")
        await wait_until(pilot, lambda: panel.rating.display, timeout=START_S)
        panel.question.focus()  # Where the tester's cursor was (on the prompt, 5 rates).
        await type_text(pilot, "5")  # Meant for the prompt; not sent before quitting.
        assert panel.rating.display and panel.question.value == "5"
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: not app.is_running, timeout=START_S)
    assert app.farewell == f"Conversation #1 waits for your rating: `{command}` opens it again."

    again = terminal_app("chat", db=db_path)
    async with again.run_test(size=SIZE) as pilot:
        panel = await chat_ready(pilot, again)
        await wait_until(pilot, lambda: panel.question.value == "5", timeout=START_S)
        assert panel.conversation_id == 1
        await wait_until(pilot, lambda: panel.rating.display, timeout=START_S)
        panel.question.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: other.rating_due(1) is None, timeout=START_S)
        assert "rated this conversation 5 out of 5" in flat(screen_text(again))
        # Typed again, a lone digit is no message for a person.
        await type_text(pilot, "4")
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: "already rated" in flat(screen_text(again)), timeout=START_S
        )
        assert panel.question.value == "4"  # Not sent, and kept in the box to correct.
        await pilot.press("backspace")
        await type_text(pilot, "thanks")  # Left unsent in the rated conversation.
        await pilot.press("ctrl+q")
    # Kept, for a new chat (the rated conversation is not opened again), and said so.
    assert again.farewell == f"What you typed is kept: `{command}` puts it back."
    assert other.conversation(1).state is State.RESOLVED
    customer = [m.text for m in other.messages(1) if m.author is Author.CUSTOMER]
    assert customer == [Q1]

    # Rated: the next run is a new chat.
    third = terminal_app("chat", db=db_path)
    async with third.run_test(size=SIZE) as pilot:
        panel = await chat_ready(pilot, third)
        await wait_until(pilot, lambda: panel.question.value == "thanks", timeout=START_S)
        assert panel.conversation_id is None


async def test_a_conversation_resolved_while_away_opens_again_for_its_rating(
    db_path: Path, state: Path, other: DeskService
) -> None:
    app = terminal_app("chat", db=db_path)
    async with app.run_test(size=SIZE) as pilot:
        panel = await chat_ready(pilot, app)
        await ask_for_a_person(pilot, panel)
        await wait_until(pilot, lambda: other.conversation(1).state is State.WAITING)
        await pilot.press("ctrl+q")
    other.claim(1, agent="ben")
    other.resolve(1, agent="ben")

    again = terminal_app("chat", db=db_path)
    async with again.run_test(size=SIZE) as pilot:
        panel = await chat_ready(pilot, again)
        await wait_until(pilot, lambda: panel.rating.display, timeout=START_S)
        assert panel.conversation_id == 1
        # Said above the transcript (scrolled off at 60x20, under the prompt).
        await wait_until(pilot, lambda: bool(panel.query(ResumedNote)), timeout=START_S)
        # Something else typed in a rated, resolved conversation is said as before.
        await type_text(pilot, "thanks")
        await pilot.press("ctrl+q")
    assert again.farewell == (
        f"Conversation #1 waits for your rating: `helpdesk chat --db {db_path} --no-bot` "
        "opens it again."
    )
