"""One entry of the customer's chat: a message (helpful / not helpful under the latest bot answer)
or a notice about the conversation itself."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from rich.cells import cell_len
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.css.styles import RulesMap
from textual.message import Message
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual
from textual.widgets import Button, Static

from chatbot.desk.models import Author, ChatMessage, Feedback
from chatbot.i18n import DEFAULT_LOCALE, N_, Locale, translations
from chatbot.notices import feedback_note
from chatbot.text import printable
from chatbot.tui.moments import moment
from chatbot.tui.widgets.button_row import ButtonRow

AUTHOR_LABELS = {Author.CUSTOMER: N_("You"), Author.BOT: N_("Bot")}


def literal(text: str) -> Text:
    """Text shown exactly as written: a Text object is never parsed as markup, and control
    characters are spelled out so no escape sequence reaches the terminal."""
    return Text(printable(text))


def author_label(message: ChatMessage, *, locale: Locale = DEFAULT_LOCALE) -> str:
    t = translations(locale)
    if message.author is Author.AGENT:
        if message.agent is None:
            return t.gettext("Agent (support agent)")
        return t.gettext("{agent} (support agent)").format(agent=message.agent)
    return t.gettext(AUTHOR_LABELS[message.author])


SLUG_BREAK = re.compile(r"(?<=[-_.])")
"""Where a passage id too long for its line may break: after its own separators."""


def id_kept_whole(text: str, passage_id: str, width: int) -> str:
    """`text` (a source line) with the word holding `passage_id` (`(card-charged-twice)`) made
    to fit lines of `width` cells without breaking a word of it: where it is wider than a line,
    it breaks after its `-`, `_` or `.`. Wrapped as it was, a word longer than the line was
    folded at its last cell, mid-word ("(card-charged-twic" then "e)")."""
    at = text.rfind(passage_id)
    if at < 0 or not passage_id:
        return text
    start, end = at, at + len(passage_id)
    # The word around the id, as the line wraps it: up to spaces, and wide (Chinese) characters,
    # each a word of its own (`cjk_wrap`).
    while start > 0 and not text[start - 1].isspace() and cell_len(text[start - 1]) == 1:
        start -= 1
    while end < len(text) and not text[end].isspace() and cell_len(text[end]) == 1:
        end += 1
    word = text[start:end]
    if cell_len(word) <= width:
        return text  # It fits a line: wrapping moves it whole to one of its own if need be.
    lines = [""]
    for piece in SLUG_BREAK.split(word):
        if lines[-1] and cell_len(lines[-1] + piece) > width:
            lines.append(piece)
        else:
            lines[-1] += piece
    return text[:start] + "\n".join(lines) + text[end:]


class SourceLine(Visual):
    """A bot answer's source ("Source: Title (passage-id)"), wrapped as words are, its passage id
    never broken mid-word (`id_kept_whole`, at the width it is drawn at)."""

    def __init__(self, text: str, passage_id: str) -> None:
        self.text = printable(text)
        self.passage_id = passage_id

    def content(self, width: int) -> Content:
        return Content(id_kept_whole(self.text, self.passage_id, width))

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        return self.content(width).render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return Content(self.text).get_optimal_width(rules, container_width)

    def get_height(self, rules: RulesMap, width: int) -> int:
        return self.content(width).get_height(rules, width)


def _unfocusable(button: Button) -> Button:
    """Clickable, and Ctrl+Y / Ctrl+N from the keyboard, but never a Tab stop: a button per
    answer made Tab take many presses to cross the transcript, and swallowed typed text."""
    button.can_focus = False
    return button


class NoticeBubble(Vertical):
    """A notice about the conversation (a person joined, it was resolved, ...)."""

    def __init__(self, text: str) -> None:
        super().__init__(classes="bubble -system")
        self.text = text

    def compose(self) -> ComposeResult:
        yield Static(literal(self.text), classes="bubble-text")


class MessageBubble(Vertical):
    """A customer, bot or agent message as the customer sees it."""

    @dataclass
    class FeedbackGiven(Message):
        """The customer judged a bot answer."""

        message_id: int
        feedback: Feedback

    def __init__(
        self,
        message: ChatMessage,
        *,
        offers_feedback: bool = False,
        locale: Locale = DEFAULT_LOCALE,
        now: datetime | None = None,
    ) -> None:
        super().__init__(classes=f"bubble -{message.author.value}")
        self.message = message
        self.now = now
        """When the bubble was made, by the desk's clock: given, the bubble says when its message
        was written (the date too if not today), in the reader's time zone."""
        self.locale: Locale = locale
        """The customer's language: labels, buttons and notes are in it, messages as written."""
        self.offers_feedback = offers_feedback
        """Only the conversation's latest answer asks for feedback."""
        self.judging = False
        """Feedback was given and is being stored."""

    def compose(self) -> ComposeResult:
        message = self.message
        t = translations(self.locale)
        heading = literal(author_label(message, locale=self.locale))
        if self.now is not None:
            heading.append(f"  {moment(message.created_at, now=self.now)}", "dim")
        yield Static(heading, classes="bubble-author")
        yield Static(literal(message.text), classes="bubble-text")
        if message.source is not None and message.passage_id is not None:
            source = t.gettext("Source: {source}").format(source=message.source)
            yield Static(SourceLine(source, message.passage_id), classes="bubble-source")
        if self.asks_for_feedback:
            # Side by side where both fit, else one under the other: beside the queue at 60
            # columns a row cut the second ("Helpful      Not").
            with ButtonRow(classes="bubble-feedback"):
                yield _unfocusable(Button(t.gettext("Helpful"), id="helpful", compact=True))
                yield _unfocusable(
                    Button(
                        t.gettext("Not helpful"), id="not-helpful", compact=True, variant="warning"
                    )
                )
        elif message.feedback is not None:
            note = feedback_note(message.feedback, locale=self.locale)
            yield Static(Text(note), classes="bubble-note")

    @property
    def asks_for_feedback(self) -> bool:
        return (
            self.offers_feedback
            and not self.judging
            and self.message.author is Author.BOT
            and self.message.feedback is None
        )

    async def show_feedback(self, feedback: Feedback) -> None:
        """Swap the buttons for a note once the customer has answered."""
        if self.message.feedback is feedback:
            return
        self.message = self.message.model_copy(update={"feedback": feedback})
        if self.is_mounted:
            await self.recompose()

    async def retire(self) -> None:
        """A newer answer arrived: this one no longer asks for feedback."""
        if self.offers_feedback:
            self.offers_feedback = False
            if self.is_mounted:
                await self.recompose()

    @on(Button.Pressed, "#helpful")
    def _helpful(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.FeedbackGiven(self.message.id, Feedback.HELPFUL))

    @on(Button.Pressed, "#not-helpful")
    def _not_helpful(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.FeedbackGiven(self.message.id, Feedback.NOT_HELPFUL))
