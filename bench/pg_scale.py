"""The desk's reads at scale on PostgreSQL beside SQLite: `helpdesk stats` (every
figure, everything recorded), the stats screen's read (F5 in the agent console: the last 7 days)
and the console's first queue (the cursor, then the whole queue: 10,000 waiting), each on one
data set built the same way in a temporary PostgreSQL database and a temporary SQLite file.
Printed: the PostgreSQL time, the SQLite time and their ratio (before and after a change cannot
be in one run: run it on each tree, `--code DIR` naming the other one).

The data set: a template of 60 conversations written through the desk itself (`DeskService`,
with a clock moved by hand, so every row is as the store writes it on that backend: messages,
events, decisions with their candidates and Valen errors, claims, replies, notes, read markers,
resolutions, escalations for several reasons, a second round after a hand-back), then copied
in SQL (`INSERT ... SELECT` over a series) until there are `--conversations` of them over 30
days, ids and times shifted per copy. Of each 60, 10 wait in the queue and 50 are resolved.

    python bench/pg_scale.py [--conversations 60000] [--runs 3] [--code DIR] [--breakdown]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _code_path() -> None:
    """`--code DIR` (read before anything imports `chatbot`): that tree's `chatbot` is measured."""
    for n, arg in enumerate(sys.argv):
        if arg == "--code" and n + 1 < len(sys.argv):
            sys.path.insert(0, str(Path(sys.argv[n + 1]).resolve()))
            return
        if arg.startswith("--code="):
            sys.path.insert(0, str(Path(arg.split("=", 1)[1]).resolve()))
            return
    sys.path.insert(0, str(ROOT))


_code_path()

import psycopg  # noqa: E402

from chatbot.desk.models import Feedback  # noqa: E402
from chatbot.desk.service import DeskService  # noqa: E402
from chatbot.engine.models import Answer, Candidate, Decision, Reason  # noqa: E402

ADMIN_URL = os.environ.get(
    "HELPDESK_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres"
)
TEMPLATE = 60
"""Conversations in the template: 10 waiting, 50 resolved."""
DAYS = 30
WORKER = "bench-worker"
AGENTS = ("ana", "ben", "chen", "dara")
THRESHOLD = 0.7


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def _candidates(n: int, top: float, *, errors: int = 0) -> tuple[Candidate, ...]:
    found = []
    for k in range(5):
        pid = f"passage-{(n * 7 + k) % 40:02d}"
        # The first `errors` judged with a timeout, the rest with a probability.
        judged: dict[str, Any] = (
            {"error": "timeout: 20 s", "error_kind": "timeout"}
            if k < errors
            else {"probability": round(top * (1 - k / 10), 3)}
        )
        title, text = f"Passage {pid}", f"Text of {pid}."
        found.append(Candidate(id=pid, title=title, text=text, bm25=5.0 - k, **judged))
    return tuple(found)


def _decision(n: int, question: str, *, answer: bool, errors: int = 0) -> Decision:
    top = 0.85 if answer else 0.3 + (n % 7) / 20
    candidates = _candidates(n, top, errors=errors)
    if answer:
        first = candidates[errors]
        return Decision(question=question, answer=Answer(id=first.id, title=first.title,
                        text=first.text, probability=first.probability or top), reason=None,
                        candidates=candidates, threshold=THRESHOLD,
                        latency_ms=150 + 37 * (n % 11))  # fmt: skip
    reason = Reason.VALEN_ERROR if errors == 5 else Reason.LOW_SCORE
    return Decision(question=question, answer=None, reason=reason, candidates=candidates,
                    threshold=THRESHOLD, latency_ms=150 + 37 * (n % 11))  # fmt: skip


