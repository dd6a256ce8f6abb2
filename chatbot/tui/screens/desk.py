"""`helpdesk`: the customer chat and the agent console side by side, for trying the whole loop."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widget import Widget

from chatbot.tui.screens.mode import ModeScreen
from chatbot.tui.widgets.footer import Footer
from chatbot.tui.widgets.header import Header

if TYPE_CHECKING:
    from chatbot.tui.services import Services


class DeskScreen(ModeScreen):
    """Left: a customer's chat. Right: the handoff queue and the conversation an agent opens."""

    AUTO_FOCUS = "#question"

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="desk"):
            yield self.panel(self._make_chat, "chat", shell=True)
            yield self.panel(self._make_console, "console")
        yield Footer()

    # The panels are imported when first built: `helpdesk` shows this screen loading before it
    # loads them (and the desk models under them).

    def _make_chat(self, services: Services) -> Widget:
        from chatbot.tui.widgets.chat_panel import ChatPanel

        return ChatPanel(services, conversation_id=self.conversation_id, id="chat")

    def _make_console(self, services: Services) -> Widget:
        from chatbot.tui.widgets.agent_console import AgentConsole

        return AgentConsole(services, id="console")

    async def started(self) -> None:
        from chatbot.tui.widgets.chat_panel import ChatPanel

        chat = self.query_one(ChatPanel)
        await self.send_typed(chat.question, chat.ask)
