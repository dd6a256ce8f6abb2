"""Choosing a knowledge-base passage to send as the agent's reply: the passages the conversation
is answered from (a Chinese one's are the `zh/` folder's with the main one's written in Chinese),
the bot's candidates first, narrowed by what the agent types."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, RichVisual, Visual
from textual.widget import Widget
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from chatbot.i18n import DEFAULT_LOCALE, N_, Locale, translations
from chatbot.knowledge_base.models import Passage
from chatbot.text import printable
from chatbot.tui.localize import localize_bindings
from chatbot.tui.screens.modal import Dialog
from chatbot.tui.widgets.footer import Footer
from chatbot.tui.widgets.passage_list import PassageOptions, matches
from chatbot.tui.widgets.plain_input import PlainInput

if TYPE_CHECKING:
    from chatbot.engine.models import Decision
    from chatbot.tui.services import Services

PREVIEW_CHARS = 110
NOTHING_MATCHES = N_("No passage has “{words}” in its id, title or text.")
"""Said in place of the list when the words typed match no passage (the words as typed)."""
ROWS = 100
"""Rows drawn at once, the rest a line saying how many: the list measures the wrapped height of
every row it is given, at each key typed, and 3,000 passages took over a second a key."""
MORE = N_(
    "{count} more passages not listed, only the first {shown}: type words from an id, title or "
    "text to find them."
)
"""The list's last line when it is cut and nothing is typed."""
MORE_MATCHES = N_(
    "{count} more matches not listed, only the first {shown}: type more words to narrow the list."
)
"""The same under words typed that match more than the rows drawn."""


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


async def answering_passages(services: Services, locale: Locale | None) -> Sequence[Passage]:
    """The passages a conversation in `locale` is answered from now, as the bot answers it: its
    translation's engine's (the `zh/` folder's, with the main knowledge base's passages written
    in Chinese, a `zh/` one of the same id winning), or the main engine's for English or a
    language with no translation. Waits for the app's first engine (the translations' are put
    in place with it)."""
    main = await services.live.wait_ready()
    engine = services.translated.get(locale) if locale is not None else None
    return main.passages if engine is None else engine.engine.passages


def picker_items(passages: Sequence[Passage], decisions: Sequence[Decision]) -> list[PickerItem]:
    """Every one of `passages`, the bot's candidates in `decisions` (oldest first) first, in the
    bot's own order as the side pane lists them: judged ones by probability, best first, then
    those not judged in retrieval order; the rest follow in `passages`' order. A passage two
    decisions considered counts with its better score, where it was first seen."""
    scores: dict[str, float | None] = {}  # In the order first seen: each decision's own.
    for decision in decisions:
        for candidate in decision.candidates:
            judged = (scores.get(candidate.id), candidate.probability)
            scores[candidate.id] = max((p for p in judged if p is not None), default=None)
    # Stable, so that ties keep the bot's order and the unjudged their retrieval order: sorted
    # by the passages' own order, two unjudged refund passages came alphabetically instead.
    seen = list(scores)
    bot = sorted(seen, key=lambda id_: (scores[id_] is None, -(scores[id_] or 0.0)))
    place = {id_: n for n, id_ in enumerate(bot)}
    ranked = sorted(passages, key=lambda p: place.get(p.id, len(place)))
    return [PickerItem(passage, scores.get(passage.id)) for passage in ranked]


GAP = 2
"""Cells between the score and the passage's column."""


def prompt(item: PickerItem) -> tuple[Text, Text]:
    """The score, and the passage's id and title over the start of its text (`Row` lays them
    out)."""
    passage = item.passage
    score = "    " if item.probability is None else f"{item.probability:.2f}"
    text = Text(printable(passage.id), "bold")
    if passage.title:
        text.append(f"  {printable(passage.title)}", "dim")
    preview = " ".join(printable(passage.text).split())
    if len(preview) > PREVIEW_CHARS:
        preview = preview[: PREVIEW_CHARS - 1].rstrip() + "…"  # Not an ellipsis on its own.
    text.append(f"\n{preview}")
    return Text(score, "green"), text


