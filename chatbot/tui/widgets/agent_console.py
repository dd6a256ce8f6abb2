"""The agent's side: the handoff queue, and one conversation opened from it in its place."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from chatbot.tui.commands import PaletteCommand
from chatbot.tui.services import Services
from chatbot.tui.widgets.conversation_view import ConversationView
from chatbot.tui.widgets.queue_list import QueueList


class AgentConsole(Vertical):
    """Queue first; opening a conversation shows it here, Escape returns to the queue."""

    def __init__(self, services: Services, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.services = services

    def compose(self) -> ComposeResult:
        yield Static("Handoff queue", classes="section-title", id="queue-title")
        yield QueueList(self.services, id="queue")

    @property
    def open_view(self) -> ConversationView | None:
        views = self.query(ConversationView)
        return views.first() if views else None

    async def open_conversation(self, conversation_id: int) -> ConversationView:
        """Show one conversation by id (also the way in for benchmarks and tests)."""
        await self.services.desk.conversation(conversation_id)  # Unknown ids fail here.
        if (current := self.open_view) is not None:
            await current.remove()
        view = ConversationView(self.services, conversation_id, id="conversation")
        self.query_one(QueueList).display = False
        self.query_one("#queue-title").display = False
        await self.mount(view)
        await view.loaded.wait()
        return view

    async def close_conversation(self) -> None:
        if (current := self.open_view) is not None:
            await current.remove()
        queue = self.query_one(QueueList)
        queue.display = True
        self.query_one("#queue-title").display = True
        queue.table.focus()
        await queue.reload()

    @on(QueueList.Opened)
    async def _opened(self, event: QueueList.Opened) -> None:
        await self.open_conversation(event.conversation_id)

    @on(ConversationView.Closed)
    async def _conversation_closed(self, event: ConversationView.Closed) -> None:
        await self.close_conversation()

    def palette_commands(self) -> list[PaletteCommand]:
        commands = []
        for item in self.query_one(QueueList).items:  # As last read: the palette opens at once.
            number = item.conversation_id
            reason = item.reason.value if item.reason else "no reason"
            commands.append(
                PaletteCommand(
                    f"Open conversation #{number}",
                    f"{item.state.value}, {reason}",
                    lambda number=number: self.open_conversation(number),  # type: ignore[misc]
                )
            )
        return commands
