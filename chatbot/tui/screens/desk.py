"""`helpdesk`: the customer chat and the agent console side by side, for trying the whole loop."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Header

from chatbot.tui.services import Services
from chatbot.tui.widgets.agent_console import AgentConsole
from chatbot.tui.widgets.chat_panel import ChatPanel
from chatbot.tui.widgets.footer import Footer


class DeskScreen(Screen[None]):
    """Left: a customer's chat. Right: the handoff queue and the conversation an agent opens."""

    AUTO_FOCUS = "#question"

    def __init__(self, services: Services, *, conversation_id: int | None = None) -> None:
        super().__init__()
        self.services = services
        self.conversation_id = conversation_id

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="desk"):
            yield ChatPanel(self.services, conversation_id=self.conversation_id, id="chat")
            yield AgentConsole(self.services, id="console")
        yield Footer()
