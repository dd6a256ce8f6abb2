"""Analytics for the people who run the desk: how well the bot does, why the rest escalate, how
long customers wait for a person, which passages help, where the knowledge base has gaps.

The figures come from the desk service (`DeskService.stats`, computed in the database); this
screen only draws them. It follows the desk: after anyone commits, the figures are read again at
most every `REFRESH_S` seconds (a busy desk commits many times a second).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Header, Sparkline, Static

from chatbot.desk.stats import DeskStats, duration, milliseconds, percent
from chatbot.errors import HelpdeskError
from chatbot.text import printable
from chatbot.tui.services import Services
from chatbot.tui.widgets.bar_chart import Bar, BarChart
from chatbot.tui.widgets.footer import Footer
from chatbot.tui.widgets.queue_list import one_line
from chatbot.tui.widgets.score_histogram import ScoreHistogram

PERIODS: tuple[tuple[str, timedelta | None], ...] = (
    ("Last 7 days", timedelta(days=7)),
    ("Last 30 days", timedelta(days=30)),
    ("Last 24 hours", timedelta(days=1)),
    ("Everything recorded", None),
)
REFRESH_S = 5.0
"""At most this often the figures are read again while the desk changes."""
GAPS_SHOWN = 5


class StatsScreen(Screen[None]):
    """The desk's figures, pictures beside numbers; P changes the period, Escape goes back."""

    BINDINGS = [
        Binding("escape", "close", "Back"),
        Binding("p", "period", "Period", tooltip="Last 7 days, 30 days, 24 hours, everything"),
        Binding("r", "refresh", "Refresh"),
    ]

    def __init__(self, services: Services) -> None:
        super().__init__()
        self.services = services
        self.period = 0
        self.stats: DeskStats | None = None
        self._stale = False

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="stats-body"):
            yield Static(id="stats-summary")
            yield Static(id="stats-error")
            with Horizontal(id="stats-charts"):
                yield BarChart("Escalations by reason", id="stats-reasons")
                yield ScoreHistogram(id="stats-scores")
            yield Static(id="stats-days-title", classes="stats-title")
            yield Sparkline([], id="stats-days")
            yield BarChart("Feedback per passage", label_width=24, bar_width=20,
                           id="stats-feedback")  # fmt: skip
            yield Static(id="stats-errors")
            yield Static(id="stats-gaps")
            yield Static(id="stats-hours-title", classes="stats-title")
            yield Sparkline([], id="stats-hours")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "analytics"
        self.query_one("#stats-error").display = False
        self.services.changed.subscribe(self, self._changed)
        self.set_interval(REFRESH_S, self._refresh_if_stale)  # Read when the screen opens.
        self.reload()

    def _changed(self, _version: int) -> None:
        self._stale = True

    def _refresh_if_stale(self) -> None:
        if self._stale:
            self.reload()

    @property
    def since(self) -> datetime | None:
        span = PERIODS[self.period][1]
        return None if span is None else self.services.clock() - span

    @work(exclusive=True)
    async def reload(self) -> None:
        """Read the figures for the period shown and draw them."""
        self._stale = False
        try:
            # Opened in the app's first moments, the engine may still be being built.
            engine = await self.services.live.wait_ready()
            stats = await self.services.desk.stats(since=self.since, threshold=engine.threshold)
        except HelpdeskError as error:
            failed = self.query_one("#stats-error", Static)
            failed.update(Text(f"Cannot read the figures: {printable(str(error))}"))
            failed.display = True
            return
        self.query_one("#stats-error").display = False
        self.show(stats)

    def show(self, stats: DeskStats) -> None:
        self.stats = stats
        label = PERIODS[self.period][0]
        summary = Text.assemble(
            (label, "bold"),
            f" · {stats.conversations} conversations · bot resolved ",
            (percent(stats.bot_resolution_rate), "bold"),
            f" ({stats.bot_resolved} of {stats.asked}) · {stats.waiting_now} waiting",
            f", oldest {duration(stats.oldest_wait_s)}" if stats.waiting_now else "",
            "\n",
            f"First reply p50 {duration(stats.first_reply_s.p50)}"
            f" p90 {duration(stats.first_reply_s.p90)} · resolved p50"
            f" {duration(stats.resolution_s.p50)} p90 {duration(stats.resolution_s.p90)}\n",
            f"Judgment p50 {milliseconds(stats.judgment_ms.p50)}"
            f" p90 {milliseconds(stats.judgment_ms.p90)} · {stats.questions} questions,"
            f" {stats.bot_answers} answers",
        )
        self.query_one("#stats-summary", Static).update(summary)
        self.query_one("#stats-reasons", BarChart).show(
            [
                Bar(r.reason.value, ((r.count, "red"),), str(r.count))
                for r in stats.escalations_by_reason
            ],  # fmt: skip
            title=f"Escalations by reason ({stats.escalations})",
        )
        self.query_one(ScoreHistogram).show(stats)

        days = stats.per_day
        counts = [d.conversations for d in days]
        title = "Conversations per day"
        if days:
            title += (
                f": {days[0].day:%b %d} to {days[-1].day:%b %d}, most {max(counts)},"
                f" today {counts[-1]}"
            )
        self.query_one("#stats-days-title", Static).update(Text(title, style="bold"))
        line = self.query_one("#stats-days", Sparkline)
        line.data = counts or [0]
        # Two cells a day up to the width of the screen: a week is a short line, not wide blocks.
        line.styles.width = max(8, min(72, 2 * len(counts)))

        self.query_one("#stats-feedback", BarChart).show(
            [
                Bar(
                    f.passage_id,
                    ((f.helpful, "green"), (f.not_helpful, "red")),
                    f"{f.helpful} ✓ {f.not_helpful} ✗",
                )
                for f in stats.feedback
            ],  # fmt: skip
            title="Feedback per passage (helpful green, not helpful red)",
        )
        errors = Text("Valen errors", style="bold")
        errors.append(
            ": none" if not stats.valen_errors else ": " + ", ".join(
                f"{printable(e.kind)} {e.count}" for e in stats.valen_errors
            ), style="not bold"
        )  # fmt: skip
        self.query_one("#stats-errors", Static).update(errors)
        gaps = Text("Top content gaps (times asked)", style="bold")
        for gap in stats.content_gaps[:GAPS_SHOWN]:
            gaps.append(f"\n{gap.count:>4}  ", style="not bold")
            gaps.append(one_line(gap.question, 70), style="not bold")
        if not stats.content_gaps:
            gaps.append("\n  none", style="dim")
        self.query_one("#stats-gaps", Static).update(gaps)
        hours = stats.questions_by_hour
        busiest = hours.index(max(hours))
        self.query_one("#stats-hours-title", Static).update(
            Text(
                f"Questions by hour (UTC, 00 to 23): busiest {busiest:02d}:00, {max(hours)}",
                style="bold",
            )  # fmt: skip
        )
        spark = self.query_one("#stats-hours", Sparkline)
        spark.data = list(hours)
        spark.styles.width = 48  # Two cells an hour.

    def action_period(self) -> None:
        self.period = (self.period + 1) % len(PERIODS)
        self.reload()

    def action_refresh(self) -> None:
        self.reload()

    def action_close(self) -> None:
        self.dismiss()
