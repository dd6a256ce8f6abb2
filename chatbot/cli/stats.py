"""`helpdesk stats`: how the desk is doing, as a table to read or JSON to chart elsewhere.

Reads through the desk service like every front end; the figures and what each means are in
`chatbot.desk.stats`, and the `--json` shape in the README.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from chatbot.cli.options import BUILT_IN, add_db_option, settings_from, terminal_width
from chatbot.cli.output import charts_drawn_plainly
from chatbot.errors import HelpdeskError
from chatbot.text import cells, clip, counted, fit, printable, wrap

# The desk and its statistics are imported when the command runs, so that registering it costs
# `helpdesk --help` nothing.
if TYPE_CHECKING:
    from chatbot.desk.stats import DeskStats

BAR = 24
"""The longest bar, in cells."""
SPARKS = "▁▂▃▄▅▆▇█"
DAYS_SHOWN = 30
"""Days the per-day line shows (the newest); `--json` has every day of the window."""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = commands.add_parser(
        "stats", help="how the desk is doing: resolution rate, escalations, waits, scores, gaps"
    )
    add_db_option(p)
    p.add_argument(
        "--since",
        metavar="WHEN",
        help="only what happened since: 24h, 7d, 2w, or a date like 2026-11-01 (UTC)",
    )
    p.add_argument(
        "--threshold",
        type=float,
        metavar="P",
        default=argparse.SUPPRESS,
        help="the answer threshold to mark (default: the one in force, setting engine.threshold, "
        f"{BUILT_IN['engine.threshold']} unless configured)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object (shape in the README)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from chatbot.assembly import open_service, require_database
    from chatbot.desk.clock import utc_now
    from chatbot.desk.stats import parse_since

    now = utc_now()
    since = None if args.since is None else _since(args.since, now, parse_since)
    settings = settings_from(args, knowledge_base=False)
    in_force = settings.engine.threshold
    if hasattr(args, "threshold"):  # The one to mark: the configured one is still in force.
        unmarked = argparse.Namespace(**{k: v for k, v in vars(args).items() if k != "threshold"})
        in_force = settings_from(unmarked, knowledge_base=False).engine.threshold
    require_database(settings)
    desk = open_service(settings, migrate=False)  # It only reads: an older schema is refused.
    try:
        stats = desk.stats(since=since, threshold=settings.engine.threshold)
    finally:
        desk.close()
    if args.json:
        print(json.dumps(stats.to_json(), ensure_ascii=False, indent=2))
    else:
        lines = report(stats, width=terminal_width(), in_force=in_force)
        with charts_drawn_plainly():
            print("\n".join(line.rstrip() for line in lines))
    return 0


def bar(count: int, largest: int, width: int = BAR) -> str:
    """A bar `width` cells long at `largest`; at least one cell for any count above zero."""
    if count <= 0 or largest <= 0:
        return ""
    return "█" * max(1, round(count / largest * width))


def sparkline(values: Sequence[int]) -> str:
    """One cell per value, its height relative to the largest (blank for zero)."""
    top = max(values, default=0)
    if top == 0:
        return " " * len(values)
    return "".join(
        " " if v == 0 else SPARKS[min(len(SPARKS) - 1, (v * len(SPARKS) - 1) // top)]
        for v in values
    )


def _when(stats: DeskStats) -> str:
    to = stats.generated_at.strftime("%Y-%m-%d %H:%M UTC")
    if stats.since is None:
        return f"Everything recorded, to {to}"
    # isoformat, not strftime: %Y writes year 1 as "1" ("Since 1-01-01").
    return f"Since {stats.since.isoformat(' ', 'minutes')[:16]} UTC, to {to}"


LABEL = 26
"""The labels' column; a figure's detail starts after the figure (8 cells) and 3 spaces."""
DETAIL_ROOM = 30
"""The least room worth wrapping a detail into beside its figure; with less, it goes below."""


def _figure(label: str, figure: object, detail: str, width: int | None) -> Iterator[str]:
    """`label`, `figure` (a count with its thousands separated, as every count in the table)
    and its `detail` on one line; on a terminal too narrow for that, the detail wraps under its
    own column, or, with less than `DETAIL_ROOM` there, below the label."""
    shown = f"{figure:,}" if isinstance(figure, int) else str(figure)
    head = f"{label:<{LABEL}}{shown:>8}   "
    if width is None or cells(head + detail) <= width:
        yield head + detail
    elif width - cells(head) >= DETAIL_ROOM:
        yield from wrap(detail, width, " " * cells(head), first=head)
    else:
        yield head.rstrip()
        yield from wrap(detail, width, "    ")


def _bar_width(width: int | None, used: int) -> int:
    """The longest bar on a line whose other cells take `used`: `BAR`, or what a narrow terminal
    leaves (at least one cell; the counts beside the bars still say the figures)."""
    return BAR if width is None else max(1, min(BAR, width - used))


def _since(text: str, now: datetime, parse: Callable[[str, datetime], datetime]) -> datetime:
    """`--since` as `parse` reads it, but a date that is not one (`2026-02-30`) said so: "expected
    … a date like 2026-11-01" answered something written as one; and a span of zero refused."""
    import re

    value = text.strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}([T ].*)?", value):
        try:
            datetime.fromisoformat(value)
        except ValueError as error:
            # "day is out of range for month", "month must be in 1..12", "hour must be in 0..23"
            if "range" in str(error) or "must be in" in str(error):
                raise HelpdeskError(f"--since {text!r}: no such date ({error})") from None
    since = parse(text, now)
    if since >= now:
        # `0d`, `0h`, `0w`: a window of no time, which counted nothing and printed as a report.
        raise HelpdeskError(
            f"--since {text!r}: that is no time at all; write a span like 24h, 7d or 2w"
        )
    return since


