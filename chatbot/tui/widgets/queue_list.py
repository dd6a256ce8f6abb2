"""The handoff queue: waiting conversations with wait time, the question that escalated, reason
and top score, then the ones this agent has claimed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from rich.text import Text
from textual import getters, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from chatbot.desk.models import QueueItem, State
from chatbot.errors import HelpdeskError
from chatbot.text import printable
from chatbot.tui.services import Services

QUESTION_CHARS = 60
FIXED_COLUMNS = 48
"""Roughly the cells the other columns take, so the question fits the width it is given."""


def wait_time(since: datetime, now: datetime) -> str:
    """`45s`, `3m 05s`, `2h 07m`: short enough for a table column."""
    seconds = max(0, int((now - since).total_seconds()))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m {seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def one_line(text: str, limit: int) -> str:
    flat = " ".join(printable(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class QueueTable(DataTable[Text]):
    """The queue's table, with Enter named in the footer (DataTable hides its own binding)."""

    BINDINGS = [Binding("enter", "select_cursor", "Open conversation")]


class QueueList(Vertical):
    """Lists the queue from the store; refreshed on every store change and each second."""

    @dataclass
    class Opened(Message):
        """The agent chose a conversation from the queue."""

        conversation_id: int

    table = getters.query_one(QueueTable)

    def __init__(self, services: Services, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.services = services
        self.items: list[QueueItem] = []

    def compose(self) -> ComposeResult:
        table = QueueTable(cursor_type="row", zebra_stripes=True)
        table.add_column("#", key="id")
        table.add_column("Waiting", key="wait")
        table.add_column("Reason", key="reason")
        table.add_column("Top", key="top")
        table.add_column("State", key="state")
        table.add_column("Question", key="question")
        yield table
        yield Static(Text("Nobody is waiting. Escalated questions appear here."), id="queue-empty")

    async def on_mount(self) -> None:
        self.services.changed.subscribe(self, self._store_changed)
        await self.reload()
        self.set_interval(1.0, self._tick)

    def on_resize(self) -> None:
        self._render_rows()  # The question column is cut to the width available.

    async def _store_changed(self, _version: int) -> None:
        await self.reload()

    def _tick(self) -> None:
        # Only the wait times move between store changes, so only their cells are redrawn.
        now = self.services.clock()
        for item in self.items:
            key = str(item.conversation_id)
            if key in self.table.rows:
                self.table.update_cell(key, "wait", Text(wait_time(item.waiting_since, now)))

    async def reload(self) -> None:
        try:
            self.items = await self.services.desk.queue(agent=self.services.agent)
        except HelpdeskError as error:
            self.notify(str(error), severity="error", markup=False)
            return
        self._render_rows()

    def _render_rows(self) -> None:
        table = self.table
        selected = self.selected_id
        now = self.services.clock()
        question_chars = max(20, min(QUESTION_CHARS, self.size.width - FIXED_COLUMNS))
        table.clear()
        for item in self.items:
            top = "–" if item.top_probability is None else f"{item.top_probability:.2f}"
            state = "waiting" if item.state is State.WAITING else f"claimed: {item.agent or ''}"
            table.add_row(
                Text(str(item.conversation_id)),
                Text(wait_time(item.waiting_since, now)),
                Text(item.reason.value if item.reason else "–"),
                Text(top),
                Text(printable(state), style="dim" if item.state is State.CLAIMED else ""),
                Text(one_line(item.question, question_chars) or "(no question)"),
                key=str(item.conversation_id),
            )
        if selected is not None and str(selected) in table.rows:
            table.move_cursor(row=table.get_row_index(str(selected)), animate=False)
        self.query_one("#queue-empty").display = not self.items
        table.display = bool(self.items)

    @property
    def selected_id(self) -> int | None:
        table = self.table
        if not self.items or table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return None if key is None else int(key)

    @on(DataTable.RowSelected)
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.post_message(self.Opened(int(event.row_key.value)))
