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

from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input

from chatbot.i18n import DEFAULT_LOCALE, Locale
from chatbot.tui.base_app import auto_focus
from chatbot.tui.widgets.busy_dots import BusyDots
from chatbot.tui.widgets.chat_shell import ChatShell

if TYPE_CHECKING:
    from chatbot.tui.services import Services

PanelFactory = Callable[["Services"], Widget]


class ModeScreen(Screen[None]):
    """A screen whose panels need the desk: built at once when `services` is given, else stood in
    for (the chat by its shell, the rest by loading indicators) until `start`."""

    def __init__(
        self,
        services: Services | None,
        *,
        conversation_id: int | None = None,
        customer_locale: Locale = DEFAULT_LOCALE,
    ) -> None:
        super().__init__()
        self.services = services
        self.conversation_id = conversation_id
        self.customer_locale = customer_locale
        """The language the chat's shell is shown in (the chat panel's until the customer
        writes)."""
        self._pending: dict[str, PanelFactory] = {}
        self._typed: tuple[list[str], str, int] | None = None
        """What the customer sent from the chat's shell (Enter pressed on it), what they typed
        there since, and where its cursor was: handed to the chat panel once it is there."""

    def panel(self, make: PanelFactory, id: str, *, shell: bool = False) -> Widget:
        """The panel `make` builds, or (no services yet) in its place the chat's shell (with
        `shell`) or a loading indicator."""
        if self.services is not None:
            return make(self.services)
        self._pending[id] = make
        return ChatShell(locale=self.customer_locale, id=id) if shell else BusyDots(id=id)

    async def start(self, services: Services) -> None:
        """Put the real panels in place of what stood in for them."""
        self.services = services
        for id, make in self._pending.items():
            placeholder = self.query_one(f"#{id}")
            if isinstance(placeholder, ChatShell):
                # The customer may have typed (and sent) a question into the shell already.
                field = placeholder.question
                self._typed = (list(field.sent), field.value, field.cursor_position)
            parent = placeholder.parent
            assert isinstance(parent, Widget)
            # Removed first: the panel takes its id, which must stay unique among siblings.
            index = parent.children.index(placeholder)
            await placeholder.remove()
            panel = make(services)
            await parent.mount(panel, before=index if index < len(parent.children) else None)
        self._pending.clear()
        # As Textual does when a screen is shown: the first focusable match of `AUTO_FOCUS`.
        auto_focus(self)
        await self.started()

    async def started(self) -> None:
        """The panels are in place (a subclass hands them what was typed, or opens the
        conversation asked for)."""

    async def send_typed(self, field: Input, ask: Callable[[str], Awaitable[None]]) -> None:
        """Ask, in turn, the questions sent from the chat's shell, then put what was typed there
        since into the question box, the cursor where it was. A question refused or not stored
        stays in the box (`ask` takes only what it stored), with everything typed after it."""
        if self._typed is None:
            return
        (sent, typed, cursor), self._typed = self._typed, None
        for n, question in enumerate(sent):
            field.value = question
            await ask(question)
            if field.value:  # Not stored: nothing after it is asked, nor lost.
                field.value = " ".join(part for part in (*sent[n:], typed) if part.strip())
                field.cursor_position = len(field.value)
                return
        field.value = typed
        field.cursor_position = cursor
