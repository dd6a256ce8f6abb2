"""`helpdesk`: the customer chat and the agent console side by side, for trying the whole loop."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Header, Input

from chatbot.tui.screens.mode import ModeScreen
from chatbot.tui.widgets.footer import Footer

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

    def on_key(self, event: events.Key) -> None:
        if self.services is None:
            return  # The chat's shell has its own question box meanwhile.
        from chatbot.tui.widgets.chat_panel import ChatPanel

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
