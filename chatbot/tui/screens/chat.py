"""`helpdesk chat`: the customer chat alone."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Header

from chatbot.tui.screens.mode import ModeScreen
from chatbot.tui.widgets.footer import Footer

if TYPE_CHECKING:
    from chatbot.tui.services import Services


class ChatScreen(ModeScreen):
    """One customer conversation, full width."""

    AUTO_FOCUS = "#question"

    def compose(self) -> ComposeResult:
        yield Header()
        yield self.panel(self._make_chat, "chat", shell=True)
        yield Footer()

    def _make_chat(self, services: Services) -> Widget:
        # Imported when first built: `helpdesk chat` shows this screen loading before it loads
        # the panel (and the desk models under it).
        from chatbot.tui.widgets.chat_panel import ChatPanel

        return ChatPanel(services, conversation_id=self.conversation_id, id="chat")

    async def started(self) -> None:
        from chatbot.tui.widgets.chat_panel import ChatPanel

        chat = self.query_one(ChatPanel)
        await self.send_typed(chat.question, chat.ask)

    def on_chat_panel_locale_changed(self, event: Message) -> None:
        # The whole screen is the customer's: the app's keys and title follow their language.
        # (Handled by name: the panel's module loads after this screen is first shown.)
        show_in = getattr(self.app, "show_in", None)
        locale = getattr(event, "locale", None)
        if show_in is not None and locale is not None:
            show_in(locale)
