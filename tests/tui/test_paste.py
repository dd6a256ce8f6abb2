"""A paste of several lines into a one-line box keeps every line, joined by spaces: Textual's
`Input` keeps the first line only, and a customer's question pasted from an email went out cut
short, without a word."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual.widgets import Input

from chatbot.config import Settings
from chatbot.desk.models import Author
from chatbot.desk.service import DeskService
from tests.tui.conftest import SIZE, MakeApp, editor_settings
from tests.tui.helpers import wait_until

PASTED = "I was charged twice\r\nfor the same ride.\n\n   Can I get my money back?\n"
JOINED = "I was charged twice for the same ride. Can I get my money back?"


@pytest.fixture
def settings(db_path: Path, kb_copy: Path) -> Settings:
    return editor_settings(db_path, kb_copy)


async def test_a_customer_pastes_a_question_of_several_lines(
    make_app: MakeApp, other: DeskService
) -> None:
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        box = app.screen.query_one("#question", Input)
        box.focus()
        box.value = "Hello. "
        box.cursor_position = len(box.value)
        app.post_message(events.Paste(PASTED))
        await wait_until(pilot, lambda: box.value == "Hello. " + JOINED)
        await pilot.press("enter")
        [conversation] = other.conversations()
        await wait_until(pilot, lambda: bool(other.messages(conversation.id)))
        [question] = other.messages(conversation.id)
        assert question.text == "Hello. " + JOINED


async def test_an_agent_pastes_a_reply_and_an_editor_a_title(
    make_app: MakeApp, other: DeskService
) -> None:
    conversation = other.start_conversation().id
    other.talk_to_person(conversation)
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await app.open_conversation(conversation)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: other.conversation(conversation).agent == "ana")
        view.reply_input.focus()
        app.post_message(events.Paste("Step 1: dock the bike.\nStep 2: wait for the beep."))
        await wait_until(pilot, lambda: bool(view.reply_input.value))
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(m.author is Author.AGENT
                                            for m in other.messages(conversation)))  # fmt: skip
        [reply] = [m for m in other.messages(conversation) if m.author is Author.AGENT]
        assert reply.text == "Step 1: dock the bike. Step 2: wait for the beep."
        # The editor's fields (which also drop control characters) join a paste the same way.
        await pilot.press("f2")
        await app.workers.wait_for_complete()
        await pilot.press("ctrl+n")
        title = app.screen.query_one("#form-title", Input)
        await wait_until(pilot, lambda: title.display)
        title.focus()
        app.post_message(events.Paste("Lost\nand found\x1b[31m"))
        await wait_until(pilot, lambda: title.value == "Lost and found")
