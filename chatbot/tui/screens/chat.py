"""`helpdesk chat`: the customer chat alone."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Header, Input

from chatbot.drafts import read_draft, store_draft
from chatbot.tui.screens.mode import ModeScreen
from chatbot.tui.widgets.footer import Footer

SAVE_DRAFT_S = 1.0
"""How long after an edit the question box's draft is stored: a write per key would be too many,
and a session killed outright (`serve` killed, a crash: no unmount) loses at most this."""

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
    _stored = ""
    """The draft as last read from, or stored in, `drafts` (see `store_draft`)."""
    _draft_of: int | None = None
    """The conversation `_stored` is the draft of."""
    _save_pending = False
    """A save of the draft is due within `SAVE_DRAFT_S`."""

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
        if self.drafts is None or chat.conversation_id is None:
            return
        saved = ""
        with contextlib.suppress(OSError):  # An unreadable folder: nothing to put back.
            saved = read_draft(self.drafts, chat.conversation_id)
        # Read, not taken: it stays kept until sent or cleared. Not put back (the box had words
        # already), it is joined with them at the first save rather than replaced.
        self._draft_of = chat.conversation_id
        self._stored = saved if chat.restore_draft(saved) else ""

    def on_input_changed(self, event: Input.Changed) -> None:
        # The question box changed: stored within `SAVE_DRAFT_S`, with whatever else is typed
        # meanwhile.
        if event.input is not self._question or self.drafts is None or self._save_pending:
            return
        self._save_pending = True
        self.set_timer(SAVE_DRAFT_S, self.save_draft)

    def on_chat_panel_sent(self, _event: Message) -> None:
        # At once: a draft still kept once sent would come back in the box, to go out twice.
        # (Handled by name, as `on_chat_panel_locale_changed`.)
        self.save_draft()

    def save_draft(self) -> None:
        """Keep what the question box holds as its conversation's draft (blank: sent or
        cleared, none is kept)."""
        self._save_pending = False
        chat, question = self._chat, self._question
        if self.drafts is None or chat is None or question is None:
            return
        if chat.conversation_id is None:
            return  # Nothing to keep it with until the first message starts the conversation.
        if chat.conversation_id != self._draft_of:
            self._draft_of, self._stored = chat.conversation_id, ""
        if question.value == self._stored:
            return
        with contextlib.suppress(OSError):  # A full disk: tried again on the next edit.
            self._stored = store_draft(
                self.drafts, chat.conversation_id, text=question.value, base=self._stored
            )

    def on_unmount(self) -> None:
        # The session ends (`serve` restarting, the page closed): what was typed waits for the
        # next session of the conversation.
        self.save_draft()

    def on_chat_panel_locale_changed(self, event: Message) -> None:
        # The whole screen is the customer's: the app's keys and title follow their language.
        # (Handled by name: the panel's module loads after this screen is first shown.)
        show_in = getattr(self.app, "show_in", None)
        locale = getattr(event, "locale", None)
        if show_in is not None and locale is not None:
            show_in(locale)
