"""Keys that reach the queue in one burst with the Enter that opens a conversation (a laggy SSH
link, `tmux send-keys Enter C-l`): they act, in order, in the conversation Enter opened, as if
typed once it was on screen; if it does not open, they do nothing."""

from __future__ import annotations

import pytest
from textual import events

from chatbot.desk.service import DeskService
from chatbot.errors import HelpdeskError
from chatbot.tui import HelpDeskApp
from chatbot.tui.screens.find import FindScreen
from chatbot.tui.widgets.agent_console import AgentConsole
from chatbot.tui.widgets.conversation_view import ConversationView
from chatbot.tui.widgets.queue_list import QueueTable
from tests.tui.conftest import SIZE, MakeApp
from tests.tui.desk_helpers import waiting
from tests.tui.helpers import queue_rows, wait_until

CHARACTERS = {"enter": "\r", "ctrl+l": "\x0c"}


def burst(app: HelpDeskApp, *keys: str) -> None:
    """Keys as the terminal delivers them in one write: all sent before the app handles any
    (a named key, `enter` or `ctrl+l`, or a letter)."""
    driver = app._driver
    assert driver is not None
    for key in keys:
        event = events.Key(key, CHARACTERS.get(key, key))
        event.set_sender(app)
        driver.send_message(event)


def console(app: HelpDeskApp) -> AgentConsole:
    return app.screen.query_one(AgentConsole)


async def test_ctrl_l_right_after_enter_claims_the_conversation_enter_opened(
    make_app: MakeApp, other: DeskService
) -> None:
    """Opened but not claimed, without a word: Ctrl+L reached the queue before the conversation
    was shown, where it does nothing."""
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        conversation = waiting(other)
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1)
        app.screen.query_one(QueueTable).focus()
        await pilot.pause()
        burst(app, "enter", "ctrl+l")
        await wait_until(pilot, lambda: other.conversation(conversation).agent == "ana")
        view = console(app).open_view
        assert view is not None and view.conversation_id == conversation
        await wait_until(pilot, lambda: view.is_mine and view.reply_input.has_focus)


async def test_text_right_after_enter_goes_to_the_reply_box_not_to_find(
    make_app: MakeApp, other: DeskService
) -> None:
    """On a conversation the agent holds, the text opened Find with it, and the conversation did
    not open: the letters reached the queue before the Enter's binding ran."""
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        conversation = waiting(other)
        assert other.claim(conversation, agent="ana").won
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1)
        app.screen.query_one(QueueTable).focus()
        await pilot.pause()
        agent = console(app)
        burst(app, "enter", *"hello")
        await wait_until(pilot, lambda: agent.open_view is not None)
        view = agent.open_view
        assert view is not None
        await wait_until(pilot, lambda: view.reply_input.value == "hello")
        assert isinstance(view, ConversationView) and view.conversation_id == conversation
        assert view.reply_input.has_focus
        assert not any(isinstance(screen, FindScreen) for screen in app.screen_stack)


async def test_keys_after_an_enter_that_opens_nothing_do_nothing(
    make_app: MakeApp, other: DeskService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The conversation cannot be read: the keys typed after Enter were meant for it, and neither
    search the queue nor wait to land somewhere later."""
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        waiting(other)
        await wait_until(pilot, lambda: len(queue_rows(app)) == 1)
        table = app.screen.query_one(QueueTable)
        table.focus()
        await pilot.pause()

        async def refused(conversation_id: int) -> None:
            raise HelpdeskError("Conversation 1 is gone.")

        monkeypatch.setattr(app.services.desk, "conversation", refused)
        burst(app, "enter", *"hi")
        await wait_until(pilot, lambda: any(
            "Conversation 1 is gone." in str(n.message) for n in app._notifications
        ))  # fmt: skip
        await pilot.pause()
        assert not any(isinstance(screen, FindScreen) for screen in app.screen_stack)
        assert console(app).open_view is None and table.has_focus
        await pilot.press("x")  # Typing on the queue searches again.
        await wait_until(pilot, lambda: isinstance(app.screen, FindScreen))


async def test_enter_right_after_down_opens_the_row_down_moved_to(
    make_app: MakeApp, other: DeskService
) -> None:
    """Down and Enter in one burst opened (and with Ctrl+L claimed) the row the cursor had left:
    an agent replied to the wrong customer. Moves are taken in turn with Enter."""
    app = make_app("agent")
    async with app.run_test(size=SIZE) as pilot:
        first, second, third = waiting(other), waiting(other), waiting(other)
        await wait_until(pilot, lambda: len(queue_rows(app)) == 3)
        table = app.screen.query_one(QueueTable)
        table.focus()
        table.move_cursor(0)
        await pilot.pause()
        rows = [item.conversation_id for item in table.items]
        on_top, expected = rows[0], rows[1]
        assert table.selected_id == on_top and sorted(rows) == [first, second, third]
        burst(app, "down", "down", "up", "enter", "ctrl+l")
        await wait_until(pilot, lambda: console(app).open_view is not None)
        view = console(app).open_view
        assert view is not None and view.conversation_id == expected != on_top
        await wait_until(pilot, lambda: other.conversation(view.conversation_id).agent == "ana")
        await wait_until(pilot, lambda: view.is_mine and view.reply_input.has_focus)
        assert other.conversation(on_top).agent is None
