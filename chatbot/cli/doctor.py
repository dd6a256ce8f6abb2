"""`helpdesk doctor`: is this process's database reachable, and which is it?

Run it on every host of a help desk spread over machines (bot workers, agents' consoles, the
web server): each must name the same database. The password in a URL is never shown.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from chatbot.cli.options import add_db_option, settings_from, terminal_width
from chatbot.text import wrap


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "doctor",
        help="check the database: where, which server, schema version, latency, and whether"
        " questions wait for a bot",
    )
    add_db_option(parser)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here, so that registering the command costs `helpdesk --help` nothing.
    from chatbot.assembly import check_database, require_database
    from chatbot.desk.models import bot_stalled_after

    settings = settings_from(args)
    require_database(settings)  # A mistyped path is the problem, not a new database to report.
    report = check_database(settings)
    if args.json:
        print(json.dumps(asdict(report), indent=2))
        return 0
    print(f"database  {report.database}")
    print(f"server    {report.server}")
    width = terminal_width()
    schema = f"version {report.schema_version}"
    if report.schema_version < report.helpdesk_schema_version:  # Left as found: doctor reads.
        schema += (
            f", older than this helpdesk's {report.helpdesk_schema_version}: the next process"
            " that writes (the app, `helpdesk bot`, `helpdesk serve`) upgrades it"
        )
    # The long lines wrap on a terminal under the values, not into the labels' column.
    print("\n".join(wrap(schema, width, " " * 10, first="schema    ")))
    print(f"latency   {report.latency_ms:.2f} ms (median round trip)")
    stalled_s = bot_stalled_after(settings.valen.budget_s)
    backlog = _backlog(report.waiting_for_a_bot, report.oldest_wait_for_a_bot_s, stalled_s)
    print("\n".join(wrap(backlog, width, " " * 10, first="bots      ")))
    return 0


def _backlog(count: int | None, oldest_s: float | None, stalled_s: float) -> str:
    """The questions waiting for a bot, and a hint when they have waited longer than a bot takes
    (`stalled_s`): then no bot is taking them. None: not counted (an older schema)."""
    from chatbot.desk.stats import duration
    from chatbot.text import counted

    if count is None:
        return "not counted until the schema is upgraded"
    if count == 0 or oldest_s is None:
        return "no question waits for a bot"
    verb = "waits" if count == 1 else "wait"
    line = f"{counted(count, 'question')} {verb} for a bot, the oldest for {duration(oldest_s)}"
    if oldest_s >= stalled_s:
        line += "; is a bot running (`helpdesk bot`, `helpdesk serve`, or an app without --no-bot)?"
    return line
