"""`helpdesk doctor`: is this process's database reachable, and which is it?

Run it on every host of a help desk spread over machines (bot workers, agents' consoles, the
web server): each must name the same database. The password in a URL is never shown.

Before the first start is a time to run it too: a database with no help-desk tables yet (a new
PostgreSQL database, an empty SQLite file) is reported like any other, server, version and latency,
with a schema line saying the app, `helpdesk bot` or `helpdesk serve` makes the tables on first
start; so is a SQLite path with no file yet, which they make (folders and all), once doctor has
checked that they can (by making a file, or a folder, there and removing it at once). Doctor
itself leaves nothing, and exits 0: nothing is wrong.

A database that holds tables, none of them the help desk's, is most likely another
application's, named by mistake: doctor says so, names it and some of its tables, asks whether it
is the right one, and exits 1. It changes nothing there either. The knowledge base's tables
(`kb_*`, made by `helpdesk kb import`) are the help desk's: a PostgreSQL database holding them
alone is one the desk has not used yet, reported as new (exit 0).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, NotRequired, TypedDict

from chatbot.cli.options import add_db_option, print_error, settings_from, terminal_width
from chatbot.dburl import is_postgres
from chatbot.errors import HelpdeskError
from chatbot.text import counted, printable, wrap

if TYPE_CHECKING:
    from chatbot.config import Settings

FIRST_START = "the app, `helpdesk bot` or `helpdesk serve` makes {them} on first start"
NAMED_TABLES = 3
"""Another application's tables named in the report, enough to recognise its database."""


class Report(TypedDict):
    """What doctor prints: `DatabaseReport`'s fields (its `--json`), where a SQLite file not made
    yet has no latency (None) to report."""

    database: str
    server: str
    schema_version: int
    """0: no help-desk tables (or no file) yet."""
    helpdesk_schema_version: int
    latency_ms: float | None
    waiting_for_a_bot: int | None
    oldest_wait_for_a_bot_s: float | None
    held_by_a_bot: NotRequired[int]
    """Only when bots hold questions now (their leases renewed by live workers): how many. With
    others waiting long, the bots are busy, not absent."""
    other_tables: NotRequired[list[str]]
    """Only for a database holding tables, none of them the help desk's: theirs."""
    knowledge_base: NotRequired[bool]
    """Only for a PostgreSQL database holding the knowledge base and none of the desk's tables
    yet (always true then)."""


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
    from chatbot.assembly import check_database
    from chatbot.desk.models import bot_stalled_after

    settings = settings_from(args, knowledge_base=False)
    unmade = _unmade_file(settings)
    if unmade is not None:
        fields = _unmade_report(settings, unmade)
    else:
        # Opened as it is, never migrated: no tables are made where there are none (schema
        # version 0), and there nothing waits for a bot.
        report = check_database(settings)
        none_yet = report.schema_version == 0 and not report.other_tables
        fields = Report(
            database=report.database,
            server=report.server,
            schema_version=report.schema_version,
            helpdesk_schema_version=report.helpdesk_schema_version,
            latency_ms=report.latency_ms,
            waiting_for_a_bot=0 if none_yet else report.waiting_for_a_bot,
            oldest_wait_for_a_bot_s=None if none_yet else report.oldest_wait_for_a_bot_s,
        )
        if not none_yet and report.held_by_a_bot:
            fields["held_by_a_bot"] = report.held_by_a_bot
        if report.other_tables:
            fields["other_tables"] = list(report.other_tables)
        if report.knowledge_base:
            fields["knowledge_base"] = True
    other = fields.get("other_tables", [])
    if args.json:
        print(json.dumps(fields, indent=2))
        return _other_tables_error(fields["database"], other)
    print(f"database  {fields['database']}")
    print(f"server    {fields['server']}")
    width = terminal_width()
    version, latest = fields["schema_version"], fields["helpdesk_schema_version"]
    schema = f"version {version}"
    if unmade is not None:
        them = "it" if unmade.parent.is_dir() else "it and its folders"
        schema = f"none yet: no database file there; {FIRST_START.format(them=them)}"
        schema += " (doctor makes nothing)"
    elif other:
        them = "it" if len(other) == 1 else "them"
        # Another application's SQLite file is refused by every command; a PostgreSQL database
        # may well be shared on purpose, so the first start would add ours there.
        then = (
            f"would add the help desk's beside {them}"
            if is_postgres(settings.store.db)
            else "refuse to use it"
        )
        schema = (
            f"no help-desk tables, but {counted(len(other), 'other')} ({_some(other)}); the app,"
            f" `helpdesk bot` or `helpdesk serve` {then}"
        )
    elif version == 0 and fields.get("knowledge_base"):
        # `kb import` first, as the docs have it: the help desk's database, the desk not yet run.
        schema = "none yet: only the knowledge base's tables (kb_*) there; "
        schema += FIRST_START.format(them="the help desk's") + " (doctor makes none)"
    elif version == 0:
        schema = f"none yet: no help-desk tables there; {FIRST_START.format(them='them')}"
        schema += " (doctor makes none)"
    elif version < latest:  # Left as found: doctor reads.
        schema += (
            f", older than this helpdesk's {latest}: the next process"
            " that writes (the app, `helpdesk bot`, `helpdesk serve`) upgrades it"
        )
    # The long lines wrap on a terminal under the values, not into the labels' column.
    print("\n".join(wrap(schema, width, " " * 10, first="schema    ")))
    if fields["latency_ms"] is None:
        print("latency   not measured: no database file yet")
    else:
        print(f"latency   {fields['latency_ms']:.2f} ms (median round trip)")
    stalled_s = bot_stalled_after(settings.valen.budget_s)
    backlog = _backlog(
        fields["waiting_for_a_bot"],
        fields["oldest_wait_for_a_bot_s"],
        stalled_s,
        held=fields.get("held_by_a_bot", 0),
    )
    if other:
        backlog = "not counted: none of the help desk's tables there"
    print("\n".join(wrap(backlog, width, " " * 10, first="bots      ")))
    return _other_tables_error(fields["database"], other)


