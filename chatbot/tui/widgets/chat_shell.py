"""The customer chat as `helpdesk` first shows it, while its settings load and its desk opens: the
welcome and a question box that takes typing at once.

The chat panel takes its place a fraction of a second later, with whatever was typed (and asked,
if Enter was pressed meanwhile). This module loads before the first screen, so it imports Textual
and the translations only: no pydantic, no desk.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Input, Static

from chatbot.i18n import DEFAULT_LOCALE, N_, Locale, translations
from chatbot.tui.widgets.plain_input import PlainInput

WELCOME = N_(
    "Hi! Ask anything about renting, riding, returning or paying for a bike. "
    "The bot answers from the help center; a person takes over when it cannot."
)
PLACEHOLDER = N_("Type your question, press Enter")


class ShellQuestion(PlainInput):
    """The shell's question box: it notes each question sent with Enter as the key is handled,
    so the chat panel taking its place knows of them even if their `Submitted` messages were
    still on their way."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sent: list[str] = []
        """The questions Enter was pressed on, in order: the chat asks them once it is there."""

    async def action_submit(self) -> None:
        if self.value.strip():
            # Taken off the box, as the chat's own box does: the words typed after this Enter
            # are the next question's, not this one's end ("bike?" Enter "thanks" was sent as
            # "bike?thanks").
            self.sent.append(self.value)
            self.value = ""
        await super().action_submit()


class ChatShell(Vertical):
    """The chat's layout (the same ids, so the same CSS) with the welcome and the question box."""

    def __init__(self, *, locale: Locale = DEFAULT_LOCALE, id: str | None = None) -> None:
        super().__init__(id=id)
        self.locale = locale

    def compose(self) -> ComposeResult:
        t = translations(self.locale)
        # The status line and the language switch need the desk: they come with the panel.
        yield Horizontal(id="chat-top")
        with VerticalScroll(id="chat-log"):
            yield Static(Text(t.gettext(WELCOME)), classes="welcome", id="chat-welcome")
        yield ShellQuestion(
            placeholder=t.gettext(PLACEHOLDER), id="question", select_on_focus=False
        )

    @property
    def question(self) -> ShellQuestion:
        return self.query_one("#question", ShellQuestion)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()  # Noted by the box itself (`ShellQuestion.sent`).
