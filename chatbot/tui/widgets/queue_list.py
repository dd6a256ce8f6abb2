"""The handoff queue: waiting conversations (how long, the question that escalated, reason and top
score), then the ones this agent has claimed (by whom, for how long), each marked when the customer
wrote since this agent last read it.

Built for a queue of any length: the table draws only the rows on screen (a Line API widget), and
a change anyone commits costs one question to the desk (which conversations changed since the last
one it saw) and one read of those rows, never the whole queue. Wait times tick on the visible rows
alone.
"""

from __future__ import annotations

import asyncio
import bisect
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from operator import itemgetter

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from chatbot.desk.aio import unreachable
from chatbot.desk.models import QueueItem, State
from chatbot.desk.service import AWAY_AFTER_S
from chatbot.engine.models import Reason
from chatbot.errors import HelpdeskError
from chatbot.i18n import DEFAULT_LOCALE, N_, Locale, translations
from chatbot.notices import bots_stalled, claimed_for, waiting_for
from chatbot.text import clip, printable
from chatbot.tui.localize import localize_bindings
from chatbot.tui.services import Services

UNREAD = "●"
HEADERS = ("#", N_("Status"), N_("Reason"), N_("Top"), N_("Question"))
"""Column headings in English: each is translated where it is drawn (`#` stays as it is)."""
SHORT_STATUS_HEADER = N_("Wait")
NO_QUESTION = N_("(no question yet)")
GAP = 1
"""Blank cells between two columns."""
REASON_WIDTH = max(len(reason.value) for reason in Reason)
"""The longest reason, `customer-asked`: reasons are never shortened."""
QUESTION_COMFORT = 16
"""The question gives up cells first, down to this, before the statuses take their short form."""
QUESTION_MIN = 6
"""Then the question shortens further, down to this: its first word or two (`I was…`)."""
STATUS_MIN = 7
"""A short status keeps this many cells (`59m 59s`); only a claim's long agent name is cut."""
SHORT_CLAIM_MAX = 14
"""A short claim (`ana 12m`) takes at most this many cells: a longer agent name is cut."""
READING = N_("Reading the queue…")
"""In the rows' place until the first read of the queue comes back: "Nobody is waiting" said
then was false for the 0.05-0.5 s (longer on PostgreSQL) that 3,000 waiting take to read, on
every start, when an agent looks."""
NOBODY_WAITING = N_("Nobody is waiting. Escalated questions appear here.")


def wait_time(since: datetime, now: datetime) -> str:
    """`45s`, `3m 05s`, `2h 07m`: short enough for a table column."""
    seconds = max(0, int((now - since).total_seconds()))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m {seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours}h {minutes:02d}m"
    return f"{hours // 24}d {hours % 24}h"


def coarse_time(since: datetime, now: datetime) -> str:
    """`45s`, `3m`, `2h 07m`: how long a claim has been held, without ticking seconds."""
    seconds = max(0, int((now - since).total_seconds()))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    return wait_time(since, now)


def one_line(text: str, limit: int) -> str:
    """`text` on one line, every character literal, cut to `limit` cells with an ellipsis."""
    return fit(" ".join(printable(text).split()), limit).rstrip()


def fit(text: str, width: int) -> str:
    """Exactly `width` cells: padded, or cut with `…` (wide characters counted as two)."""
    if width <= 0:
        return ""
    if cell_len(text) <= width:
        return text + " " * (width - cell_len(text))
    # The ellipsis right after the words kept: a cut through a wide character (🚲, 中) leaves a
    # space in its place, which with the one before it read as the end (`[red]Ana[/]  …`).
    kept = set_cell_size(text, width - 1).rstrip()
    return kept + "…" + " " * (width - 1 - cell_len(kept))


def away_for(item: QueueItem, seen: Mapping[str, datetime], now: datetime) -> str | None:
    """How long a claim's agent has been away (`4m`): not seen for over `AWAY_AFTER_S`, counting
    from their last sign of life (a console's presence, or the claim itself). None while they
    are here, and for an agent never seen (a claim from the command line): nothing says they
    left."""
    if item.state is not State.CLAIMED or item.agent is None:
        return None
    last = seen.get(item.agent)
    if last is None:
        return None
    if item.claimed_at is not None:
        last = max(last, item.claimed_at)
    if (now - last).total_seconds() <= AWAY_AFTER_S:
        return None
    return coarse_time(last, now)