def _some(tables: list[str]) -> str:
    """The first few of another application's tables, as written (spelled out if need be)."""
    shown = ", ".join(printable(name) for name in tables[:NAMED_TABLES])
    more = len(tables) - NAMED_TABLES
    return f"{shown} and {more:,} more" if more > 0 else shown


def _other_tables_error(database: str, tables: list[str]) -> int:
    """Exit status 0, or 1 and one line when the database holds only other tables: it is most
    likely not the one meant (a mistyped --db, another application's file)."""
    if not tables:
        return 0
    print_error(
        f"{database} holds {counted(len(tables), 'table')} ({_some(tables)}) and none of the "
        "help desk's: is it the right database (--db, HELPDESK_DB)? Doctor changed nothing there"
    )
    return 1


def _unmade_file(settings: Settings) -> Path | None:
    """The SQLite file `settings` names when there is none there yet (None: a PostgreSQL URL, or
    something is there, which is opened and reported on). `HelpdeskError` when the first start
    could not make it either: a file where a folder must be, a folder this user cannot write, or
    one nothing can be made in (/proc)."""
    from chatbot.assembly import store_location
    from chatbot.dburl import is_postgres

    db = settings.store.db
    if is_postgres(db):
        return None
    path = store_location(db)
    if path.exists() or path.is_symlink():  # A dangling link: SQLite's own error says so.
        return None
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise HelpdeskError(
            f"{path}: no database there, and the first start cannot make one: {folder} is a file,"
            " not a folder"
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise HelpdeskError(
            f"{path}: no database there, and the first start cannot make one: this user cannot"
            f" write in {folder}"
        )
    if (problem := _cannot_make_in(folder, file=folder == path.parent)) is not None:
        raise HelpdeskError(
            f"{path}: no database there, and the first start cannot make one: {problem}"
        )
    return path


def _cannot_make_in(folder: Path, *, file: bool) -> str | None:
    """Why nothing can be made in `folder` (None: it can): a file, or (not `file`) the first of
    the missing folders. Tried, with a name of its own, and removed at once: the permission bits
    passed /proc and /sys, where the first start then failed ("No such file or directory")."""
    import shutil
    import tempfile

    what = "a file" if file else "a folder"
    try:
        if file:
            descriptor, made = tempfile.mkstemp(prefix=".helpdesk-doctor-", dir=folder)
            os.close(descriptor)
            os.unlink(made)
        else:
            shutil.rmtree(tempfile.mkdtemp(prefix=".helpdesk-doctor-", dir=folder))
    except OSError as error:
        return f"cannot make {what} in {folder}: {error.strerror or error}"
    return None


def _unmade_report(settings: Settings, path: Path) -> Report:
    """`DatabaseReport`'s fields for a SQLite file not made yet: schema version 0 (no tables),
    no latency (nothing to measure), nothing waiting."""
    import sqlite3

    from chatbot.assembly import latest_schema_version

    return Report(
        database=str(path),
        server=f"SQLite {sqlite3.sqlite_version}",
        schema_version=0,
        helpdesk_schema_version=latest_schema_version(settings.store.db),
        latency_ms=None,
        waiting_for_a_bot=0,
        oldest_wait_for_a_bot_s=None,
    )


def _backlog(count: int | None, oldest_s: float | None, stalled_s: float, *, held: int = 0) -> str:
    """The questions waiting for a bot, and a hint when they have waited longer than a bot takes
    (`stalled_s`): then no bot is taking them, or, when bots hold `held` others now (a live
    worker renews its leases), every bot is busy. None: not counted (an older schema)."""
    from chatbot.desk.stats import duration
    from chatbot.text import counted

    if count is None:
        return "not counted until the schema is upgraded"
    if count == 0 or oldest_s is None:
        return "no question waits for a bot"
    verb = "waits" if count == 1 else "wait"
    line = f"{counted(count, 'question')} {verb} for a bot, the oldest for {duration(oldest_s)}"
    if oldest_s >= stalled_s and held:
        # A bot holding a lease is alive (its heartbeat renews it): asking whether one runs sent
        # people looking for a bot that was there, waiting on a slow Valen.
        line += f"; the bots are busy with {held:,} (a slow Valen, or more concurrency needed)"
    elif oldest_s >= stalled_s:
        line += "; is a bot running (`helpdesk bot`, `helpdesk serve`, or an app without --no-bot)?"
    return line