def write_template(desk: DeskService, clock: Clock, start: datetime, span_s: float) -> None:
    """The 60 conversations, each on its own timeline from start + n * span / 60."""

    def at(n: int, seconds: float) -> None:
        clock.now = start + timedelta(seconds=n * span_s / TEMPLATE + seconds)

    def decide(n: int, seconds: float, question: str, *, answer: bool, errors: int = 0) -> None:
        at(n, seconds)
        [pending] = desk.lease(WORKER, limit=1, lease_s=30)
        desk.record_decision(WORKER, pending, _decision(n, question, answer=answer, errors=errors))

    def handle(cid: int, n: int, seconds: float, *, note: bool = False) -> float:
        """Claimed, replied to, read and resolved; returns when it was resolved."""
        agent = AGENTS[n % len(AGENTS)]
        at(n, seconds)
        desk.claim(cid, agent=agent)
        if note:
            at(n, seconds + 20)
            desk.add_note(cid, agent=agent, text=f"Checking the account of customer {n}.")
        at(n, seconds + 60 + 13 * (n % 17))
        reply = desk.reply(cid, agent=agent, text=f"Hello, I am looking at it ({n}).")
        desk.mark_read(cid, agent=agent, entry_id=reply.id)
        at(n, seconds + 600 + 31 * (n % 23))
        desk.resolve(cid, agent=agent)
        return seconds + 600 + 31 * (n % 23)

    for n in range(TEMPLATE):
        question = f"Question {n} about my bike, the docks and a refund?"
        at(n, 0)
        cid = desk.ask(None, question).conversation.id
        kind = n % 6 if n >= 10 else -1
        if kind == -1:  # Waiting: escalated for a low score, nobody took it yet.
            decide(n, 1, question, answer=False)
        elif kind in (0, 1):  # Escalated (low score, or Valen failing), then handled.
            decide(n, 1, question, answer=False, errors=5 if kind == 1 else 1)
            handle(cid, n, 300, note=kind == 1)
        elif kind == 2:  # Answered, "not helpful": escalated, handled.
            decide(n, 1, question, answer=True)
            answer = desk.store.latest_answer(cid)
            assert answer is not None
            at(n, 40)
            desk.feedback(cid, entry_id=answer.id, value=Feedback.NOT_HELPFUL)
            handle(cid, n, 400)
        elif kind == 3:  # Answered, then asked for a person.
            decide(n, 1, question, answer=True)
            at(n, 90)
            desk.talk_to_person(cid)
            handle(cid, n, 500)
        elif kind == 4:  # Escalated, handed back, asked again, escalated again, resolved.
            decide(n, 1, question, answer=False)
            agent = AGENTS[n % len(AGENTS)]
            at(n, 200)
            desk.claim(cid, agent=agent)
            at(n, 260)
            desk.reply(cid, agent=agent, text="The bot can take this one.")
            at(n, 300)
            desk.hand_back(cid, agent=agent)
            again = f"Another question {n}: when is my refund paid?"
            at(n, 400)
            desk.ask(cid, again)
            decide(n, 401, again, answer=False)
            handle(cid, n, 700)
        else:  # Escalated, released back to the queue, taken by another, resolved.
            decide(n, 1, question, answer=False)
            at(n, 200)
            desk.claim(cid, agent="ana")
            at(n, 250)
            desk.release(cid, agent="ana")
            handle(cid, n, 350)


SHIFTED: dict[str, dict[str, str]] = {
    # Per table: column -> what it is shifted by ("C" conversation ids, "E" entry ids, "D"
    # decision ids, "G" escalation ids, "T" seconds).
    "conversations": {"id": "C", "question_entry": "E", "created_at": "T", "updated_at": "T",
                      "waiting_since": "T", "claimed_at": "T"},
    "entries": {"id": "E", "conversation_id": "C", "decision_id": "D", "created_at": "T"},
    "decisions": {"id": "D", "conversation_id": "C", "message_id": "E", "created_at": "T"},
    "judgment_errors": {"decision_id": "D", "created_at": "T"},
    "escalations": {"id": "G", "conversation_id": "C", "after_message_id": "E",
                    "question_entry": "E", "created_at": "T", "handled_at": "T"},
    "read_markers": {"conversation_id": "C", "entry_id": "E"},
}  # fmt: skip
ID_OF = {"conversations": "C", "entries": "E", "decisions": "D", "escalations": "G"}


