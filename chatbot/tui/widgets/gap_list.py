"""Content gaps: questions the bot escalated, newest first, each a candidate for a new passage."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, DataTable, Static

from chatbot.desk.models import ContentGap
from chatbot.i18n import DEFAULT_LOCALE, N_, Locale, translations
from chatbot.text import printable

COLUMNS = (N_("when"), N_("reason"), N_("top"), N_("question"), N_("agent replied"))


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
        table = self.query_one("#gap-table", DataTable)
        table.add_columns(*(self.gettext(column) for column in COLUMNS))

    @property
    def gaps(self) -> list[ContentGap]:
        return list(self._gaps.values())

    def show(self, gaps: Sequence[ContentGap]) -> None:
        table = self.query_one("#gap-table", DataTable)
        table.clear()
        self._gaps = {str(g.id): g for g in gaps}
        for gap in gaps:
            top = "–" if gap.top_probability is None else f"{gap.top_probability:.2f}"
            table.add_row(
                gap.created_at.astimezone().strftime("%m-%d %H:%M"),
                gap.reason.value,
                top,
                Text(printable(" ".join(gap.question.split()))),
                self.gettext("yes") if gap.agent_reply else self.gettext("not yet"),
                key=str(gap.id),
            )
        self.query_one("#gap-write", Button).disabled = not gaps
        self._show_reply()

    def highlighted(self) -> ContentGap | None:
        table = self.query_one("#gap-table", DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self._gaps.get(key or "")

    def _show_reply(self) -> None:
        gap = self.highlighted()
        reply = self.query_one("#gap-reply", Static)
        if gap is None:
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
