"""A paste of several lines into a one-line box keeps every line, joined by spaces: Textual's
`Input` keeps the first line only, and a customer's question pasted from an email went out cut
short, without a word."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual.widgets import Input, OptionList, Static

from chatbot.config import Settings
from chatbot.desk.models import Author, ChatEvent, Note
from chatbot.desk.service import DeskService
from chatbot.tui.screens.editor import EditorScreen
from chatbot.tui.screens.find import FindScreen
from chatbot.tui.widgets.chat_log import ChatLog
from chatbot.tui.widgets.passage_list import PassageList
from chatbot.tui.widgets.plain_input import joined_lines
from chatbot.tui.widgets.queue_list import QueueTable
from chatbot.tui.widgets.transcript import Transcript
from tests.tui.conftest import SIZE, MakeApp, editor_settings
from tests.tui.desk_helpers import asked_for_a_person, claim
from tests.tui.helpers import queue_rows, wait_until

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


def test_a_paste_that_starts_with_a_space_keeps_it_apart_from_the_word_before() -> None:
    # "abc" then a paste of " My\nline two" gave "abcMy line two".
    assert joined_lines(" My\nline two") == " My line two"
    assert joined_lines("\n  My\nline two\n") == " My line two"
    assert joined_lines("My\nline two\n") == "My line two"
    assert joined_lines(" \n \n") == ""


async def test_an_agent_pastes_a_reply_and_an_editor_a_title(
    make_app: MakeApp, other: DeskService
) -> None:
    conversation = asked_for_a_person(other)
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await claim(pilot, other, conversation)
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


async def test_a_reply_or_note_over_the_limit_says_how_far_and_keeps_the_words(
    make_app: MakeApp, other: DeskService
) -> None:
    """With whole pastes kept, a log pasted by mistake would reach the customer whole: a reply
    is at most as long as a passage, a note as before, and the box says by how much."""
    conversation = asked_for_a_person(other)
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await claim(pilot, other, conversation)
        box = view.reply_input
        box.focus()
        app.post_message(events.Paste("line\n" * 1000))  # 4,999 characters once joined.
        await wait_until(pilot, lambda: len(box.value) == 4999)
        await pilot.press("enter")
        hint = view.query_one("#reply-hint", Static)
        await wait_until(pilot, lambda: "Your reply has 4,999 characters; the limit is 4,000."
                         in str(hint.render()))  # fmt: skip
        assert len(box.value) == 4999
        await pilot.press("ctrl+n")
        box.value = "x" * 4001
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Your note has 4,001 characters; the limit is 4,000."
                         in str(hint.render()))  # fmt: skip
        assert box.value == "x" * 4001
        assert other.messages(conversation) == []
        assert not [
            e
            for e in other.entries(conversation)
            if isinstance(e, ChatEvent) and isinstance(e.event, Note)
        ]


async def test_a_paste_on_the_conversation_goes_to_the_box_below_it(
    make_app: MakeApp, other: DeskService
) -> None:
    """Typing on the customer's conversation or the agent's transcript already went to the box
    below it; a paste there (a customer clicks the chat, then pastes) was lost without a word."""
    app = make_app("chat", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        log = app.screen.query_one(ChatLog)
        log.focus()
        await pilot.pause()
        app.post_message(events.Paste(PASTED))
        box = app.screen.query_one("#question", Input)
        await wait_until(pilot, lambda: box.value == JOINED and box.has_focus)
    conversation = asked_for_a_person(other)
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await claim(pilot, other, conversation)
        view.query_one(Transcript).focus()
        await pilot.pause()
        app.post_message(events.Paste("Dock it\nat any station."))
        reply = view.reply_input
        await wait_until(
            pilot, lambda: reply.value == "Dock it at any station." and reply.has_focus
        )


async def test_a_paste_on_the_queue_or_the_passage_list_searches_for_it(
    make_app: MakeApp, other: DeskService
) -> None:
    """Letters typed on the queue start a search, and on the editor's list go to its search box;
    a paste there does the same instead of vanishing."""
    asked_for_a_person(other)
    app = make_app("agent", bot=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1)
        app.screen.query_one(QueueTable).focus()
        await pilot.pause()
        app.post_message(events.Paste("helmet\n"))
        await wait_until(pilot, lambda: isinstance(app.screen, FindScreen))
        assert app.screen.query_one("#find-input", Input).value == "helmet"
        await pilot.press("escape")
        await pilot.press("f2")
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: isinstance(app.screen, EditorScreen))
        app.screen.query_one(PassageList).query_one(OptionList).focus()
        await pilot.pause()
        app.post_message(events.Paste("refund\ntime"))
        search = app.screen.query_one("#passage-search", Input)
        await wait_until(pilot, lambda: search.value == "refund time" and search.has_focus)
