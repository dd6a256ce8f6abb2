"""Content gaps: questions the bot escalated, newest first, each a candidate for a new passage.

A question is one row however often it was asked (and escalated), in whatever case, spacing or
punctuation: the rows are the gaps `helpdesk stats` counts, with how many times it was asked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, DataTable, Static

from chatbot.desk.models import ContentGap
from chatbot.i18n import DEFAULT_LOCALE, N_, Locale, translations
from chatbot.text import clip, printable

ASKED = N_("asked")
COLUMNS = (N_("when"), ASKED, N_("reason"), N_("top"), N_("agent replied"), N_("question"))
"""The question last: it takes the width the others leave, shortened with … where it must be,
so no column runs past the window's edge (at 80 columns "agent replied" used to be off screen).
"when" is when it was last asked; "asked", how many times, is shown only while a question was
asked more than once (a column of ones would only take the question's room)."""
MIN_QUESTION = 12
"""A question column narrower than this scrolls sideways instead: a few words are the least that
tells one question from another."""
QUESTION_COMFORT = 20
"""Narrower than this, the question would be cut to its first words: the other columns give way
first, the time dropped from "when" and "agent replied" headed "replied" (as the queue's statuses
take a short form). Reasons are never shortened."""
SHORT_REPLIED = N_("replied")
"""The heading of "agent replied" where it gives way: as wide as its "not yet"."""
UNREADABLE = N_(
    "The content gaps cannot be read just now: the desk's database cannot be reached. They show "
    "here once it is back."
)
"""Said in place of "No open content gaps." while they cannot be read: that was false."""


class GapList(Vertical):
    """A table of unhandled gaps; the button posts `WritePassage` for the highlighted one."""

    @dataclass
    class WritePassage(Message):
        """Start a passage from this gap, pre-filled with the agent's reply."""

        gap: ContentGap

    def __init__(self, *, locale: Locale = DEFAULT_LOCALE, id: str | None = None) -> None:
        super().__init__(id=id)
        self.locale: Locale = locale
        self._gaps: dict[str, ContentGap] = {}
        self._width = 0
        """The table's width the columns were last fitted to."""
        self._unreadable = False
        """The last read failed because the desk's database could not be reached."""

    def gettext(self, message: str) -> str:
        """`message` in the editor's language."""
        return translations(self.locale).gettext(message)

    def compose(self) -> ComposeResult:
        yield Static(
            self.gettext(
                "Questions the bot escalated, newest first. Write a passage from one and it is "
                "marked handled."
            ),
            classes="section-help",
        )
        table: DataTable[Text | str] = DataTable(id="gap-table", cursor_type="row")
        yield table
        yield Static("", id="gap-reply", markup=False)
        with Horizontal(id="gap-buttons"):
            yield Button(
                self.gettext("Write a passage from this gap"), variant="primary", id="gap-write"
            )

    def on_mount(self) -> None:
        self._fill(self.gaps)

    def on_resize(self) -> None:
        if self._width != self.query_one("#gap-table", DataTable).scrollable_content_region.width:
            self._fill(self.gaps)

    @property
    def gaps(self) -> list[ContentGap]:
        return list(self._gaps.values())

    def show(self, gaps: Sequence[ContentGap]) -> None:
        self._unreadable = False
        self._fill(gaps)

    def cannot_read(self) -> None:
        """None shown, and the line says they cannot be read now (not that there are none)."""
        self._unreadable = True
        self._fill([])

    def _fill(self, gaps: Sequence[ContentGap]) -> None:
        table = self.query_one("#gap-table", DataTable)
        row = table.cursor_row
        self._gaps = {str(g.id): g for g in gaps}
        # The question takes what the other columns leave of the table's width (each column
        # is padded by a cell on either side); they take their short forms where it would be
        # left too little.
        self._width = table.scrollable_content_region.width
        asked = any(gap.count > 1 for gap in gaps)
        columns = [column for column in COLUMNS if asked or column != ASKED]
        padding = 2 * table.cell_padding * len(columns)
        for short in (False, True):
            headers = [self.gettext(column) for column in columns]
            if short:
                headers[columns.index(N_("agent replied"))] = self.gettext(SHORT_REPLIED)
            rows = [self._cells(gap, short=short, asked=asked) for gap in gaps]
            widths = [
                max(cell_len(cell) for cell in (header, *column))
                for header, column in zip(
                    headers[:-1],
                    zip(*rows, strict=True) if rows else [()] * (len(columns) - 1),
                    strict=True,
                )
            ]
            room = self._width - sum(widths) - padding
            if room >= QUESTION_COMFORT:
                break
        table.clear(columns=True)
        for header, width in zip(headers[:-1], widths, strict=True):
            table.add_column(header, width=width)
        table.add_column(headers[-1], width=room if room >= MIN_QUESTION else None)
        for gap, cells in zip(gaps, rows, strict=True):
            question = printable(" ".join(gap.question.split()))
            # Cut here, not by Rich's ellipsis: cutting through a wide character, that pads the
            # half left over with a space, and a Chinese question read `还车的时候 …`.
            if room >= MIN_QUESTION:
                question = clip(question, room)
            shown = Text(question, no_wrap=True, overflow="ellipsis")
            table.add_row(*cells, shown, key=str(gap.id))
        if rows:
            table.move_cursor(row=min(row, len(rows) - 1))
        self.query_one("#gap-write", Button).disabled = not gaps
        # With none, the table shrinks to its headings and the line saying so follows them: it
        # was left at the foot of an empty table, which read as a list still loading.
        self.set_class(not gaps, "-empty")
        self._show_reply()

    def _cells(self, gap: ContentGap, *, short: bool, asked: bool) -> tuple[str, ...]:
        """A gap's cells before its question; `short`: the date without its time; `asked`: with
        how many times it was asked."""
        when = gap.created_at.astimezone().strftime("%m-%d" if short else "%m-%d %H:%M")
        top = "–" if gap.top_probability is None else f"{gap.top_probability:.2f}"
        replied = self.gettext("yes") if gap.agent_reply else self.gettext("not yet")
        return (when, *([str(gap.count)] if asked else []), gap.reason.value, top, replied)

    def highlighted(self) -> ContentGap | None:
        table = self.query_one("#gap-table", DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self._gaps.get(key or "")

    def _show_reply(self) -> None:
        gap = self.highlighted()
        reply = self.query_one("#gap-reply", Static)
        if gap is None and self._unreadable:
            reply.update(Text(self.gettext(UNREADABLE)))
        elif gap is None:
            reply.update(Text(self.gettext("No open content gaps."), style="dim"))
        elif gap.agent_reply:
            heading = self.gettext("Agent replied: ")
            reply.update(Text.assemble((heading, "bold"), printable(gap.agent_reply)))
        else:
            reply.update(Text(self.gettext("No agent has replied yet."), style="dim"))

    @on(DataTable.RowHighlighted, "#gap-table")
    def _row(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._show_reply()

    @on(DataTable.RowSelected, "#gap-table")
    @on(Button.Pressed, "#gap-write")
    def request_passage(self, event: DataTable.RowSelected | Button.Pressed) -> None:
        event.stop()
        gap = self.highlighted()
        if gap is not None:
            self.post_message(self.WritePassage(gap))