def status(
    item: QueueItem,
    now: datetime,
    *,
    short: bool = False,
    locale: Locale = DEFAULT_LOCALE,
    seen: Mapping[str, datetime] | None = None,
    width: int | None = None,
) -> str:
    """`waiting 3m 05s` or `claimed by ana for 12m` (`3m 05s`, `ana 12m` when `short`); for an
    agent who is away (by `seen`, when each agent was last seen), `claimed by ana · away 4m`
    (`ana away 4m`). A claim that would not fit in `width` cells has its agent's name cut
    (`王… 20s`), never the time or the absence: cut from its end, a Chinese name of three
    characters left `王小明…` and no time at all."""
    if item.state is State.CLAIMED:
        since = item.claimed_at or item.waiting_since
        agent = printable(item.agent or "?")
        duration = coarse_time(since, now)
        away = None if seen is None else away_for(item, seen, now)
        shown = claimed_for(agent, duration, short=short, locale=locale, away=away)
        if width is not None and cell_len(shown) > width:
            rest = cell_len(claimed_for("", duration, short=short, locale=locale, away=away))
            if short and away is None and width - rest < 1:
                return "…" + duration  # No cell left for the name: the time stays.
            # Without `fit`'s padding: a wide character cut leaves a blank cell after the `…`.
            agent = clip(agent, max(1, width - rest))
            shown = claimed_for(agent, duration, short=short, locale=locale, away=away)
        return shown
    return waiting_for(wait_time(item.waiting_since, now), short=short, locale=locale)


def needs_attention(old: QueueItem | None, new: QueueItem) -> bool:
    """Whether the queue's change is news an agent away from the window wants to hear of: a
    customer newly waiting for a person, or writing again in a conversation the agent holds."""
    if new.state is State.WAITING:
        return old is None or old.state is not State.WAITING
    return new.unread and new.last_customer_entry > (0 if old is None else old.last_customer_entry)


def order(item: QueueItem) -> tuple[int, float, int]:
    """The store's order: waiting ones longest first, then this agent's claims."""
    return (item.state is not State.WAITING, item.waiting_since.timestamp(), item.conversation_id)


@dataclass(frozen=True)
class Columns:
    """Cells per column for one width: every column is always shown and no reason is ever
    shortened; the question shortens first."""

    id: int
    status: int
    reason: int
    top: int
    question: int
    short: bool = False
    """Statuses in their short form (`3m 05s`, `ana 12m`): the long ones would crowd out the
    question."""

    @property
    def width(self) -> int:
        """Cells a row takes: wider than the table's, the table scrolls sideways."""
        return _fixed(self.id, self.top) + self.status + self.reason + self.question

    @classmethod
    def for_width(
        cls,
        width: int,
        *,
        id_width: int,
        claims: bool,
        reason: int = REASON_WIDTH,
        short_status: int = SHORT_CLAIM_MAX,
    ) -> Columns:
        """`reason`: the cells of the longest reason shown (or its heading), never fewer;
        `short_status`: of the longest status shown in its short form (or its heading), which
        a short status column takes, between `STATUS_MIN` and `SHORT_CLAIM_MAX`."""
        top = 4
        room = max(0, width - _fixed(id_width, top))
        # "waiting 28m 32s" is 15 cells: at 14, a wait of ten minutes or more lost its seconds.
        status, short = (27 if claims else 15), False
        if room - status - reason < QUESTION_COMFORT:
            # Sized for the longest claim there could be, "ana 2m" left 8 blank cells that a
            # question cut to `I was c…` could have had.
            fitted = max(STATUS_MIN, min(SHORT_CLAIM_MAX, short_status))
            status, short = (fitted if claims else STATUS_MIN), True
        # The question gives up cells down to its least; then a short status down to its least
        # (a claim's agent name cut); then the row is wider than the table, which scrolls
        # sideways rather than cut a reason or drop a column.
        question = max(QUESTION_MIN, room - status - reason)
        status = max(STATUS_MIN, min(status, room - question - reason))
        return cls(id_width, status, reason, top, question, short)


def _reason(item: QueueItem) -> str:
    """The reason a row shows (a dash for a conversation no escalation put there)."""
    return item.reason.value if item.reason else "–"