def replicate(
    execute: Callable[[str], Any],
    columns: Callable[[str], list[str]],
    maxima: dict[str, int],
    copies: int,
    span_s: float,
    series: str,
) -> None:
    """Every template row `copies - 1` more times, copy k shifted by k times the template's ids
    and span. `series` is a FROM item yielding k = 1 .. copies - 1."""
    for table, shifts in SHIFTED.items():
        names = columns(table)
        values = []
        for name in names:
            by = shifts.get(name)
            if by is None:
                values.append(name)
            elif by == "T":
                values.append(f"{name} + n.k * {span_s!r}")
            else:
                values.append(f"{name} + n.k * {maxima[by]}")
        execute(
            f"INSERT INTO {table} ({', '.join(names)}) SELECT {', '.join(values)}"
            f" FROM {table}, {series} ORDER BY n.k" + (", id" if table in ID_OF else "")
        )


def build(kind: str, location: str, conversations: int) -> tuple[datetime, int]:
    """The data set in the database at `location`; returns its "now" and the conversations."""
    copies = max(1, conversations // TEMPLATE)
    span_s = DAYS * 86400 / copies
    start = datetime(2026, 11, 1, 0, 0, tzinfo=UTC)
    clock = Clock(start)
    if kind == "postgresql":
        from chatbot.store.postgres import PostgresStore

        store: Any = PostgresStore.open(location, clock=clock)
    else:
        from chatbot.store.sqlite import SQLiteStore

        store = SQLiteStore.open(Path(location), clock=clock)
    desk = DeskService(store)
    write_template(desk, clock, start, span_s)
    desk.close()
    tables = ("conversations", "entries", "decisions", "escalations")
    if kind == "postgresql":
        with psycopg.connect(location, autocommit=True) as conn:

            def execute(sql: str) -> Any:
                return conn.execute(sql.encode())

            maxima = {
                ID_OF[t]: int(conn.execute(f"SELECT max(id) FROM {t}".encode()).fetchall()[0][0])
                for t in tables
            }

            def pg_columns(table: str) -> list[str]:
                found = conn.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = %s"
                    " AND table_schema = current_schema() ORDER BY ordinal_position",
                    (table,),
                )
                return [row[0] for row in found]

            replicate(execute, pg_columns, maxima, copies,
                      span_s, f"generate_series(1, {copies - 1}) AS n(k)")  # fmt: skip
            for table in tables:
                conn.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'),"
                    f" (SELECT max(id) FROM {table}))".encode()
                )
            conn.execute(b"VACUUM ANALYZE")  # As autovacuum leaves a table that has settled.
    else:
        with sqlite3.connect(location) as db:
            maxima = {ID_OF[t]: int(db.execute(f"SELECT max(id) FROM {t}").fetchone()[0])
                      for t in tables}  # fmt: skip

            def sq_columns(table: str) -> list[str]:
                return [row[1] for row in db.execute(f"PRAGMA table_info({table})")]

            db.execute("CREATE TEMP TABLE n (k INTEGER PRIMARY KEY)")
            db.executemany("INSERT INTO n VALUES (?)", [(k,) for k in range(1, copies)])
            replicate(db.execute, sq_columns, maxima, copies, span_s, "temp.n AS n")
            db.commit()
            db.execute("ANALYZE")
        db.close()
    return start + timedelta(seconds=copies * span_s), copies * TEMPLATE


def open_desk(kind: str, location: str, now: datetime) -> DeskService:
    if kind == "postgresql":
        from chatbot.store.postgres import PostgresStore

        return DeskService(PostgresStore.open(location, clock=lambda: now, migrate=False))
    from chatbot.store.sqlite import SQLiteStore

    return DeskService(SQLiteStore.open(Path(location), clock=lambda: now, migrate=False))


def week_since(now: datetime) -> datetime:
    """The stats screen's first period, "Last 7 days" (`chatbot.tui.screens.stats.PERIODS`)."""
    today = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return today - timedelta(days=6)