def report(
    stats: DeskStats, *, width: int | None = None, in_force: float | None = None
) -> Iterator[str]:
    """The readable table: one figure per line, bars beside counts. On a terminal (`width`, 40
    columns or more), every line fits: a line's words wrap under its own column (or below it),
    bars shorten, and names and the gaps' questions are cut with …. `in_force`: the threshold
    the bot uses, when the one marked (`stats.threshold`, `--threshold`) may be another."""
    from chatbot.desk.stats import duration, milliseconds, percent

    yield from wrap(_when(stats), width, "  ", first="")
    yield ""
    yield from _figure("Conversations", stats.conversations,
                       f"{stats.asked:,} with a customer message", width)  # fmt: skip
    resolution = (
        f"{stats.bot_resolved:,} resolved by the bot of {stats.asked:,}; it answered in "
        f"{stats.bot_answered:,}"
    )
    yield from _figure("Bot resolution rate", percent(stats.bot_resolution_rate), resolution, width)
    yield from _figure("Questions", stats.questions, f"{stats.bot_answers:,} bot answers", width)
    yield from _figure("Waiting now", stats.waiting_now,
                       f"oldest {duration(stats.oldest_wait_s)}", width)  # fmt: skip
    ratings = stats.ratings
    rated = (
        f"out of 5, {counted(ratings.count, 'rating')}; {ratings.resolutions_rated:,} of "
        f"{ratings.resolutions:,} resolutions rated ({percent(ratings.rated_share)})"
    )
    yield from _figure("Customer rating", _average(ratings.average), rated, width)
    judgment = stats.judgment_ms
    for label, p50, p90, measured in (
        ("First human reply", duration(stats.first_reply_s.p50),
         duration(stats.first_reply_s.p90), f"{stats.first_reply_s.count:,} measured"),
        ("Escalation to resolved", duration(stats.resolution_s.p50),
         duration(stats.resolution_s.p90), f"{stats.resolution_s.count:,} measured"),
        ("Judgment latency", milliseconds(judgment.p50), milliseconds(judgment.p90),
         counted(judgment.count, "decision")),
    ):  # fmt: skip
        line = f"{label:<{LABEL}}{'p50':>8} {p50:<9} p90 {p90:<9} ({measured})"
        if width is None or cells(line) <= width:
            yield line  # The two lines' columns line up.
        else:
            yield from _figure(label, "", f"p50 {p50}, p90 {p90} ({measured})", width)

    yield ""
    yield f"{'Escalations by reason':<26}{stats.escalations:>8,}"
    largest = max((r.count for r in stats.escalations_by_reason), default=0)
    longest = _bar_width(width, 37)
    for r in stats.escalations_by_reason:
        yield f"  {r.reason.value:<24}{r.count:>8,}   {bar(r.count, largest, longest)}"

    yield ""
    yield f"{'Valen errors by kind':<26}{sum(e.count for e in stats.valen_errors):>8,}"
    if not stats.valen_errors:
        yield "  none"
    for e in stats.valen_errors:
        kind = printable(e.kind) if width is None else clip(printable(e.kind), 23)
        yield f"  {kind:<24}{e.count:>8,}"

    yield ""
    marked = "" if stats.threshold is None else f", threshold {stats.threshold:.2f} marked ◀"
    decisions = counted(stats.decisions, "decision")
    yield from wrap(f"Top scores of {decisions} ({stats.unscored:,} with none{marked})", width,
                    "  ", first="")  # fmt: skip
    largest = max((b.count for b in stats.top_scores), default=0)
    longest = _bar_width(width, 34)  # The bins' cells, and the mark.
    # Empty bins below the lowest score and the threshold say nothing: one line for them all.
    lowest = min(
        [n for n, b in enumerate(stats.top_scores) if b.count]
        + [
            n
            for n, b in enumerate(stats.top_scores)
            if stats.threshold is not None and b.low <= stats.threshold < b.high
        ],  # fmt: skip
        default=0,
    )
    for b in reversed(stats.top_scores[lowest:]):
        here = stats.threshold is not None and b.low <= stats.threshold < b.high
        mark = " ◀" if here else ""
        yield f"  {b.low:.2f}–{b.high:.2f}{b.count:>18,}   {bar(b.count, largest, longest)}{mark}"
    if lowest:
        yield f"  below {stats.top_scores[lowest].low:.2f}{0:>17}"
    yield "Answers each threshold would have given"
    in_force = stats.threshold if in_force is None else in_force
    for t in stats.would_answer:
        line = f"  {t.threshold:<24.2f}{t.answers:>8,}"
        # "(in force)" only for the threshold in use: `--threshold 0.65` was marked so while the
        # bot answered at 0.7.
        words = ("  (in force)" if t.threshold == in_force
                 else "  (marked)" if t.threshold == stats.threshold else "")  # fmt: skip
        if words:
            # The scores' mark where the words do not fit: the heading above says what it is.
            fits = width is None or len(line) + len(words) <= width
            line += words if fits else " ◀" if t.threshold == stats.threshold else ""
        yield line

    yield ""
    yield from _feedback(stats, width)

    yield ""
    yield from _ratings(stats, width)

    yield ""
    yield from wrap("Top content gaps (asked, last asked, question)", width, "  ", first="")
    if not stats.content_gaps:
        yield "  none"
    for g in stats.content_gaps:
        question = " ".join(printable(g.question).split())
        row = f"  {g.count:>4,}  {g.last_at.strftime('%Y-%m-%d %H:%M')}  "
        yield row + (question if width is None else clip(question, max(width - len(row), 4)))

    yield ""
    hours = stats.questions_by_hour
    if any(hours):
        busiest = hours.index(max(hours))
        line = f"Questions by hour (UTC)   {sparkline(hours)}  busiest {busiest:02d}:00"
        if width is None or cells(line) <= width:
            yield line
            yield "                          0     6     12    18   23"
        else:  # The 24 hours below their label, which a 40-column terminal has room for.
            yield f"Questions by hour (UTC), busiest {busiest:02d}:00"
            yield f"  {sparkline(hours)}"
            yield "  0     6     12    18   23"
    else:  # No question, no busiest hour: "none", as the other empty figures say.
        yield "Questions by hour (UTC)"
        yield "  none"
    days = stats.per_day
    if days:
        shown = days[-DAYS_SHOWN:]
        counts = [d.conversations for d in shown]
        line = f"Conversations per day     {sparkline(counts)}"
        span = f"{shown[0].day} to {shown[-1].day}, at most {max(counts):,}"
        if width is None or len(line) + 2 + len(span) <= width:
            yield f"{line}  {span}"
            return
        # 30 days of bars and their span take 94 cells: the span goes below the bars, and on a
        # terminal narrower than the bars' 56 cells, the bars below their label too.
        column = 26 if cells(line) <= width else 2
        if column == 2:
            yield "Conversations per day"
            line = f"  {sparkline(counts)}"
        yield line
        yield from wrap(span, width, " " * (column if column + len(span) <= width else 2))


