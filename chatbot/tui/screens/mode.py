"""What the screens `helpdesk` opens first (chat, agent, both) share: they can be shown before the
desk is open.

`helpdesk` paints its first screen before it loads its settings (pydantic-settings) and opens the
desk (issue 13: start-up within 1.5x a bare Textual app). Until the app calls `start`, the chat is
its shell (the welcome and a question box taking typing at once) and the agent console a loading
indicator; what the customer typed goes into the chat's question box, and a question sent with
Enter meanwhile is asked then.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from textual import events
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, LoadingIndicator

from chatbot.tui.widgets.chat_shell import ChatShell

if TYPE_CHECKING:
    from chatbot.tui.services import Services

PanelFactory = Callable[["Services"], Widget]


class ModeScreen(Screen[None]):
    """A screen whose panels need the desk: built at once when `services` is given, else stood in
    for (the chat by its shell, the rest by loading indicators) until `start`."""

    def __init__(self, services: Services | None, *, conversation_id: int | None = None) -> None:
        super().__init__()
        self.services = services
        self.conversation_id = conversation_id
        self._pending: dict[str, PanelFactory] = {}
        self._typed = ""
        """What the customer typed before the question box was there."""
        self._send_typed = False
        """They pressed Enter meanwhile: ask it once the chat is there."""
        self._cursor: int | None = None
        """Where the shell's text cursor was (None: at the end)."""

    def panel(self, make: PanelFactory, id: str, *, shell: bool = False) -> Widget:
        """The panel `make` builds, or (no services yet) in its place the chat's shell (with
        `shell`) or a loading indicator."""
        if self.services is not None:
            return make(self.services)
        self._pending[id] = make
        return ChatShell(id=id) if shell else LoadingIndicator(id=id)

    def on_key(self, event: events.Key) -> None:
        if self.services is not None or isinstance(self.focused, Input):
            return  # The chat's shell has its own question box, which keeps what is typed.
        # No panel has the focus yet, so the keys come here: keep the customer's question.
        if event.key == "enter":
            self._send_typed = bool(self._typed.strip())
        elif event.key == "backspace":
            self._typed = self._typed[:-1]
        elif event.is_printable and event.character:
            self._typed += event.character
        else:
            return
        event.stop()

    async def start(self, services: Services) -> None:
        """Put the real panels in place of what stood in for them."""
        self.services = services
        for id, make in self._pending.items():
            placeholder = self.query_one(f"#{id}")
            if isinstance(placeholder, ChatShell):
                # The customer may have typed (and sent) a question into the shell already.
                self._typed = placeholder.question.value + self._typed
                self._send_typed = self._send_typed or placeholder.submitted
                self._cursor = placeholder.question.cursor_position
            parent = placeholder.parent
            assert isinstance(parent, Widget)
            # Removed first: the panel takes its id, which must stay unique among siblings.
            index = parent.children.index(placeholder)
            await placeholder.remove()
            panel = make(services)
            await parent.mount(panel, before=index if index < len(parent.children) else None)
        self._pending.clear()
        # As Textual does when a screen is shown: the first focusable match of `AUTO_FOCUS`.
        if self.AUTO_FOCUS and self.focused is None:
            for widget in self.query(self.AUTO_FOCUS):
                if widget.focusable:
                    self.set_focus(widget)
                    break
        await self.started()

    async def started(self) -> None:
        """The panels are in place (a subclass hands them what was typed, or opens the
        conversation asked for)."""

    async def send_typed(self, field: Input, ask: Callable[[str], Awaitable[None]]) -> None:
        """Put what was typed before the chat was there into its question box, and ask it if
        the customer pressed Enter."""
        typed, send = self._typed, self._send_typed
        self._typed, self._send_typed = "", False
        if not typed:
            return
        field.value = typed
        # Where the customer left the cursor in the shell, so an edit in progress goes on there.
        cursor, self._cursor = self._cursor, None
        field.cursor_position = len(typed) if cursor is None else min(cursor, len(typed))
        if send:
            await ask(typed)
