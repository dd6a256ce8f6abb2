"""`helpdesk stats`: how the desk is doing, as a table to read or JSON to chart elsewhere.

Reads through the desk service like every front end; the figures and what each means are in
`chatbot.desk.stats`, and the `--json` shape in the README.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from chatbot.cli.options import add_db_option, settings_from, terminal_width
from chatbot.text import clip, counted, printable, wrap

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
        help="the answer threshold to mark (default: the configured one, 0.7)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object (shape in the README)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from chatbot.assembly import open_service, require_database
    from chatbot.desk.clock import utc_now
    from chatbot.desk.stats import parse_since

    now = utc_now()
    since = None if args.since is None else parse_since(args.since, now)
    settings = settings_from(args)
    require_database(settings)
    desk = open_service(settings)
    try:
        stats = desk.stats(since=since, threshold=settings.engine.threshold)
    finally:
        desk.close()
    if args.json:
        print(json.dumps(stats.to_json(), ensure_ascii=False, indent=2))
    else:
        print("\n".join(line.rstrip() for line in report(stats, width=terminal_width())))
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
    return f"Since {stats.since.strftime('%Y-%m-%d %H:%M UTC')}, to {to}"


def report(stats: DeskStats, *, width: int | None = None) -> Iterator[str]:
    """The readable table: one figure per line, bars beside counts. On a terminal (`width`), a
    line's words wrap under its own column and the gaps' questions are cut to fit."""
    from chatbot.desk.stats import duration, milliseconds, percent

    yield _when(stats)
    yield ""
    yield f"{'Conversations':<26}{stats.conversations:>8}   {stats.asked} with a customer message"
    resolution = (
        f"{stats.bot_resolved} resolved by the bot of {stats.asked}; it answered in "
        f"{stats.bot_answered}"
    )
    head = f"{'Bot resolution rate':<26}{percent(stats.bot_resolution_rate):>8}   "
    yield from wrap(resolution, width, " " * len(head), first=head)
    yield f"{'Questions':<26}{stats.questions:>8}   {stats.bot_answers} bot answers"
    yield f"{'Waiting now':<26}{stats.waiting_now:>8}   oldest {duration(stats.oldest_wait_s)}"
    for label, figures in (("First human reply", stats.first_reply_s),
                           ("Escalation to resolved", stats.resolution_s)):  # fmt: skip
        yield (
            f"{label:<26}{'p50':>8} {duration(figures.p50):<9} p90 {duration(figures.p90):<9}"
            f" ({figures.count} measured)"
        )
    judgment = stats.judgment_ms
    yield (
        f"{'Judgment latency':<26}{'p50':>8} {milliseconds(judgment.p50):<9} p90 "
        f"{milliseconds(judgment.p90):<9} ({counted(judgment.count, 'decision')})"
    )

    yield ""
    yield f"{'Escalations by reason':<26}{stats.escalations:>8}"
    largest = max((r.count for r in stats.escalations_by_reason), default=0)
    for r in stats.escalations_by_reason:
        yield f"  {r.reason.value:<24}{r.count:>8}   {bar(r.count, largest)}"

    yield ""
    yield f"{'Valen errors by kind':<26}{sum(e.count for e in stats.valen_errors):>8}"
    if not stats.valen_errors:
        yield "  none"
    for e in stats.valen_errors:
        yield f"  {printable(e.kind):<24}{e.count:>8}"

    yield ""
    marked = "" if stats.threshold is None else f", threshold {stats.threshold:.2f} marked ◀"
    decisions = counted(stats.decisions, "decision")
    yield f"Top scores of {decisions} ({stats.unscored} with none{marked})"
    largest = max((b.count for b in stats.top_scores), default=0)
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
        yield f"  {b.low:.2f}–{b.high:.2f}{b.count:>18}   {bar(b.count, largest)}{mark}"
    if lowest:
        yield f"  below {stats.top_scores[lowest].low:.2f}{0:>17}"
    yield "Answers each threshold would have given"
    for t in stats.would_answer:
        current = "  (in force)" if t.threshold == stats.threshold else ""
        yield f"  {t.threshold:<24.2f}{t.answers:>8}{current}"

    yield ""
    yield f"{'Feedback per passage':<26}{'helpful':>8} {'not helpful':>12}"
    if not stats.feedback:
        yield "  none"
    for f in stats.feedback:
        name = printable(f.passage_id)
        yield f"  {name:<24}{f.helpful:>8} {f.not_helpful:>12}"

    yield ""
    yield "Top content gaps (asked, last asked, question)"
    if not stats.content_gaps:
        yield "  none"
    for g in stats.content_gaps:
        question = " ".join(printable(g.question).split())
        row = f"  {g.count:>4}  {g.last_at.strftime('%Y-%m-%d %H:%M')}  "
        yield row + (question if width is None else clip(question, max(width - len(row), 4)))

    yield ""
    hours = stats.questions_by_hour
    if any(hours):
        busiest = hours.index(max(hours))
        yield f"Questions by hour (UTC)   {sparkline(hours)}  busiest {busiest:02d}:00"
        yield "                          0     6     12    18   23"
    else:  # No question, no busiest hour: "none", as the other empty figures say.
        yield "Questions by hour (UTC)"
        yield "  none"
    days = stats.per_day
    if days:
        shown = days[-DAYS_SHOWN:]
        counts = [d.conversations for d in shown]
        line = f"Conversations per day     {sparkline(counts)}"
        span = f"{shown[0].day} to {shown[-1].day}, at most {max(counts)}"
        if width is None or len(line) + 2 + len(span) <= width:
            yield f"{line}  {span}"
        else:  # 30 days of bars and their span take 94 cells: the span goes below the bars.
            yield line
            yield " " * 26 + span
