"""The agent's transcript: a log widget that writes only the newest messages when it opens, so a
long conversation opens as fast as a short one; earlier ones are written on request."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import RichLog

from chatbot.store import Author, ChatMessage
from chatbot.text import printable

STYLES = {
    Author.CUSTOMER: "bold cyan",
    Author.BOT: "bold magenta",
    Author.AGENT: "bold green",
    Author.SYSTEM: "dim italic",
}

PAGE = 100
"""Messages written when a conversation opens, and how many more each request shows. The log
wraps and renders every line it is given up front (~0.3 s for 1,000 messages); 100 take ~20 ms."""

EARLIER_KEY = "F3"
"""The key the earlier-messages line names; `ConversationView` binds it."""


def transcript_text(messages: Sequence[ChatMessage]) -> Text:
    """Messages as one Text (one render for the whole batch), every word shown literally."""
    text = Text()
    for message in messages:
        if text:
            text.append("\n")
        if message.author is Author.SYSTEM:
            text.append(f"— {printable(message.text)}", STYLES[message.author])
            continue
        who = {
            Author.CUSTOMER: "Customer",
            Author.BOT: "Bot",
            Author.AGENT: f"{printable(message.agent or 'Agent')} (agent)",
        }[message.author]
        text.append(who, STYLES[message.author])
        if message.source is not None:
            text.append(f"  from {printable(message.source)}", "dim")
        if message.feedback is not None:
            text.append(f"  [{message.feedback.value}]", "yellow")
        text.append("\n")
        text.append(printable(message.text))
        text.append("\n")
    return text


def earlier_line(hidden: int) -> str:
    """The first line of a transcript that does not show its `hidden` oldest messages."""
    noun = "message" if hidden == 1 else "messages"
    more = "them" if hidden <= PAGE else f"{PAGE} more"
    return f"— {hidden} earlier {noun} — press {EARLIER_KEY} to show {more}"


class Transcript(RichLog):
    """Shows the newest `PAGE` messages, then appends new ones as they arrive; never parses markup.

    Every message added is kept, so earlier ones can be shown without asking the store again.
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(
            id=id, wrap=True, markup=False, highlight=False, auto_scroll=True, min_width=20
        )
        self._messages: list[ChatMessage] = []
        self._hidden = 0

    @property
    def hidden(self) -> int:
        """How many of the oldest messages are not written (0: the whole conversation is)."""
        return self._hidden

    def add(self, messages: Sequence[ChatMessage]) -> None:
        if not messages:
            return
        if self._messages:
            self._messages.extend(messages)
            self.write(transcript_text(messages))
            return
        # The first batch is the conversation so far: only its newest page is written.
        self._messages = list(messages)
        self._hidden = max(0, len(messages) - PAGE)
        self.write(self._shown_text())

    def show_earlier(self) -> None:
        """Write up to `PAGE` more of the earlier messages above the ones shown, keeping the
        message at the top of the view where it was."""
        if not self._hidden:
            return
        lines_before, scroll_y = len(self.lines), self.scroll_y
        self._hidden = max(0, self._hidden - PAGE)
        self.clear()
        self.write(self._shown_text(), scroll_end=False)
        # Everything below the newly shown messages wraps as before, so the added lines are all
        # above the view: scroll down by as many.
        self.scroll_to(y=scroll_y + len(self.lines) - lines_before, animate=False)

    def _shown_text(self) -> Text:
        text = transcript_text(self._messages[self._hidden :])
        if self._hidden:
            text = Text.assemble((earlier_line(self._hidden), "dim italic"), "\n\n", text)
        return text