def measure(kind: str, location: str, now: datetime, runs: int) -> tuple[dict[str, float], Any]:
    """Each read's median seconds over `runs`, each run on a store opened for it (a fresh
    process's connection, as `helpdesk stats` and a console opening have)."""
    reads: dict[str, Callable[[DeskService], Any]] = {
        "stats (helpdesk stats, everything)": lambda d: d.stats(since=None, threshold=THRESHOLD),
        "F5 stats screen (last 7 days)": lambda d: d.stats(
            since=week_since(now), threshold=THRESHOLD
        ),
        "first queue (cursor + queue)": lambda d: (d.last_entry_id(), d.queue(agent="ana")),
    }
    times: dict[str, list[float]] = {name: [] for name in reads}
    results: dict[str, Any] = {}
    for _ in range(runs):
        for name, read in reads.items():
            desk = open_desk(kind, location, now)
            try:
                started = time.perf_counter()
                results[name] = read(desk)
                times[name].append(time.perf_counter() - started)
            finally:
                desk.close()
    return {name: sorted(t)[len(t) // 2] for name, t in times.items()}, results


def breakdown(url: str, now: datetime) -> None:
    """Each query of the shared figures on PostgreSQL, slowest first."""
    from chatbot.store.postgres import PostgresStore
    from chatbot.store.stats_sql import PostgresDialect, compute_stats

    spent: list[tuple[float, str]] = []
    store = PostgresStore.open(url, migrate=False)
    conn = store._link.connection()  # With the settings the store's connections have.
    try:

        def run(sql: str, params: Any) -> list[Any]:
            started = time.perf_counter()
            rows = conn.execute(sql.encode(), params).fetchall()
            spent.append((time.perf_counter() - started, " ".join(sql.split())[:110]))
            return rows

        for since in (None, week_since(now)):
            spent.clear()
            compute_stats(run, PostgresDialect(), since=since, now=now, thresholds=[THRESHOLD])
            print(f"  PostgreSQL queries, since {since}: total {sum(s for s, _ in spent):.3f} s")
            for seconds, sql in sorted(spent, reverse=True)[:8]:
                print(f"    {seconds:7.3f} s  {sql}")
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=60_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--code", metavar="DIR", help="measure the `chatbot` of this tree")
    parser.add_argument("--breakdown", action="store_true", help="time each stats query")
    args = parser.parse_args()
    import chatbot

    print(f"code: {Path(chatbot.__file__).parent}")
    name = f"helper_pgperf_bench_{uuid.uuid4().hex[:8]}"
    admin = psycopg.connect(ADMIN_URL, autocommit=True)
    admin.execute(f'CREATE DATABASE "{name}"'.encode())
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(ADMIN_URL)
    url = urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))
    try:
        with tempfile.TemporaryDirectory() as folder:
            path = str(Path(folder) / "scale.sqlite3")
            started = time.perf_counter()
            now, count = build("postgresql", url, args.conversations)
            built_pg = time.perf_counter() - started
            started = time.perf_counter()
            build("sqlite", path, args.conversations)
            built_sq = time.perf_counter() - started
            print(f"{count:,} conversations (10 of 60 waiting, 50 resolved); built in"
                  f" {built_pg:.1f} s (PostgreSQL), {built_sq:.1f} s (SQLite)")  # fmt: skip
            pg, pg_results = measure("postgresql", url, now, args.runs)
            sq, sq_results = measure("sqlite", path, now, args.runs)
            print(f"median of {args.runs} runs, each on a new connection")
            print(f"{'read':<38} {'PostgreSQL':>11} {'SQLite':>9} {'PG/SQLite':>10}")
            for read, seconds in pg.items():
                print(
                    f"{read:<38} {seconds:>9.3f} s {sq[read]:>7.3f} s {seconds / sq[read]:>9.2f}x"
                )
            same = all(_comparable(pg_results[k]) == _comparable(sq_results[k]) for k in pg_results)
            print(f"same results on both: {same}")
            if not same:
                for key in pg_results:
                    if _comparable(pg_results[key]) != _comparable(sq_results[key]):
                        print(f"  differs: {key}")
            if args.breakdown:
                breakdown(url, now)
    finally:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,)
        )
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"'.encode())
        admin.close()


def _comparable(result: Any) -> Any:
    if isinstance(result, tuple):  # The queue: its cursor, then its items.
        return (result[0], [item.model_dump() for item in result[1]])
    return result.model_dump(exclude={"generated_at"})


if __name__ == "__main__":
    main()
