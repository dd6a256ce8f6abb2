"""Analytics for the people who run the desk: how well the bot does, why the rest escalate, how
long customers wait for a person, how they rate the people who helped them, which passages help,
where the knowledge base has gaps.

The figures come from the desk service (`DeskService.stats`, computed in the database); this
screen only draws them. It follows the desk: after anyone commits, the figures are read again at
most every `REFRESH_S` seconds (a busy desk commits many times a second), and at least every
`MAX_AGE_S` seconds, so a window such as "Last 24 hours" slides with the clock. Between reads
the oldest wait ticks on by itself, as the queue's wait times do.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import NamedTuple

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from chatbot.desk.stats import DeskStats, Ratings, duration, milliseconds, percent
from chatbot.errors import HelpdeskError
from chatbot.i18n import N_, translations
from chatbot.text import printable
from chatbot.tui.localize import localize_bindings, styled
from chatbot.tui.services import Services
from chatbot.tui.widgets.bar_chart import Bar, BarChart
from chatbot.tui.widgets.fitted_sparkline import FittedSparkline
from chatbot.tui.widgets.footer import Footer
from chatbot.tui.widgets.header import Header
from chatbot.tui.widgets.queue_list import one_line
from chatbot.tui.widgets.score_histogram import ScoreHistogram


class Period(NamedTuple):
    """A period the figures can cover: calendar days or a rolling span of hours."""

    name: str
    """Its name, translated where it is shown."""
    days: int | None = None
    """Calendar days, today included, from midnight UTC (the days the figures are drawn in).
    Seven times 24 hours back from now would touch an eighth day and draw eight bars."""
    hours: int | None = None
    """A span of hours back from now; with neither, everything recorded."""

    def since(self, now: datetime) -> datetime | None:
        if self.days is not None:
            today = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
            return today - timedelta(days=self.days - 1)
        return None if self.hours is None else now - timedelta(hours=self.hours)


PERIODS = (
    Period(N_("Last 7 days"), days=7),
    Period(N_("Last 30 days"), days=30),
    Period(N_("Last 24 hours"), hours=24),
    Period(N_("Everything recorded")),
)
REFRESH_S = 5.0
"""At most this often the figures are read again while the desk changes."""
MAX_AGE_S = 60.0
"""Figures older than this are read again even if nobody changed anything."""
GAPS_SHOWN = 5


class Day:
    """A date for a translated format: `%-d` and `%-m` are the day and month without a leading
    zero on every platform (strftime's own `%-d` is glibc's), so Chinese reads 1月5日."""

    def __init__(self, day: date) -> None:
        self.day = day

    def __format__(self, spec: str) -> str:
        spec = spec.replace("%-d", str(self.day.day)).replace("%-m", str(self.day.month))
        return self.day.strftime(spec)


class StatsScreen(Screen[None]):
    """The desk's figures, pictures beside numbers; P changes the period, Escape goes back."""

    BINDINGS = [
        Binding("escape", "close", N_("Back")),
        Binding(
            "p", "period", N_("Period"), tooltip=N_("Last 7 days, 30 days, 24 hours, everything")
        ),
        Binding("r", "refresh", N_("Refresh")),
    ]

    def __init__(self, services: Services) -> None:
        super().__init__()
        self.services = services
        localize_bindings(self, services.locale)
        self.period = 0
        self.stats: DeskStats | None = None
        self._loaded_at: datetime | None = None
        """When `stats` were read: their oldest wait has grown by the time since."""
        self._stale = False

    def compose(self) -> ComposeResult:
        t = translations(self.services.locale)
        locale = self.services.locale
        yield Header()
        with VerticalScroll(id="stats-body"):
            yield Static(id="stats-summary")
            yield Static(id="stats-error")
            with Horizontal(id="stats-charts"):
                yield BarChart(t.gettext("Escalations by reason"), locale=locale,
                               id="stats-reasons")  # fmt: skip
                yield ScoreHistogram(locale=locale, id="stats-scores")
            yield Static(id="stats-days-title", classes="stats-title")
            # Two columns a day where they fit, one where not: today's bar is always drawn.
            yield FittedSparkline([], id="stats-days")
            yield BarChart(t.gettext("Feedback per passage"), label_width=24, bar_width=20,
                           locale=locale, id="stats-feedback")  # fmt: skip
            yield Static(id="stats-errors")
            yield Static(id="stats-gaps")
            yield Static(id="stats-hours-title", classes="stats-title")
            yield FittedSparkline([], id="stats-hours")
            # The ratings' detail last: their average and share lead the summary.
            yield BarChart(t.gettext("Customer ratings"), label_width=1, bar_width=20,
                           locale=locale, id="stats-ratings")  # fmt: skip
            yield BarChart(t.gettext("Ratings by agent who resolved"), label_width=14,
                           bar_width=16, locale=locale, id="stats-raters")  # fmt: skip
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = translations(self.services.locale).gettext("analytics")
        self.query_one("#stats-error").display = False
        self.services.changed.subscribe(self, self._changed)
        self.set_interval(REFRESH_S, self._refresh_if_stale)  # Read when the screen opens.
        self.set_interval(1.0, self._tick)
        self.reload()

    def _changed(self, _version: int) -> None:
        self._stale = True

    def _age_s(self) -> float:
        if self._loaded_at is None:
            return 0.0
        return max(0.0, (self.services.clock() - self._loaded_at).total_seconds())

    def _refresh_if_stale(self) -> None:
        if self._stale or self._age_s() >= MAX_AGE_S:
            self.reload()

    def _tick(self) -> None:
        if self.stats is not None and self.stats.waiting_now:
            self._show_summary(self.stats)

    @property
    def since(self) -> datetime | None:
        return PERIODS[self.period].since(self.services.clock())

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
            t = translations(self.services.locale)
            # The core's own words (English by design), shown literally.
            cannot = t.gettext("Cannot read the figures: {error}")
            failed.update(Text(cannot.format(error=printable(str(error)))))
            failed.display = True
            return
        self.query_one("#stats-error").display = False
        self.show(stats)

    def _show_summary(self, stats: DeskStats) -> None:
        t = translations(self.services.locale)
        label = t.gettext(PERIODS[self.period].name)
        oldest = None if stats.oldest_wait_s is None else stats.oldest_wait_s + self._age_s()
        summary = Text.assemble(
            styled(
                t.ngettext(
                    "{period} · {conversations} conversation · bot resolved {rate}"
                    " ({resolved} of {asked}) · {waiting} waiting",
                    "{period} · {conversations} conversations · bot resolved {rate}"
                    " ({resolved} of {asked}) · {waiting} waiting",
                    stats.conversations,
                ),
                {"period": "bold", "rate": "bold"},
                period=label,
                conversations=stats.conversations,
                rate=percent(stats.bot_resolution_rate),
                resolved=stats.bot_resolved,
                asked=stats.asked,
                waiting=stats.waiting_now,
            ),
            t.gettext(", oldest {duration}").format(duration=duration(oldest))
            if stats.waiting_now
            else "",
            "\n",
            t.gettext(
                "First reply p50 {first_p50} p90 {first_p90} · resolved p50 {resolved_p50}"
                " p90 {resolved_p90}"
            ).format(
                first_p50=duration(stats.first_reply_s.p50),
                first_p90=duration(stats.first_reply_s.p90),
                resolved_p50=duration(stats.resolution_s.p50),
                resolved_p90=duration(stats.resolution_s.p90),
            ),
            "\n",
            t.gettext("Judgment p50 {p50} p90 {p90} · {questions}, {answers}").format(
                p50=milliseconds(stats.judgment_ms.p50),
                p90=milliseconds(stats.judgment_ms.p90),
                questions=t.ngettext(
                    "{count} question", "{count} questions", stats.questions
                ).format(count=stats.questions),
                answers=t.ngettext("{count} answer", "{count} answers", stats.bot_answers).format(
                    count=stats.bot_answers
                ),
            ),
            "\n",
            self._rated(stats.ratings),
        )
        self.query_one("#stats-summary", Static).update(summary)

    def _rated(self, ratings: Ratings) -> Text:
        """The summary's line on the customers' ratings: their average and number, and the
        share of resolutions rated."""
        t = translations(self.services.locale)
        given = (
            styled(
                t.ngettext(
                    "Customers rated {average} of 5 ({count} rating)",
                    "Customers rated {average} of 5 ({count} ratings)",
                    ratings.count,
                ),
                {"average": "bold"},
                average=f"{ratings.average:.1f}",
                count=ratings.count,
            )
            if ratings.average is not None
            else Text(t.gettext("No customer rating"))
        )
        rated = t.ngettext(
            "{rated} of {resolutions} resolution rated ({share})",
            "{rated} of {resolutions} resolutions rated ({share})",
            ratings.resolutions,
        ).format(
            rated=ratings.resolutions_rated,
            resolutions=ratings.resolutions,
            share=percent(ratings.rated_share),
        )
        return Text.assemble(given, " · ", rated)

    def show(self, stats: DeskStats) -> None:
        self.stats = stats
        self._loaded_at = self.services.clock()
        t = translations(self.services.locale)
        self._show_summary(stats)
        self.query_one("#stats-reasons", BarChart).show(
            [
                Bar(r.reason.value, ((r.count, "red"),), str(r.count))
                for r in stats.escalations_by_reason
            ],  # fmt: skip
            title=t.gettext("Escalations by reason ({count})").format(count=stats.escalations),
        )
        self.query_one(ScoreHistogram).show(stats)

        days = stats.per_day
        counts = [d.conversations for d in days]
        title = t.gettext("Conversations per day")
        if days:
            day = t.gettext("{date:%b %-d}")  # Dec 29, Jan 5
            title += t.gettext(": {first} to {last}, most {most}, today {today}").format(
                first=day.format(date=Day(days[0].day)),
                last=day.format(date=Day(days[-1].day)),
                most=max(counts),
                today=counts[-1],
            )
        self.query_one("#stats-days-title", Static).update(Text(title, style="bold"))
        # Two cells a day where they fit (a week is a short line, not wide blocks), else one.
        self.query_one("#stats-days", FittedSparkline).data = counts or [0]

        self.query_one("#stats-feedback", BarChart).show(
            [
                Bar(
                    f.passage_id,
                    ((f.helpful, "green"), (f.not_helpful, "red")),
                    f"{f.helpful} ✓ {f.not_helpful} ✗",
                )
                for f in stats.feedback
            ],  # fmt: skip
            title=t.gettext("Feedback per passage (helpful green, not helpful red)"),
        )
        errors = Text(t.gettext("Valen errors"), style="bold")
        errors.append(
            t.gettext(": {errors}").format(
                errors=t.gettext("none") if not stats.valen_errors else ", ".join(
                    f"{printable(e.kind)} {e.count}" for e in stats.valen_errors
                )
            ), style="not bold"
        )  # fmt: skip
        self.query_one("#stats-errors", Static).update(errors)
        self._show_ratings(stats.ratings)
        gaps = Text(t.gettext("Top content gaps (times asked)"), style="bold")
        for gap in stats.content_gaps[:GAPS_SHOWN]:
            gaps.append(f"\n{gap.count:>4}  ", style="not bold")
            gaps.append(one_line(gap.question, 70), style="not bold")
        if not stats.content_gaps:
            gaps.append("\n  " + t.gettext("none"), style="dim")
        self.query_one("#stats-gaps", Static).update(gaps)
        hours = stats.questions_by_hour
        spark = self.query_one("#stats-hours", FittedSparkline)
        if any(hours):
            busiest = hours.index(max(hours))
            heading = Text(
                t.gettext("Questions by hour (UTC, 00 to 23): busiest {hour}:00, {count}").format(
                    hour=f"{busiest:02d}", count=max(hours)
                ),
                style="bold",
            )  # fmt: skip
        else:
            # No question, no busiest hour (a flat line named "busiest 00:00" before): "none",
            # as the other empty figures and `helpdesk stats` say.
            heading = Text(t.gettext("Questions by hour (UTC)"), style="bold")
            heading.append("\n  " + t.gettext("none"), style="not bold dim")
        self.query_one("#stats-hours-title", Static).update(heading)
        spark.display = any(hours)
        spark.data = list(hours)  # Two cells an hour where they fit.
        self.call_after_refresh(self._fit_charts)  # Their widths follow what they now show.

    def _show_ratings(self, ratings: Ratings) -> None:
        """How many of each rating, 5 down to 1 (zeros too, as the reasons), and per agent who
        resolved: how many, their average."""
        t = translations(self.services.locale)
        average = "–" if ratings.average is None else f"{ratings.average:.1f}"
        colour = {5: "green", 4: "green", 3: "yellow", 2: "red", 1: "red"}
        self.query_one("#stats-ratings", BarChart).show(
            [
                Bar(str(rating), ((count, colour[rating]),), str(count))
                for rating, count in reversed(list(enumerate(ratings.distribution, start=1)))
            ],
            title=t.gettext("Customer ratings ({count}), average {average} of 5").format(
                count=ratings.count, average=average
            ),
        )
        self.query_one("#stats-raters", BarChart).show(
            [
                Bar(
                    t.gettext("(nobody named)") if a.agent is None else a.agent,
                    ((a.count, "green"),),
                    t.gettext("{count}, average {average}").format(
                        count=a.count, average="–" if a.average is None else f"{a.average:.1f}"
                    ),
                )
                for a in ratings.by_agent
            ],
        )

    def on_resize(self) -> None:
        self._fit_charts()

    def _fit_charts(self) -> None:
        # Side by side where both fit, else one above the other: a Horizontal clips what does
        # not fit, and at 60 columns the score table (and its threshold row) was cut off with
        # no way to scroll to it.
        reasons, scores = self.query_one("#stats-reasons"), self.query_one("#stats-scores")
        needed = reasons.outer_size.width + 3 + scores.outer_size.width
        room = self.query_one("#stats-body").scrollable_content_region.width
        self.set_class(bool(room) and needed > room, "-narrow")

    def action_period(self) -> None:
        self.period = (self.period + 1) % len(PERIODS)
        self.reload()

    def action_refresh(self) -> None:
        self.reload()

    def action_close(self) -> None:
        self.dismiss()
