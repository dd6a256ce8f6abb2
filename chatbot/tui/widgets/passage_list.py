"""The editor's searchable list of passages, deleted ones included so they can be restored."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Region
from textual.message import Message
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from chatbot.i18n import DEFAULT_LOCALE, N_, Locale, translations
from chatbot.knowledge_base.models import Passage
from chatbot.text import cells as cells_of
from chatbot.text import clip, printable
from chatbot.tui.widgets.plain_input import PlainInput, joined_lines

DELETED_PREFIX = "deleted:"
MAX_ROWS = 500
"""Rows shown at once: an option list of 100,000 passages would take seconds to build."""
MORE = N_(
    "{count} more passages not listed, only the first {shown} by id: type a word from an id, "
    "title or text to find them."
)
"""The list's last line when it is cut: the rows go by id, so the rest are not a scroll away
("1,510 more: type to narrow the list" read as a hint, and `helmet` was never reached)."""
MORE_MATCHES = N_(
    "{count} more matches not listed, only the first {shown} by id: type more words to narrow "
    "the search."
)
"""The same under a search that matches more than the rows shown."""


def searchable(passage: Passage) -> str:
    """What the search box matches against: id, title, tags and text, case-folded."""
    return " ".join((passage.id, passage.title, " ".join(passage.tags), passage.text)).casefold()


def matches(haystack: str, query: str) -> bool:
    """Every word of `query` appears in `haystack` (case-insensitive)."""
    return all(word in haystack for word in query.casefold().split())


def shortened(title: str, cells: int) -> str:
    """`title` (or an id) on one line of `cells` (0: as it is), cut with … where it is longer,
    with no blank before the …: each row keeps to two lines, the id's and the title's."""
    title = printable(title)
    cut = clip(title, cells) if cells else title
    return cut if cut == title else cut[:-1].rstrip() + "…"


class SearchBox(PlainInput):
    """The list's search box. The editor opens on it, so Down and Up go on into the rows and
    through them, as they would on the list."""

    BINDINGS = [
        Binding("down", "rows(1)", show=False),
        Binding("up", "rows(-1)", show=False),
    ]

    def action_rows(self, step: int) -> None:
        parent = self.parent
        if not isinstance(parent, PassageList):
            return
        options = parent.options
        self.screen.set_focus(options)
        if step > 0:
            options.action_cursor_down()
        elif options.highlighted:  # Not from the first row round to the last.
            options.action_cursor_up()


class PassageOptions(OptionList):
    """The rows. The last one a key can reach (End, Down, Page Down) is scrolled to with what
    follows it: the line saying the list is cut, which takes no cursor. End left that line below
    the view, and the list looked complete."""

    def scroll_to_highlight(self, top: bool = False) -> None:
        super().scroll_to_highlight(top)
        highlighted = self.highlighted
        if top or highlighted is None or not self.is_mounted:
            return
        last = self.option_count - 1
        if highlighted >= last or not self.get_option_at_index(last).disabled:
            return
        # Only disabled lines below it (one, or a few): a short walk from the end.
        if any(
            not self.get_option_at_index(index).disabled for index in range(highlighted + 1, last)
        ):
            return
        try:
            y = self._index_to_line[highlighted]
        except KeyError:
            return
        # Cut to the view's height from its top when taller: the row itself stays in view.
        self.scroll_to_region(
            Region(0, y, self.scrollable_content_region.width, self.virtual_size.height - y),
            force=True,
            animate=False,
            immediate=True,
        )


class PassageList(Vertical):
    """A search box over an option list; choosing a row posts `Chosen`."""

    @dataclass
    class Chosen(Message):
        """The editor picked a passage (or a deleted one) to open."""

        passage_id: str
        deleted: bool

    def __init__(self, *, locale: Locale = DEFAULT_LOCALE, id: str | None = None) -> None:
        super().__init__(id=id)
        self.locale: Locale = locale
        self._passages: list[tuple[Passage, str]] = []
        self._deleted: list[tuple[str, Passage | None, str]] = []
        """Each deleted passage: its id, what it last said (if readable) and what search matches."""
        self._title_cells = 0
        """The width the titles were cut to (0: not cut, the list not laid out yet)."""

    def compose(self) -> ComposeResult:
        t = translations(self.locale)
        yield SearchBox(placeholder=t.gettext("Search passages"), id="passage-search", compact=True)
        yield PassageOptions(id="passage-options", markup=False)

    @property
    def options(self) -> OptionList:
        return self.query_one("#passage-options", OptionList)

    def show(
        self,
        passages: Sequence[Passage],
        *,
        deleted: Sequence[Passage | str] = (),
        select: str | None = None,
    ) -> None:
        """Replace the rows, keep the search, and highlight `select` when it is shown. A deleted
        passage is given as its last version (found and shown by its title and text, as the
        others are), or as its id alone when no version of it can be read."""
        # Case-folded once here, so each keystroke in the search box only compares strings.
        self._passages = [(p, searchable(p)) for p in sorted(passages, key=lambda p: p.id)]
        self._deleted = sorted(
            (item, None, item.casefold()) if isinstance(item, str)
            else (item.id, item, searchable(item))
            for item in deleted
        )  # fmt: skip
        self._render_rows(select)

    def _render_rows(self, select: str | None = None) -> None:
        t = translations(self.locale)
        query = self.query_one("#passage-search", Input).value
        options = self.options
        current = options.highlighted_option.id if options.highlighted_option else None
        options.clear_options()
        found = [passage for passage, haystack in self._passages if matches(haystack, query)]
        self._title_cells = cells = self._row_cells()
        rows: list[Option] = []
        for passage in found[:MAX_ROWS]:
            # Every string from a passage file passes through `printable` (in `shortened`), even
            # validated ones. The id is cut as the title is: wrapped, a long one left its tail
            # ("ange" of `…-battery-range`) alone on a line, where the list could start.
            label = Content(shortened(passage.id, cells))
            if passage.title:
                label = Content.assemble(label, "\n", (shortened(passage.title, cells), "dim"))
            rows.append(Option(label, id=passage.id))
        for passage_id, last, haystack in self._deleted:
            if matches(haystack, query):
                said = t.gettext("{passage}  (deleted)")
                # The id gives way to the mark, which stays whole on the row: Chinese breaks
                # between characters, and a long id put "（已" on one line and "删除）" on the next.
                room = max(cells - cells_of(said.format(passage="")), 0) if cells else 0
                deleted = said.format(passage=shortened(passage_id, room))
                label = Content.styled(deleted, "dim italic")
                if last is not None and last.title:
                    title = Content.styled(shortened(last.title, cells), "dim italic")
                    label = Content.assemble(label, "\n", title)
                rows.append(Option(label, id=f"{DELETED_PREFIX}{passage_id}"))
        if len(found) > MAX_ROWS:
            # Last, under the deleted ones too: where End and scrolling down end (it wraps).
            more = t.gettext(MORE_MATCHES if query.strip() else MORE).format(
                count=f"{len(found) - MAX_ROWS:,}", shown=f"{MAX_ROWS:,}"
            )
            rows.append(Option(Content.styled(more, "dim italic"), disabled=True))
        options.add_options(rows)
        if not options.option_count:
            # An empty list read as a list not loaded yet, or broken.
            if query.strip():
                empty = t.gettext("No passage matches your search.")
            else:
                empty = t.gettext("No passages yet: Ctrl+N writes one.")
            options.add_option(Option(Content.styled(empty, "dim italic"), disabled=True))
            return
        wanted = select or current
        if wanted is not None:
            for index in range(options.option_count):
                if options.get_option_at_index(index).id in (wanted, f"{DELETED_PREFIX}{wanted}"):
                    options.highlighted = index
                    break
        if options.highlighted is None and options.option_count:
            # After a search, Tab then Enter opens the first match: a row is always highlighted.
            options.highlighted = 0

    def _row_cells(self) -> int:
        """The cells a row's line has: the same with or without a scrollbar, whose gutter the
        list keeps (`editor.tcss`); 0 before the list is laid out."""
        options = self.options
        padding = options.get_component_styles("option-list--option").padding
        return max(options.scrollable_content_region.width - padding.width, 0)

    def on_resize(self) -> None:
        # Titles are cut to the rows' width, known once the list is laid out.
        if self._row_cells() != self._title_cells:
            self._render_rows()

    def on_key(self, event: events.Key) -> None:
        # A letter typed on the list narrows it, as on the agent's queue: an editor who tabbed to
        # the rows and types a passage's name means the search, and the list takes no text (the
        # keys were dropped). The search box keeps the keys it takes, so a printable key reaching
        # here came from the list, even when the focus has moved on since.
        search = self.query_one("#passage-search", PlainInput)
        # A space starts no search: it stays the list's. But one that finds the search focused
        # was typed in a burst after letters already sent there (`late fee`), between two words.
        redirected = self.screen.focused is search
        if not (event.is_printable and event.character) or (
            event.character.isspace() and not redirected
        ):
            return
        event.stop()
        event.prevent_default()
        # Focused now, not on the app's next turn as `focus()` does, so the box's own focus
        # handling (it selects its text, for a Tab) comes before the key: typed keys add to the
        # search rather than replace it.
        self.screen.set_focus(search)
        search.call_later(search.append, event.character)

    def on_paste(self, event: events.Paste) -> None:
        # Pasted on the list: added to the search, as typed letters are (the box keeps its own).
        event.stop()
        if text := joined_lines(event.text):
            search = self.query_one("#passage-search", PlainInput)
            self.screen.set_focus(search)
            search.call_later(search.append, text)

    @on(Input.Changed, "#passage-search")
    def _search(self, event: Input.Changed) -> None:
        event.stop()
        self._render_rows()

    @on(Input.Submitted, "#passage-search")
    def _open_first(self, event: Input.Submitted) -> None:
        event.stop()
        options = self.options
        if not event.value.strip() and (highlighted := options.highlighted_option) is not None:
            # No search typed (the editor opens here): the row shown in the form, as Enter on the
            # list opens it, not the first row where an unsaved form put back is another's.
            self._choose(highlighted.id)
        elif options.option_count:
            first = options.get_option_at_index(0)
            if not first.disabled:  # Not the line saying nothing matches.
                self._choose(first.id)

    @on(OptionList.OptionSelected, "#passage-options")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._choose(event.option.id)

    def _choose(self, option_id: str | None) -> None:
        if option_id is None:
            return
        deleted = option_id.startswith(DELETED_PREFIX)
        self.post_message(self.Chosen(option_id.removeprefix(DELETED_PREFIX), deleted))
