"""`helpdesk chat`: the customer chat alone."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Header, Input

from chatbot.drafts import save_draft, take_draft
from chatbot.tui.screens.mode import ModeScreen
from chatbot.tui.widgets.footer import Footer

if TYPE_CHECKING:
    from chatbot.tui.services import Services
    from chatbot.tui.widgets.chat_panel import ChatPanel


class ChatScreen(ModeScreen):
    """One customer conversation, full width."""

    AUTO_FOCUS = "#question"
    CLOSED_NOT_QUIT: ClassVar[bool] = True
    """In a browser the customer leaves by closing the page: the footer offers no Quit, which
    ended the chat on one tap next to "Talk to a person" (see the footer's `CLOSED_NOT_QUIT`)."""

    drafts: ClassVar[Path | None] = None
    """Where a browser session keeps its customer's unsent question when it ends (`serve`
    restarting, the page closed), for the next session of the conversation: set by
    `chatbot.web.child`. None (`helpdesk chat`): not kept."""

    _chat: ChatPanel | None = None
    """The chat, once built (at once, or in its shell's place)."""
    _question: Input | None = None
    """Its question box, once the chat is in place."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield self.panel(self._make_chat, "chat", shell=True)
        yield Footer()

    def _make_chat(self, services: Services) -> Widget:
        # Imported when first built: `helpdesk chat` shows this screen loading before it loads
        # the panel (and the desk models under it).
        from chatbot.tui.widgets.chat_panel import ChatPanel

        self._chat = ChatPanel(services, conversation_id=self.conversation_id, id="chat")
        return self._chat

    def on_mount(self) -> None:
        if self._chat is not None:  # Built at once: the app was given its settings.
            self._restore_draft(self._chat)

    async def started(self) -> None:
        from chatbot.tui.widgets.chat_panel import ChatPanel

        chat = self.query_one(ChatPanel)
        await self.send_typed(chat.question, chat.ask)
        self._restore_draft(chat)

    def _restore_draft(self, chat: ChatPanel) -> None:
        # The box itself is kept: by this screen's unmount its widgets are gone from the DOM.
        self._question = chat.question
        if self.drafts is not None and chat.conversation_id is not None:
            chat.restore_draft(take_draft(self.drafts, chat.conversation_id))

    def on_unmount(self) -> None:
        chat, question = self._chat, self._question
        if self.drafts is None or chat is None or question is None:
            return
        if chat.conversation_id is not None:
            with contextlib.suppress(OSError):  # A full disk: the draft is lost, as before.
                save_draft(self.drafts, chat.conversation_id, question.value)

    def on_chat_panel_locale_changed(self, event: Message) -> None:
        # The whole screen is the customer's: the app's keys and title follow their language.
        # (Handled by name: the panel's module loads after this screen is first shown.)
        show_in = getattr(self.app, "show_in", None)
        locale = getattr(event, "locale", None)
        if show_in is not None and locale is not None:
            show_in(locale)
