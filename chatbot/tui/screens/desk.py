"""`helpdesk`: the customer chat and the agent console side by side, for trying the whole loop."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Header, Input

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

    def on_key(self, event: events.Key) -> None:
        # A key typed while the customer's transcript has the focus is meant for their question
        # box: put it there instead of dropping it (the agent's side does the same for its own).
        focused = self.focused
        if not (event.is_printable and event.character) or isinstance(focused, Input):
            return
        chat = self.query_one(ChatPanel)
        if focused is not None and chat in focused.ancestors_with_self:
            field = chat.query_one("#question", Input)
            if field.disabled:
                return
            event.stop()
            field.select_on_focus = (
                False  # Else focusing selects the draft, and the key replaces it.
            )
            field.focus()
            field.cursor_position = len(field.value)
            field.insert_text_at_cursor(event.character)