class Row(Visual):
    """A passage's row: the score, then a column of its own for the passage's id and title over
    the start of its text, so a line that wraps stays under the id (as one text, it went back
    under the score). Wrapped here, once per width, rather than as a table: the list asks every
    row's height whenever its rows change, and a table rendered to count its lines took ~1 ms a
    row, the most of what a key typed cost."""

    def __init__(self, widget: Widget, item: PickerItem) -> None:
        self._widget = widget
        self._score, self._text = prompt(item)
        self._laid: dict[int, Text] = {}
        """The row wrapped to each width asked, one line a line."""

    def _laid_out(self, width: int) -> Text:
        laid = self._laid.get(width)
        if laid is None:
            indent = self._score.cell_len + GAP
            lines = self._text.wrap(self._widget.app.console, max(width - indent, 1))
            blank = " " * self._score.cell_len
            laid = Text("\n", no_wrap=True).join(
                Text.assemble(self._score if n == 0 else blank, " " * GAP, line)
                for n, line in enumerate(lines)
            )
            self._laid[width] = laid
        return laid

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        laid = RichVisual(self._widget, self._laid_out(width))
        return laid.render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        widest = max((line.cell_len for line in self._text.split()), default=0)
        return self._score.cell_len + GAP + widest

    def get_height(self, rules: RulesMap, width: int) -> int:
        return self._laid_out(width).plain.count("\n") + 1


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
    PassagePicker #passages {
        /* The rows' width the same with or without a scrollbar: each row's height is counted
           per width, and the scrollbar coming with a long list counted them all twice. */
        scrollbar-gutter: stable;
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
        """Those the words typed match, in the same order: the list's options, the first `ROWS`
        of them drawn."""
        self.locale: Locale = locale
        """The agent's language: the title and keys are in it, passages as written."""
        self._searched = ""
        """The words `shown` matches, folded."""
        self._options: dict[int, Option] = {}
        """Each item's row (by the item's `id()`), made when it is first drawn and kept, its lines
        laid out, for when the words typed draw it again."""
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
            # The editor's rows: the line saying the list is cut is scrolled to with the last row.
            yield PassageOptions(id="passages")
            yield Static(id="picker-none")
        yield Footer()

    def on_mount(self) -> None:
        self._draw()
        self.query_one("#picker-filter", PlainInput).focus()

    @property
    def words(self) -> str:
        """What is typed in the filter box."""
        return self.query_one("#picker-filter", PlainInput).value

    @on(Input.Changed, "#picker-filter")
    def _filter(self, event: Input.Changed) -> None:
        event.stop()
        searched = event.value.casefold()
        # Words typed on after the last ones can only match passages those matched: only those
        # are matched again. Anything else (a letter deleted, the box changed) matches them all.
        pool = self.shown if searched.startswith(self._searched) else self.items
        self._searched = searched
        self.shown = [item for item in pool if matches(item.searched, searched)]
        self._draw()
        nothing = not self.shown and bool(self.items)
        if nothing:
            said = translations(self.locale).gettext(NOTHING_MATCHES)
            # The words as typed, never read as markup.
            self.query_one("#picker-none", Static).update(
                Text(said.format(words=printable(event.value.strip())))
            )
        self.set_class(nothing, "-nothing")

    def _draw(self) -> None:
        """List the first `ROWS` of `shown`, then a line saying how many more there are (the
        editor's list does the same), and highlight the first."""
        options = self.query_one("#passages", OptionList)
        rows = [self._option(item, options) for item in self.shown[:ROWS]]
        if len(self.shown) > ROWS:
            more = translations(self.locale).gettext(
                MORE_MATCHES if self._searched.strip() else MORE
            )
            said = more.format(count=f"{len(self.shown) - ROWS:,}", shown=f"{ROWS:,}")
            rows.append(Option(Content.styled(said, "dim italic"), disabled=True))
        options.set_options(rows)
        if self.shown:
            options.highlighted = 0

    def _option(self, item: PickerItem, options: OptionList) -> Option:
        option = self._options.get(id(item))
        if option is None:
            option = self._options[id(item)] = Option(Row(options, item))
        return option

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
