"""The agent's transcript: a log widget, so a long conversation opens as fast as a short one."""

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


class Transcript(RichLog):
    """Appends new messages as they arrive; never parses markup."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(
            id=id, wrap=True, markup=False, highlight=False, auto_scroll=True, min_width=20
        )

    def add(self, messages: Sequence[ChatMessage]) -> None:
        if messages:
            self.write(transcript_text(messages))
