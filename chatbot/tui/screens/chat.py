"""`helpdesk chat`: the customer chat alone."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Header

from chatbot.tui.services import Services
from chatbot.tui.widgets.chat_panel import ChatPanel
from chatbot.tui.widgets.footer import Footer


class ChatScreen(Screen[None]):
    """One customer conversation, full width."""

    AUTO_FOCUS = "#question"

    def __init__(self, services: Services, *, conversation_id: int | None = None) -> None:
        super().__init__()
        self.services = services
        self.conversation_id = conversation_id

    def compose(self) -> ComposeResult:
        yield Header()
        yield ChatPanel(self.services, conversation_id=self.conversation_id, id="chat")
        yield Footer()

    @on(ChatPanel.LocaleChanged)
    def _locale_changed(self, event: ChatPanel.LocaleChanged) -> None:
        # The whole screen is the customer's: the app's keys and title follow their language.
        show_in = getattr(self.app, "show_in", None)
        if show_in is not None:
            show_in(event.locale)
