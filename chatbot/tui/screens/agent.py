"""`helpdesk agent`: the agent console alone."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.widget import Widget

from chatbot.tui.screens.mode import ModeScreen
from chatbot.tui.widgets.footer import Footer
from chatbot.tui.widgets.header import Header

if TYPE_CHECKING:
    from chatbot.tui.services import Services


class AgentScreen(ModeScreen):
    """The handoff queue, full width; a conversation opens in its place."""

    AUTO_FOCUS = "QueueTable"
    # Below 100 columns the conversation's candidates go under the transcript (see app.tcss).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]

    def compose(self) -> ComposeResult:
        yield Header()
        yield self.panel(self._make_console, "console")
        yield Footer()

    def _make_console(self, services: Services) -> Widget:
        # Imported when first built: `helpdesk agent` shows this screen loading before it loads
        # the console (and the desk models under it).
        from chatbot.tui.widgets.agent_console import AgentConsole

        return AgentConsole(services, id="console")

    async def on_mount(self) -> None:
        if self.services is not None:
            await self.started()

    async def started(self) -> None:
        from chatbot.tui.widgets.agent_console import AgentConsole

        if self.conversation_id is not None:
            await self.query_one(AgentConsole).open_conversation(self.conversation_id)
