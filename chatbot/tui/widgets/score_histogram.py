"""The bot's top scores as a histogram with the answer threshold marked under it, and beside it
how many answers each threshold would have given."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from chatbot.desk.stats import DeskStats
from chatbot.i18n import DEFAULT_LOCALE, Locale, translations

ROWS = 6
"""Rows of bars; each cell is split in eighths, so 48 steps of height."""
EIGHTHS = " ▁▂▃▄▅▆▇█"


def histogram(stats: DeskStats) -> Text:
    """One column per bin (0.05 wide), green from the threshold up; the axis and a ▲ under the
    threshold's bin below."""
    counts = [b.count for b in stats.top_scores]
    largest = max(counts, default=0)
    threshold = stats.threshold
    lines = Text()
    for row in range(ROWS - 1, -1, -1):
        for n, count in enumerate(counts):
            height = 0 if largest == 0 else round(count / largest * ROWS * 8)
            if count and height == 0:
                height = 1  # Never invisible.
            level = max(0, min(8, height - row * 8))
            answers = threshold is not None and stats.top_scores[n].low >= threshold - 1e-9
            lines.append(EIGHTHS[level], "green" if answers else "yellow")
        lines.append("\n")
    lines.append("0" + " " * (len(counts) // 2 - 2) + ".5" + " " * (len(counts) // 2 - 2) + "1\n")
    if threshold is not None:
        at = min(len(counts) - 1, int(threshold * len(counts) + 1e-9))
        lines.append(" " * at + f"▲ {threshold:.2f}", "bold")
    return lines


def would_answer(stats: DeskStats, locale: Locale = DEFAULT_LOCALE) -> Text:
    """`at 0.70   4 ◀`: answers per threshold, the one in force marked."""
    at = translations(locale).gettext("at {threshold} {answers}")
    text = Text()
    for n, t in enumerate(stats.would_answer):
        if n:
            text.append("\n")
        text.append(at.format(threshold=f"{t.threshold:.2f}", answers=f"{t.answers:>6}"))
        if t.threshold == stats.threshold:
            text.append(" ◀", "bold")
    return text


class ScoreHistogram(Static):
    """Top scores against the threshold, with the numbers beside the picture (its words in
    `locale`)."""

    def __init__(self, *, locale: Locale = DEFAULT_LOCALE, id: str | None = None) -> None:
        super().__init__(id=id)
        self.locale: Locale = locale

    def show(self, stats: DeskStats) -> None:
        t = translations(self.locale)
        title = Text(
            t.ngettext(
                "Top scores ({decisions} decision, {unscored} unscored)",
                "Top scores ({decisions} decisions, {unscored} unscored)",
                stats.decisions,
            ).format(decisions=stats.decisions, unscored=stats.unscored),
            style="bold",
        )
        picture = Table.grid(padding=(0, 2))
        picture.add_column(no_wrap=True)
        picture.add_column(no_wrap=True)
        answers = Text(t.gettext("answers") + "\n", style="dim")
        answers.append_text(would_answer(stats, self.locale))
        picture.add_row(histogram(stats), answers)
        table = Table.grid()
        table.add_row(title)
        table.add_row(picture)
        self.update(table)
