"""Labelled horizontal bars with their numbers beside them: escalations by reason, verdicts per
passage. Labels come from outside (passage ids) and are shown literally."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from chatbot.i18n import DEFAULT_LOCALE, Locale, translations
from chatbot.tui.widgets.queue_list import one_line


@dataclass(frozen=True)
class Bar:
    """One row: its label, its segments (count and style, drawn end to end) and the numbers
    written beside it."""

    label: str
    segments: tuple[tuple[int, str], ...]
    numbers: str


def draw(bars: Sequence[Bar], *, label_width: int, bar_width: int) -> Table:
    """Every bar scaled to the longest; a segment above zero is at least one cell."""
    largest = max((sum(count for count, _ in bar.segments) for bar in bars), default=0)
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True, width=label_width)
    table.add_column(no_wrap=True, width=bar_width)
    table.add_column(no_wrap=True, justify="right")
    for bar in bars:
        drawn = Text()
        for count, style in bar.segments:
            if count > 0 and largest > 0:
                drawn.append("█" * max(1, round(count / largest * bar_width)), style)
        drawn.truncate(bar_width)
        table.add_row(Text(one_line(bar.label, label_width)), drawn, Text(bar.numbers))
    return table


class BarChart(Static):
    """A titled list of bars (`show` replaces them); its title comes from outside (in the
    reader's words), and it says "none" in `locale` when there are no bars."""

    def __init__(
        self,
        title: str,
        *,
        label_width: int = 14,
        bar_width: int = 16,
        locale: Locale = DEFAULT_LOCALE,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.title = title
        self.locale: Locale = locale
        self.label_width = label_width
        self.bar_width = bar_width
        self.bars: tuple[Bar, ...] = ()

    def show(
        self, bars: Sequence[Bar], *, title: str | None = None, empty: str | None = None
    ) -> None:
        """`empty` is shown when there are no bars (default: "none" in the chart's language)."""
        self.bars = tuple(bars)
        if title is not None:
            self.title = title
        if empty is None:
            empty = translations(self.locale).gettext("none")
        body = (
            draw(self.bars, label_width=self.label_width, bar_width=self.bar_width)
            if self.bars
            else Text(empty, style="dim")
        )
        table = Table.grid()
        table.add_row(Text(self.title, style="bold"))
        table.add_row(body)
        self.update(table)
