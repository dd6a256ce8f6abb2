"""Typing after clicking the conversation goes to the question box, as a customer expects."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widgets import Input

from tests.tui.conftest import SIZE, MakeApp


async def test_typing_with_the_conversation_focused_goes_to_the_question(
    make_app: MakeApp,
) -> None:
    app = make_app("chat")
    async with app.run_test(size=SIZE) as pilot:
        log = app.screen.query_one("#chat-log", VerticalScroll)
        await pilot.click("#chat-log")
        assert app.screen.focused is log
        await pilot.press("h", "i", "ctrl+y")  # A binding still works as a binding.
        field = app.screen.query_one("#question", Input)
        assert field.has_focus and field.value == "hi"
        log.focus()
        await pilot.press("pagedown")  # Keys that are not characters still scroll the log.
        assert app.screen.focused is log and field.value == "hi"