def _fixed(id_width: int, top: int) -> int:
    """A row's cells besides its status, reason and question: padding, the mark, the id, the top
    score and the gaps between the columns."""
    return 1 + 1 + GAP + id_width + GAP + GAP + top + GAP + GAP


@dataclass(frozen=True)
class _Pass:
    """What the rows of one drawing of the table share."""

    width: int
    columns: Columns
    now: datetime
    focus: bool
    theme: str

    @property
    def drawn(self) -> int:
        """Cells a row is drawn in: the table's, or the row's least where that is wider."""
        return max(self.width, self.columns.width)


@dataclass
class DeskTrouble(Message):
    """Whether the desk's database failed (`trouble`) or answered a read of the console's: the
    console says so in one line while it fails, rather than each of its parts in its own words
    (the driver's, the database's address and all) only when the agent acts."""

    trouble: bool


DESK_TROUBLE = N_("The desk's database cannot be reached: retrying. Nothing is lost.")
"""Said to agents for a database that cannot be reached, in place of its address and the
driver's sentences (the operator's, in the logs)."""


def agent_error(error: HelpdeskError, locale: Locale) -> str:
    """An error as an agent reads it: a database that cannot be reached said as `DESK_TROUBLE`
    in their language, anything else (a refusal) in its own words."""
    if unreachable(error):
        return translations(locale).gettext(DESK_TROUBLE)
    return str(error)


def desk_error(widget: Widget, error: HelpdeskError) -> None:
    """Tell the agent what went wrong in a read or a move: a database that cannot be reached is
    the console's line (see `DeskTrouble`), anything else a notice of one line."""
    if unreachable(error):
        widget.post_message(DeskTrouble(True))
    else:
        widget.notify(" ".join(str(error).split()), severity="error", markup=False)


