"""Choosing a knowledge-base passage to send as the agent's reply: the passages the conversation
is answered from (a Chinese one's are the `zh/` folder's with the main one's written in Chinese),
the bot's candidates first, narrowed by what the agent types."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from chatbot.i18n import DEFAULT_LOCALE, N_, Locale, translations
from chatbot.knowledge_base.models import Passage
from chatbot.text import printable
from chatbot.tui.localize import localize_bindings
from chatbot.tui.screens.modal import Dialog
from chatbot.tui.widgets.footer import Footer
from chatbot.tui.widgets.plain_input import PlainInput

if TYPE_CHECKING:
    from chatbot.tui.services import Services

PREVIEW_CHARS = 110
NOTHING_MATCHES = N_("No passage has “{words}” in its id, title or text.")
"""Said in place of the list when the words typed match no passage (the words as typed)."""


@dataclass(frozen=True)
class PickerItem:
    """A passage, with the bot's probability for the conversation's question when it was judged."""

    passage: Passage
    probability: float | None = None
    searched: str = field(init=False, repr=False, compare=False)
    """Its id, title and text, folded as the words typed are, for the filter."""

    def __post_init__(self) -> None:
        p = self.passage
        object.__setattr__(self, "searched", f"{p.id}\n{p.title}\n{p.text}".casefold())

    def matches(self, words: Sequence[str]) -> bool:
        """Whether each of `words` (folded) is in its id, title or text."""
        return all(word in self.searched for word in words)


async def answering_passages(services: Services, locale: Locale | None) -> Sequence[Passage]:
    """The passages a conversation in `locale` is answered from now, as the bot answers it: its
    translation's engine's (the `zh/` folder's, with the main knowledge base's passages written
    in Chinese, a `zh/` one of the same id winning), or the main engine's for English or a
    language with no translation. Waits for the app's first engine (the translations' are put
    in place with it)."""
    main = await services.live.wait_ready()
    engine = services.translated.get(locale) if locale is not None else None
    return main.passages if engine is None else engine.engine.passages


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
    """Lists the passages, the bot's candidates first; typing narrows the list (words from a
    passage's id, title or text, in any case), Up and Down move in it from the box, Enter picks,
    Escape cancels."""

    DEFAULT_CSS = """
    PassagePicker #picker-none {
        display: none;
        padding: 1 1;
        height: auto;
    }
    PassagePicker.-nothing #picker-none {
        display: block;
    }
    PassagePicker.-nothing #passages {
        display: none;
    }
    """

    BINDINGS = [
        Binding("escape", "dismiss_picker", N_("Cancel")),
        # From the filter box, which moves no list: the keys move the list's highlight.
        Binding("down", "move('cursor_down')", show=False),
        Binding("up", "move('cursor_up')", show=False),
        Binding("pagedown", "move('page_down')", show=False),
        Binding("pageup", "move('page_up')", show=False),
    ]

    def __init__(self, items: list[PickerItem], *, locale: Locale = DEFAULT_LOCALE) -> None:
        super().__init__()
        self.items = items
        """Every passage offered, the bot's candidates first."""
        self.shown: list[PickerItem] = list(items)
        """Those the words typed match, in the same order: the list's options."""
        self.locale: Locale = locale
        """The agent's language: the title and keys are in it, passages as written."""
        self._options = [Option(prompt(item)) for item in items]
        localize_bindings(self, locale)

    def compose(self) -> ComposeResult:
        t = translations(self.locale)
        with Vertical(id="picker"):
            title = t.gettext(
                "Put a passage in your reply, to edit before sending (Enter picks it, Escape "
                "cancels)"
            )
            yield Static(title, classes="section-title")
            yield PlainInput(
                placeholder=t.gettext("Type to narrow the list: words from an id, title or text"),
                id="picker-filter",
                # Characters typed on the list come here (`on_key`): selected as the box took
                # the focus, the first was replaced by the next.
                select_on_focus=False,
            )
            yield OptionList(*self._options, id="passages")
            yield Static(id="picker-none")
        yield Footer()

    def on_mount(self) -> None:
        options = self.query_one("#passages", OptionList)
        if self.items:
            options.highlighted = 0
        self.query_one("#picker-filter", PlainInput).focus()

    @property
    def words(self) -> str:
        """What is typed in the filter box."""
        return self.query_one("#picker-filter", PlainInput).value

    @on(Input.Changed, "#picker-filter")
    def _filter(self, event: Input.Changed) -> None:
        event.stop()
        words = event.value.casefold().split()
        chosen = [i for i, item in enumerate(self.items) if item.matches(words)]
        self.shown = [self.items[i] for i in chosen]
        options = self.query_one("#passages", OptionList)
        options.set_options(self._options[i] for i in chosen)
        if chosen:
            options.highlighted = 0
        nothing = not chosen and bool(self.items)
        if nothing:
            said = translations(self.locale).gettext(NOTHING_MATCHES)
            # The words as typed, never read as markup.
            self.query_one("#picker-none", Static).update(
                Text(said.format(words=printable(event.value.strip())))
            )
        self.set_class(nothing, "-nothing")

    @on(Input.Submitted, "#picker-filter")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        highlighted = self.query_one("#passages", OptionList).highlighted
        if self.shown and highlighted is not None:
            self.dismiss(self.shown[highlighted].passage)

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.shown[event.option_index].passage)

    def on_key(self, event: events.Key) -> None:
        # A character typed with the list focused (clicked, or Tab) goes to the filter.
        field = self.query_one("#picker-filter", PlainInput)
        if self.focused is not field and event.is_printable and event.character:
            event.stop()
            event.prevent_default()
            field.focus()
            field.append(event.character)

    async def action_move(self, how: str) -> None:
        await self.query_one("#passages", OptionList).run_action(how)

    def action_dismiss_picker(self) -> None:
        self.dismiss(None)
