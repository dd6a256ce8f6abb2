"""Choosing a knowledge-base passage to send as the agent's reply."""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from chatbot.i18n import DEFAULT_LOCALE, N_, Locale, translations
from chatbot.knowledge_base.models import Passage
from chatbot.text import printable
from chatbot.tui.localize import localize_bindings
from chatbot.tui.screens.modal import Dialog
from chatbot.tui.widgets.footer import Footer

PREVIEW_CHARS = 110


@dataclass(frozen=True)
class PickerItem:
    """A passage, with the bot's probability for the conversation's question when it was judged."""

    passage: Passage
    probability: float | None = None


def prompt(item: PickerItem) -> Table:
    """The score, then a column of its own for the passage's id and title over the start of its
    text, so a line that wraps stays under the id (as one text, it went back under the score)."""
    passage = item.passage
    score = "    " if item.probability is None else f"{item.probability:.2f}"
    text = Text(printable(passage.id), "bold")
    if passage.title:
        text.append(f"  {printable(passage.title)}", "dim")
    preview = " ".join(printable(passage.text).split())
    if len(preview) > PREVIEW_CHARS:
        preview = preview[: PREVIEW_CHARS - 1].rstrip() + "…"  # Not an ellipsis on its own.
    text.append(f"\n{preview}")
    grid = Table.grid(padding=(0, 2))
    grid.add_column(width=len(score), no_wrap=True)
    grid.add_column()
    grid.add_row(Text(score, "green"), text)
    return grid


class PassagePicker(Dialog[Passage | None]):
    """Lists the passages, the bot's candidates first; Enter picks, Escape cancels."""

    BINDINGS = [Binding("escape", "dismiss_picker", N_("Cancel"))]

    def __init__(self, items: list[PickerItem], *, locale: Locale = DEFAULT_LOCALE) -> None:
        super().__init__()
        self.items = items
        self.locale: Locale = locale
        """The agent's language: the title and keys are in it, passages as written."""
        localize_bindings(self, locale)

    def compose(self) -> ComposeResult:
        t = translations(self.locale)
        with Vertical(id="picker"):
            title = t.gettext(
                "Put a passage in your reply, to edit before sending (Enter picks it, Escape "
                "cancels)"
            )
            yield Static(title, classes="section-title")
            yield OptionList(*(Option(prompt(item)) for item in self.items), id="passages")
        yield Footer()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.items[event.option_index].passage)

    def action_dismiss_picker(self) -> None:
        self.dismiss(None)