class QueueTable(ScrollView, can_focus=True):
    """The queue's rows, sorted as the store sorts them, drawn only where they are on screen."""

    BINDINGS = [
        Binding("enter", "select_cursor", N_("Open")),
        Binding("up", "cursor_up", N_("Up"), show=False),
        Binding("down", "cursor_down", N_("Down"), show=False),
        Binding("pageup", "page_up", N_("Page up"), show=False),
        Binding("pagedown", "page_down", N_("Page down"), show=False),
        Binding("home", "first", N_("First"), show=False),
        Binding("end", "last", N_("Last"), show=False),
    ]
    COMPONENT_CLASSES = {
        "queue-table--header",
        "queue-table--cursor",
        "queue-table--even",
        "queue-table--unread",
        "queue-table--claimed",
    }
    DEFAULT_CSS = """
    QueueTable {
        background: $surface;
        scrollbar-size-vertical: 1;
        & > .queue-table--header { text-style: bold; color: $text-accent; }
        & > .queue-table--even { background: $surface-lighten-1 20%; }
        & > .queue-table--cursor { background: $block-cursor-blurred-background; }
        &:focus > .queue-table--cursor {
            background: $block-cursor-background;
            color: $block-cursor-foreground;
            text-style: $block-cursor-text-style;
        }
        & > .queue-table--unread { color: $text-warning; text-style: bold; }
        & > .queue-table--claimed { color: $text-muted; }
    }
    """

    @dataclass
    class Selected(Message):
        """Enter or a second click on a row: open that conversation."""

        conversation_id: int

    def __init__(self, services: Services, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.services = services
        localize_bindings(self, services.locale)
        t = translations(services.locale)
        self._headers = tuple(t.gettext(header) for header in HEADERS)
        self._short_status_header = t.gettext(SHORT_STATUS_HEADER)
        self._no_question = t.gettext(NO_QUESTION)
        """The headings and the stand-in for a missing question, in the reader's language."""
        self._rows: list[QueueItem] = []
        self._keys: list[tuple[int, float, int]] = []
        self._by_id: dict[int, QueueItem] = {}
        self._questions: dict[int, str] = {}
        """Each question flattened and made literal once, when its row is first drawn: not on
        every redraw, nor for the thousands of rows never scrolled to."""
        self._reasons: Counter[str] = Counter()
        """How many rows show each reason: the column is as wide as the longest one shown, so a
        queue of `low-score` leaves the question five more cells."""
        self._reason_header = cell_len(self._headers[2])
        self._claimed = 0
        self._id_width = 1
        """Digits of the largest id seen (never narrower, so columns do not jump)."""
        self._columns: tuple[tuple[int, int, bool, int, int], Columns] | None = None
        self._strips: dict[tuple[object, ...], Strip] = {}
        self._pass: _Pass | None = None
        """Rows as last drawn: a change redraws the rows on screen, and most are as they were."""
        self.cursor_row = 0
        self._held: list[events.Key | events.Paste] | None = None
        """Keys and pastes that came after the Enter that opened a row, kept until the console
        has opened it (see `release`): typed in a burst, they reached the queue before it was
        open, and Ctrl+L did nothing there, letters searched."""

    # -- the rows ---------------------------------------------------------------------------------

    @property
    def items(self) -> list[QueueItem]:
        """The rows, in order (a copy)."""
        return list(self._rows)

    @property
    def row_count(self) -> int:
        return len(self._rows)

    @property
    def claimed(self) -> int:
        """Rows this agent has claimed (the rest are waiting)."""
        return self._claimed

    def item(self, conversation_id: int) -> QueueItem | None:
        return self._by_id.get(conversation_id)

    @property
    def selected_id(self) -> int | None:
        if not self._rows:
            return None
        return self._rows[min(self.cursor_row, len(self._rows) - 1)].conversation_id

    def replace_all(self, items: Sequence[QueueItem]) -> None:
        """The whole queue, as read in one go."""
        selected = self.selected_id
        # Each row's key worked out once, and its question flattened only once drawn: at 10,000
        # waiting, flattening them all took more than half of this (on the UI thread).
        keyed = sorted([(order(item), item) for item in items], key=itemgetter(0))
        self._rows = [item for _, item in keyed]
        self._keys = [key for key, _ in keyed]
        self._by_id = {item.conversation_id: item for item in self._rows}
        self._questions = {}
        self._claimed = sum(item.state is State.CLAIMED for item in self._rows)
        self._id_width = len(str(max(self._by_id, default=1)))
        self._reasons = Counter(_reason(item) for item in self._rows)
        self._settle(selected)

    def apply(self, changed: Iterable[int], items: Sequence[QueueItem]) -> None:
        """`changed` conversations are now `items` (those of them still in the queue)."""
        selected = self.selected_id
        fresh = {item.conversation_id: item for item in items}
        for conversation_id in changed:
            self._drop(conversation_id)
            if (item := fresh.get(conversation_id)) is not None:
                key = order(item)
                at = bisect.bisect_left(self._keys, key)
                self._keys.insert(at, key)
                self._rows.insert(at, item)
                self._by_id[conversation_id] = item
                self._claimed += item.state is State.CLAIMED
                self._id_width = max(self._id_width, len(str(conversation_id)))
                self._reasons[_reason(item)] += 1
        self._settle(selected)

    def update_item(self, item: QueueItem) -> None:
        """A row changed in place, in a way that keeps its position (a read marker)."""
        old = self._by_id.get(item.conversation_id)
        if old is None or order(old) != order(item):
            return
        self._rows[bisect.bisect_left(self._keys, order(old))] = item
        self._by_id[item.conversation_id] = item
        self.refresh()

    def _drop(self, conversation_id: int) -> None:
        old = self._by_id.pop(conversation_id, None)
        if old is None:
            return
        at = bisect.bisect_left(self._keys, order(old))
        del self._keys[at]
        del self._rows[at]
        self._questions.pop(conversation_id, None)  # Flattened only if it was drawn.
        self._claimed -= old.state is State.CLAIMED
        self._reasons[_reason(old)] -= 1

    def _flat(self, item: QueueItem) -> str:
        """The row's question on one line, every character literal: worked out once per row."""
        flat = self._questions.get(item.conversation_id)
        if flat is None:
            flat = " ".join(printable(item.question).split()) or self._no_question
            self._questions[item.conversation_id] = flat
        return flat

    def _settle(self, selected: int | None) -> None:
        """After rows moved: keep the cursor on the conversation it was on, resize, redraw."""
        if selected is not None and (item := self._by_id.get(selected)) is not None:
            self.cursor_row = bisect.bisect_left(self._keys, order(item))
        self.cursor_row = max(0, min(self.cursor_row, len(self._rows) - 1))
        self._fit_width()
        self.refresh()

    def _fit_width(self) -> None:
        """The rows' size: as wide as the table, or wider where the row's least does not fit in
        it (the table scrolls sideways then)."""
        row = self.columns().width
        wide = row if row > self.scrollable_content_region.width else self.size.width
        size = Size(wide, len(self._rows) + 1)
        if size != self.virtual_size:
            self.virtual_size = size

    def on_resize(self, event: events.Resize) -> None:
        self._fit_width()

    # -- drawing ----------------------------------------------------------------------------------

    def columns(self) -> Columns:
        """The column widths for the width on screen, worked out once per change of width."""
        reason = max([self._reason_header] + [len(r) for r, n in self._reasons.items() if n])
        claims = self._claimed > 0
        short_status = self._short_claims() if claims else STATUS_MIN
        key = (self.scrollable_content_region.width, self._id_width, claims, reason, short_status)
        if self._columns is None or self._columns[0] != key:
            width, id_width, claims, reason, short_status = key
            layout = Columns.for_width(width, id_width=id_width, claims=claims, reason=reason,
                                       short_status=short_status)  # fmt: skip
            self._columns = (key, layout)
        return self._columns[1]

    def _short_claims(self) -> int:
        """Cells of the longest claim as its short status shows it now (`ana 12m`), or of the
        column's heading. The claims come last in the queue's order: only they are read, not
        the thousands waiting before them."""
        now, locale = self.services.clock(), self.services.locale
        cells = cell_len(self._short_status_header)
        for item in reversed(self._rows):
            if item.state is State.WAITING:
                break
            if item.state is State.CLAIMED:
                cells = max(cells, cell_len(status(item, now, short=True, locale=locale)))
        return cells

    def render_lines(self, crop: Region) -> list[Strip]:
        # What every row of one drawing shares, worked out once for all of them: each row asked
        # for the region, the columns, the clock, the focus and the theme again, a third of the
        # ~2 ms a change at 10,000 waiting cost to draw (issue 13).
        width = self.scrollable_content_region.width
        self._pass = _Pass(width, self.columns(), self.services.clock(), self.has_focus,
                           self.app.theme)  # fmt: skip
        try:
            return super().render_lines(crop)
        finally:
            self._pass = None

    def render_line(self, y: int) -> Strip:
        shared = self._pass or _Pass(
            self.scrollable_content_region.width, self.columns(), self.services.clock(),
            self.has_focus, self.app.theme,
        )  # fmt: skip
        strip = self._line(y, shared)
        if shared.columns.width > shared.width:  # Wider than the table: scrolled sideways.
            x = int(self.scroll_offset.x)
            strip = strip.crop(x, x + shared.width)
        return strip

    def _line(self, y: int, shared: _Pass) -> Strip:
        """Line `y` of the table on screen, whole (the header's at 0)."""
        width, columns = shared.drawn, shared.columns
        if y == 0:
            headers = self._headers
            cells = [
                " ",
                fit(headers[0], columns.id),
                fit(self._short_status_header if columns.short else headers[1], columns.status),
                fit(headers[2], columns.reason),
                fit(headers[3], columns.top),
                fit(headers[4], columns.question),
            ]
            style = self.rich_style + self.get_component_rich_style("queue-table--header")
            return Strip([Segment(" " + (" " * GAP).join(cells), style)]).adjust_cell_length(
                width, style
            )
        index = int(self.scroll_offset.y) + y - 1
        if index >= len(self._rows):
            return Strip.blank(width, self.rich_style)
        return self._row(self._rows[index], index, shared)

    def _row(self, item: QueueItem, index: int, shared: _Pass) -> Strip:
        columns, width = shared.columns, shared.drawn
        shown = status(item, shared.now, short=columns.short, locale=self.services.locale,
                       width=columns.status)  # fmt: skip
        key = (item, index == self.cursor_row, index % 2, columns, width, shown, shared.focus,
               shared.theme)  # fmt: skip
        strip = self._strips.get(key)
        if strip is None:
            if len(self._strips) > 4 * max(1, self.size.height):
                self._strips.clear()
            strip = self._strips[key] = self._draw(item, index, columns, width, shown)
        return strip

    def _draw(self, item: QueueItem, index: int, columns: Columns, width: int, shown: str) -> Strip:
        base = self.rich_style
        if index == self.cursor_row:
            base += self.get_component_rich_style("queue-table--cursor")
        elif index % 2:
            base += self.get_component_rich_style("queue-table--even")
        unread = item.unread
        text_style = base + (
            self.get_component_rich_style("queue-table--unread", partial=True)
            if unread
            else Style()
        )
        muted = base + self.get_component_rich_style("queue-table--claimed", partial=True)
        top = "–" if item.top_probability is None else f"{item.top_probability:.2f}"
        gap = Segment(" " * GAP, base)
        segments = [
            Segment(" ", base),
            Segment(UNREAD if unread else " ", text_style),
            gap,
            Segment(str(item.conversation_id).rjust(columns.id), text_style),
            gap,
            Segment(
                fit(shown, columns.status), muted if item.state is State.CLAIMED else text_style
            ),
            gap,
            Segment(fit(_reason(item), columns.reason), base),
            gap,
            Segment(fit(top, columns.top), base),
            gap,
            Segment(fit(self._flat(item), columns.question), text_style),
        ]
        return Strip(segments).adjust_cell_length(width, base)

    def row_cells(self, index: int) -> tuple[str, ...]:
        """Row `index` as it is drawn: id, status, reason, top score, question (each cut to its
        column, trailing blanks removed); and whether it is marked unread first."""
        item = self._rows[index]
        columns = self.columns()
        shared = _Pass(self.scrollable_content_region.width, columns, self.services.clock(),
                       self.has_focus, self.app.theme)  # fmt: skip
        line = self._row(item, index, shared).text
        widths = (1, columns.id, columns.status, columns.reason, columns.top, columns.question)
        # Columns are measured in cells, and a wide character (Chinese) takes two.
        starts: list[int] = []
        at = 0
        for char in line:
            starts.append(at)
            at += cell_len(char)
        placed = list(zip(line, starts, strict=True))
        cells, at = [], 1
        for width in widths:
            cells.append("".join(c for c, x in placed if at <= x < at + width).strip())
            at += width + GAP
        return tuple(cells)

    def tick(self) -> None:
        """Wait times moved: redraw the rows on screen (only those are drawn)."""
        if self._rows and self.display and self.is_mounted:
            self.refresh()

    # -- moving and choosing ----------------------------------------------------------------------

    @property
    def _page(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    def move_cursor(self, row: int) -> None:
        if not self._rows:
            return
        self.cursor_row = max(0, min(row, len(self._rows) - 1))
        top = int(self.scroll_offset.y)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False, immediate=True)
        elif self.cursor_row >= top + self._page:
            self.scroll_to(y=self.cursor_row - self._page + 1, animate=False, immediate=True)
        self.refresh()

    def action_cursor_up(self) -> None:
        self.move_cursor(self.cursor_row - 1)

    def action_cursor_down(self) -> None:
        self.move_cursor(self.cursor_row + 1)

    def action_page_up(self) -> None:
        self.move_cursor(self.cursor_row - self._page)

    def action_page_down(self) -> None:
        self.move_cursor(self.cursor_row + self._page)

    def action_first(self) -> None:
        self.move_cursor(0)

    def action_last(self) -> None:
        self.move_cursor(len(self._rows) - 1)

    def action_select_cursor(self) -> None:
        if (selected := self.selected_id) is not None:
            self.post_message(self.Selected(selected))

    async def _on_key(self, event: events.Key) -> None:
        # Open's key is a binding, and a binding runs once its key has passed every widget up to
        # the app: the keys typed after it had reached the queue by then. Here it is handled in
        # turn, and the keys after it wait for the conversation it opens.
        if self._held is not None:
            event.prevent_default()
            event.stop()
            self._held.append(events.Key(event.key, event.character))
            return
        bindings = self._bindings.key_to_bindings.get(event.key, ())
        selected = self.selected_id
        if selected is not None and any(b.action == "select_cursor" for b in bindings):
            event.prevent_default()
            event.stop()
            self._held = []
            self.post_message(self.Selected(selected))
        elif bindings and self.check_action(bindings[0].action, ()):
            # The queue's other keys too (the cursor's): as bindings they ran after an Enter
            # typed behind them (Down Enter in one burst), which then opened the row the cursor
            # had left.
            event.prevent_default()
            event.stop()
            await self.run_action(bindings[0].action)

    def _on_paste(self, event: events.Paste) -> None:
        if self._held is not None:
            event.prevent_default()
            event.stop()
            self._held.append(events.Paste(event.text))

    def release(self) -> list[events.Key | events.Paste]:
        """The conversation Enter chose is open, or failed to open: the keys and pastes typed
        since, in order, for the console to pass on to it or drop. Keys go their usual way
        again."""
        held, self._held = self._held or [], None
        return held

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "select_cursor":
            return bool(self._rows)  # Hidden in the footer while nobody waits.
        return True

    async def _on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or offset.y == 0:
            return
        row = int(self.scroll_offset.y) + offset.y - 1
        if row >= len(self._rows):
            return
        again = row == self.cursor_row
        self.move_cursor(row)
        if again or event.chain > 1:
            self.action_select_cursor()


class EmptyQueue(Static, can_focus=True):
    """The line "Nobody is waiting" (`READING` until the queue was first read), shown in the
    table's place and a focus stop as the table is: the console's keys (Find, Team, Next) and
    typing to search need a focused part of it, and with the table hidden there was none."""


class QueueList(Vertical):
    """The queue, kept in step with the desk: read whole once, then row by row as it changes."""

    @dataclass
    class Opened(Message):
        """The agent chose a conversation from the queue."""

        conversation_id: int

    @dataclass
    class Loaded(Message):
        """The whole queue was read: `rows` of them."""

        rows: int

    BOT_CHECK_S = 5.0
    """How often to ask the desk whether questions wait for a bot (a wait grows with no change
    to hear of); tests shorten it."""

    def __init__(self, services: Services, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.services = services
        self._title = ""
        self.cursor: int | None = None
        """The change feed's cursor: changes after it are not in the table yet."""
        self._updating = asyncio.Lock()
        self._again = False
        self.loaded = asyncio.Event()
        """Set once the whole queue has been read the first time."""
        self._empty: bool | None = None
        """Whether the footer was last told the queue is empty (None: not told yet)."""

    def compose(self) -> ComposeResult:
        t = translations(self.services.locale)
        yield Static(t.gettext("Handoff queue"), classes="section-title", id="queue-title")
        yield Static(id="queue-bots")
        table = QueueTable(self.services, id="queue-table")
        table.display = False  # Until the first read: the line says the queue is being read.
        yield table
        yield EmptyQueue(Text(t.gettext(READING)), id="queue-empty")

    @property
    def table(self) -> QueueTable:
        return self.query_one(QueueTable)

    @property
    def items(self) -> list[QueueItem]:
        return self.table.items

    @property
    def selected_id(self) -> int | None:
        return self.table.selected_id

    def on_mount(self) -> None:
        self.services.changed.subscribe(self, self._store_changed)
        self.set_interval(1.0, self.table.tick)
        self.set_interval(self.BOT_CHECK_S, self.check_bots)
        # After the mount: the footer hears of binding changes only from a mounted widget.
        self.call_later(self.reload)

    async def reload(self) -> None:
        """Read the whole queue (first load, or the agent's name changed)."""
        async with self._updating:
            desk = self.services.desk
            try:
                # The cursor first: a change landing between the two reads is read again, never
                # missed.
                cursor = await desk.last_entry_id()
                items = await desk.queue(agent=self.services.agent)
            except HelpdeskError as error:
                desk_error(self, error)
                return
            self.post_message(DeskTrouble(False))
            self.cursor = cursor
            self.table.replace_all(items)
            if not self.loaded.is_set():
                nobody = translations(self.services.locale).gettext(NOBODY_WAITING)
                self.query_one(EmptyQueue).update(Text(nobody))
            self._show_empty()
            self.loaded.set()
        self.post_message(self.Loaded(len(items)))
        self.check_bots()

    async def caught_up(self) -> None:
        """The desk answers again after failing: read what changed meanwhile (a change notice
        read while it failed is not read again by itself), or the whole queue if it never
        was."""
        if self.cursor is None:
            await self.reload()
        else:
            await self.update()

    async def _store_changed(self, _version: int) -> None:
        if self._updating.locked():
            self._again = True  # Whatever landed meanwhile is read right after.
            return
        await self.update()

    async def update(self) -> None:
        """Read the rows of the conversations that changed since the cursor, and only those."""
        async with self._updating:
            while True:
                self._again = False
                if self.cursor is None:
                    return
                desk = self.services.desk
                try:
                    changes = await desk.changes(after=self.cursor)
                    ids = list(changes.conversation_ids)
                    items = await desk.queue_items(ids, agent=self.services.agent) if ids else []
                except HelpdeskError as error:
                    # Said once, in the console's line: every change notice read again (each
                    # write the agent tried wakes one) stacked the driver's words in a notice.
                    desk_error(self, error)
                    return
                self.post_message(DeskTrouble(False))
                self.cursor = changes.cursor
                if ids and self.query_one("#queue-bots").display:
                    self.check_bots()  # A bot may have taken them: the line goes at once.
                if ids:
                    table = self.table
                    news = any(needs_attention(table.item(i.conversation_id), i) for i in items)
                    table.apply(ids, items)
                    self._show_empty()
                    if news and not self.app.app_focus:
                        # The terminal's bell (a sound, a flash or an urgency mark, as its
                        # owner set it) reaches an agent working in another window; one who
                        # is looking sees the row.
                        self.app.bell()
                if not self._again:
                    return

    @work(exclusive=True, group="queue-bots")
    async def check_bots(self) -> None:
        """Show, above the rows, how long questions have waited for a bot once that is longer
        than a bot takes: with no bot running, customers wait where no agent would see them.
        Asked on a timer, it is also how the console hears that the database cannot be reached
        (and is back) while nothing else reads it: with no change to hear of, an agent who
        was not typing saw nothing wrong."""
        try:
            count, oldest = await self.services.desk.bot_backlog()
            stalled = bool(count) and oldest is not None and oldest >= self.services.bot_stalled_s
            # Bots holding questions are running, only busy: "is one running?" would send the
            # agent looking for a bot that is there (doctor says it alike).
            held = await self.services.desk.bot_holds() if stalled else 0
        except HelpdeskError as error:
            if unreachable(error):
                self.post_message(DeskTrouble(True))
            return
        self.post_message(DeskTrouble(False))
        try:
            line = self.query_one("#queue-bots", Static)
        except NoMatches:  # Taken down while the desk answered: the app is closing.
            return
        if stalled:
            assert oldest is not None
            now = self.services.clock()
            wait = wait_time(now - timedelta(seconds=oldest), now)
            line.update(Text(bots_stalled(count, wait, held=held, locale=self.services.locale)))
        if line.display != stalled:
            line.display = stalled

    def mark_read(self, conversation_id: int, entry_id: int) -> None:
        """This agent read the conversation up to `entry_id`: drop its unread mark at once."""
        item = self.table.item(conversation_id)
        if item is not None and entry_id > item.read_entry:
            self.table.update_item(item.model_copy(update={"read_entry": entry_id}))

    def _show_empty(self) -> None:
        table = self.table
        waiting = table.row_count - table.claimed
        t = translations(self.services.locale)
        if table.claimed:
            title = t.gettext("Handoff queue · {waiting} waiting · {claimed} yours").format(
                waiting=f"{waiting:,}", claimed=f"{table.claimed:,}"
            )
        else:
            title = t.gettext("Handoff queue · {waiting} waiting").format(waiting=f"{waiting:,}")
        if title != self._title:  # Most changes move no count: no relayout for them.
            self._title = title
            self.query_one("#queue-title", Static).update(Text(title))
        empty = table.row_count == 0
        notice = self.query_one(EmptyQueue)
        # The focus goes with what is shown: to the line when the last row leaves, back to the
        # table when one comes (a hidden table loses the focus, and the console's keys with it),
        # or to whichever is shown when nothing has it and nothing else could (either may have
        # been hidden at the screen's first; beside the chat, the question box is the first).
        shown, hidden = (notice, table) if empty else (table, notice)
        take = hidden.has_focus or (self.app.focused is None and self.display and self._alone())
        notice.display = empty
        if table.display == empty:
            table.display = not empty
        if take:
            self.screen.set_focus(shown, scroll_visible=False)
        if empty != self._empty:
            # Open is offered only while there are rows (the table's check_action): the footer
            # hears of it here, not at whatever binding change happens to come next.
            self._empty = empty
            self.refresh_bindings()

    def _alone(self) -> bool:
        """Nothing outside the queue on its screen takes the focus."""
        return all(self in widget.ancestors for widget in self.screen.focus_chain)

    def take_focus(self) -> None:
        """Focus the rows, or the line saying there are none while the table is hidden."""
        table = self.table
        (table if table.display else self.query_one(EmptyQueue)).focus()

    def on_queue_table_selected(self, event: QueueTable.Selected) -> None:
        event.stop()
        self.post_message(self.Opened(event.conversation_id))
