"""`helpdesk agent`: the agent console alone."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Header

from chatbot.tui.services import Services
from chatbot.tui.widgets.agent_console import AgentConsole
from chatbot.tui.widgets.footer import Footer


class AgentScreen(Screen[None]):
    """The handoff queue, full width; a conversation opens in its place."""

    AUTO_FOCUS = "QueueTable"
    # Below 100 columns the conversation's candidates go under the transcript (see app.tcss).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]

    def __init__(self, services: Services, *, conversation_id: int | None = None) -> None:
        super().__init__()
        self.services = services
        self.conversation_id = conversation_id

    def compose(self) -> ComposeResult:
        yield Header()
        yield AgentConsole(self.services, id="console")
        yield Footer()

    async def on_mount(self) -> None:
        if self.conversation_id is not None:
            await self.query_one(AgentConsole).open_conversation(self.conversation_id)
