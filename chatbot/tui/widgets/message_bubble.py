"""One message of the customer's chat, with helpful / not helpful buttons under bot answers."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Static

from chatbot.store import Author, ChatMessage, Feedback
from chatbot.text import printable

AUTHOR_LABELS = {Author.CUSTOMER: "You", Author.BOT: "Bot", Author.SYSTEM: ""}


def literal(text: str) -> Text:
    """Text shown exactly as written: a Text object is never parsed as markup, and control
    characters are spelled out so no escape sequence reaches the terminal."""
    return Text(printable(text))


def author_label(message: ChatMessage) -> str:
    if message.author is Author.AGENT:
        return f"{message.agent or 'Agent'} (support agent)"
    return AUTHOR_LABELS[message.author]


class MessageBubble(Vertical):
    """A customer, bot, agent or system message as the customer sees it."""

    @dataclass
    class FeedbackGiven(Message):
        """The customer judged a bot answer."""

        message_id: int
        feedback: Feedback

    def __init__(self, message: ChatMessage) -> None:
        super().__init__(classes=f"bubble -{message.author.value}")
        self.message = message

    def compose(self) -> ComposeResult:
        message = self.message
        if label := author_label(message):
            yield Static(literal(label), classes="bubble-author")
        yield Static(literal(message.text), classes="bubble-text")
        if message.source is not None:
            yield Static(literal(f"Source: {message.source}"), classes="bubble-source")
        if self.asks_for_feedback:
            with Horizontal(classes="bubble-feedback"):
                yield Button("Helpful", id="helpful", compact=True)
                yield Button("Not helpful", id="not-helpful", compact=True, variant="warning")
        elif message.feedback is not None:
            yield Static(self._feedback_note(message.feedback), classes="bubble-note")

    @property
    def asks_for_feedback(self) -> bool:
        return self.message.author is Author.BOT and self.message.feedback is None

    @staticmethod
    def _feedback_note(feedback: Feedback) -> Text:
        if feedback is Feedback.HELPFUL:
            return Text("You marked this helpful. Thanks!")
        return Text("You marked this not helpful; a person will take a look.")

    async def show_feedback(self, feedback: Feedback) -> None:
        """Swap the buttons for a note once the customer has answered."""
        self.message = self.message.model_copy(update={"feedback": feedback})
        await self.recompose()

    @on(Button.Pressed, "#helpful")
    def _helpful(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.FeedbackGiven(self.message.id, Feedback.HELPFUL))

    @on(Button.Pressed, "#not-helpful")
    def _not_helpful(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.FeedbackGiven(self.message.id, Feedback.NOT_HELPFUL))