def _average(value: float | None) -> str:
    """An average rating to one decimal ("–": none)."""
    return "–" if value is None else f"{value:.1f}"


def _ratings(stats: DeskStats, width: int | None) -> Iterator[str]:
    """The customers' ratings: how many of each, 5 down to 1, bars beside them, and per agent who
    resolved, their number and average (no agent line when there is no rating)."""
    ratings = stats.ratings
    yield from _figure("Customer ratings (1 to 5)", ratings.count,
                       f"average {_average(ratings.average)}", width)  # fmt: skip
    largest = max(ratings.distribution, default=0)
    longest = _bar_width(width, 37)
    for rating, count in reversed(list(enumerate(ratings.distribution, start=1))):
        yield f"  {rating:<24}{count:>8,}   {bar(count, largest, longest)}"
    if not ratings.by_agent:
        return
    heading = f"{'By agent who resolved':<26}{'ratings':>8}   average"
    if width is None or cells(heading) <= width:
        yield heading
    else:  # The columns' names beside the heading, which wraps.
        yield from wrap("By agent who resolved (ratings, average)", width, "  ", first="")
    for a in ratings.by_agent:
        name = "(nobody named)" if a.agent is None else printable(a.agent)
        name = name if width is None else clip(name, 23)
        # Padded by cells: a name in Chinese lines up with the others.
        yield f"  {name}{' ' * max(0, 24 - cells(name))}{a.count:>8,}   {_average(a.average)}"


def _feedback(stats: DeskStats, width: int | None) -> Iterator[str]:
    """Helpful and not-helpful counts per passage; on a terminal, a long passage id is cut to
    leave the counts room, and a heading with no room beside it goes above them."""
    name_width = 24 if width is None else max(4, min(24, width - 2 - 21))
    heading = "Feedback per passage"
    counts = f"{'helpful':>8} {'not helpful':>12}"
    if len(heading) < 2 + name_width:
        yield f"{heading:<{2 + name_width}}{counts}"
    else:
        yield heading
        yield " " * (2 + name_width) + counts
    if not stats.feedback:
        yield "  none"
    for f in stats.feedback:
        name = printable(f.passage_id)
        if width is not None:
            name = fit(name, name_width)
        yield f"  {name:<{name_width}}{f.helpful:>8,} {f.not_helpful:>12,}"
