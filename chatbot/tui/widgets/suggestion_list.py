"""The questions with recorded answers, offered in replay mode: each is asked with one click.

A browser's customer sees a list of questions and clicks one, as in any chat; before, they had to
retype it or find it in the command palette. A wrapped question is indented under its own text,
not under the bullet, so each one reads as one item.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from chatbot.i18n import N_, Locale, translations
from chatbot.text import printable
from chatbot.tui.suggestions import Suggestion

REPLAY_NOTE = N_(
    "Replay mode, no network: the bot has recorded answers for these questions only (anything "
    "else goes to a person). Click one, type it, or pick it with Ctrl+P → Ask:"
)
REPLAY_NOTE_IN_A_BROWSER = N_(
    "Replay mode, no network: the bot has recorded answers for these questions only (anything "
    "else goes to a person). Tap or click one, or type it:"
)
"""In a browser, on a phone most of all, there is no Ctrl+P to press: the list is tapped."""
TRY_NOTE = N_("Questions to try. Click one, type it, or pick it with Ctrl+P → Ask:")
"""`helpdesk chat --no-bot`: the bot is another process (`helpdesk bot`), which may run live,
so the chat cannot say it is in replay mode, nor which questions a person gets."""
ELSEWHERE_NOTE = N_(
    "Questions to try, with recorded answers, are offered in a chat in English: F9 shows this "
    "chat in English."
)
"""In a chat set to another language, whose questions are searched in that language's passages
only: the recorded questions (English) went to a person there, while the list said the bot had
answers for them."""
ELSEWHERE_NOTE_IN_A_BROWSER = N_(
    "Questions to try, with recorded answers, are offered in a chat in English: tap English at "
    "the top."
)
PERSON_REPLIES = N_("a person will reply")
"""After a suggested question whose recorded answers are all under the threshold."""


class SuggestedQuestion(Widget):
    """One suggested question; a click asks it. Not a Tab stop: typing belongs to the question
    box, and the palette reaches every suggestion from the keyboard."""

    DEFAULT_CSS = """
    SuggestedQuestion {
        height: auto;
        pointer: pointer;
    }
    SuggestedQuestion:hover {
        color: $text;
        text-style: underline;
    }
    """

    def __init__(self, suggestion: Suggestion, note: str) -> None:
        super().__init__()
        self.suggestion = suggestion
        self.note = note

    def render(self) -> RenderableType:
        text = Text(printable(self.suggestion.question))
        if not self.suggestion.answered and self.note:
            text.append(f" ({self.note})", style="italic")
        grid = Table.grid(padding=(0, 1, 0, 0))
        grid.add_column(width=3, justify="right")
        grid.add_column(ratio=1)
        grid.add_row("•", text)
        return grid

    def show_in(self, note: str) -> None:
        self.note = note
        self.refresh(layout=True)

    def on_click(self, event: events.Click) -> None:
        event.stop()
        # A double click is one gesture (a habit from desktop lists): its second click asked the
        # question again, and the bot then offered a person for a question it had just answered.
        if event.chain > 1:
            return
        self.post_message(SuggestionList.Picked(self.suggestion.question))


class SuggestionList(Vertical):
    """The replay note and the suggested questions under it; in a chat in another language, only
    a note saying where they are offered (`offer`)."""

    DEFAULT_CSS = """
    SuggestionList {
        height: auto;
    }
    """

    @dataclass
    class Picked(Message):
        """The customer clicked a suggested question: ask it."""

        question: str

    def __init__(
        self,
        suggestions: Sequence[Suggestion],
        *,
        locale: Locale,
        id: str | None = None,
        classes: str | None = None,
        known: bool = True,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.suggestions = tuple(suggestions)
        self.locale = locale
        self.known = known
        """Whether the bot judges as this app's settings say (replay mode, the marks as decided
        here): not with `--no-bot`, whose bot may run live."""
        self.elsewhere = False
        """The chat is set to another language than the questions': they are not offered."""

    def compose(self) -> ComposeResult:
        t = translations(self.locale)
        yield Static(Text(t.gettext(self._note())), classes="note")
        for suggestion in self.suggestions:
            yield SuggestedQuestion(suggestion, self._mark(t.gettext))

    def _mark(self, gettext: Callable[[str], str]) -> str:
        return gettext(PERSON_REPLIES) if self.known else ""

    def _note(self) -> str:
        web = self.app.is_web
        if self.elsewhere:
            return ELSEWHERE_NOTE_IN_A_BROWSER if web else ELSEWHERE_NOTE
        if not self.known:
            return TRY_NOTE
        return REPLAY_NOTE_IN_A_BROWSER if web else REPLAY_NOTE

    def offer(self, *, elsewhere: bool) -> None:
        """Offer the questions, or (`elsewhere`) say only where they are offered."""
        if elsewhere == self.elsewhere:
            return
        self.elsewhere = elsewhere
        self.query_one(".note", Static).update(
            Text(translations(self.locale).gettext(self._note()))
        )
        for row in self.query(SuggestedQuestion):
            row.display = not elsewhere

    def set_suggestions(self, suggestions: Sequence[Suggestion]) -> None:
        """The same questions, newly decided: each row says again whether a person replies."""
        self.suggestions = tuple(suggestions)
        for row, suggestion in zip(self.query(SuggestedQuestion), self.suggestions, strict=False):
            row.suggestion = suggestion
            row.refresh(layout=True)

    def show_in(self, locale: Locale) -> None:
        """Say the note and the person-replies marks in `locale` (the questions stay as
        recorded)."""
        self.locale = locale
        t = translations(locale)
        self.query_one(".note", Static).update(Text(t.gettext(self._note())))
        for row in self.query(SuggestedQuestion):
            row.show_in(self._mark(t.gettext))
