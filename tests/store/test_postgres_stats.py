"""PostgreSQL's figures at scale: what made `helpdesk stats` and the stats screen
3-5 times slower there than on SQLite, checked on a modest data set by what the server plans and
by the statements sent. The figures themselves are checked on both backends by
`tests/desk/test_stats.py`; here they are compared between the two on the same conversations."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from chatbot.desk.models import Feedback
from chatbot.desk.service import DeskService
from chatbot.desk.stats import DeskStats
from chatbot.store.postgres import PostgresStore
from chatbot.store.sqlite import SQLiteStore
from chatbot.store.stats_sql import PostgresDialect, Run, compute_stats
from tests.backends import postgres_server
from tests.store.conftest import START, FakeClock, answered, escalated

WORKER = "worker-1"


def fill(desk: DeskService, clock: FakeClock, conversations: int = 24) -> None:
    """Conversations of every shape the figures read: escalated and handled, answered and
    marked not helpful, answered then asked for a person, asked again after a hand-back, and
    some left waiting."""
    for n in range(conversations):
        clock.now = START + timedelta(hours=n)
        question = f"Question {n % 5}: no free docks, will I pay a late fee?"
        cid = desk.ask(None, question).conversation.id
        [pending] = desk.lease(WORKER, limit=1, lease_s=30)
        kind = n % 4
        desk.record_decision(WORKER, pending, answered(question) if kind in (1, 2) else
                             escalated(question))  # fmt: skip
        clock.advance(30)
        if kind == 1:
            answer = desk.store.latest_answer(cid)
            assert answer is not None
            desk.feedback(cid, entry_id=answer.id, value=Feedback.NOT_HELPFUL)
        elif kind == 2:
            desk.talk_to_person(cid)
        if n % 6 == 5:
            continue  # Left waiting.
        clock.advance(60)
        desk.claim(cid, agent="ana")
        clock.advance(45 + n)
        reply = desk.reply(cid, agent="ana", text="Looking at it.")
        desk.mark_read(cid, agent="ana", entry_id=reply.id)
        if kind == 3:  # Handed back, asked again, escalated again.
            desk.hand_back(cid, agent="ana")
            clock.advance(20)
            desk.ask(cid, f"Again {n}: when is my refund paid?")
            [pending] = desk.lease(WORKER, limit=1, lease_s=30)
            desk.record_decision(WORKER, pending, escalated(f"Again {n}: when is my refund paid?"))
            clock.advance(90)
            desk.claim(cid, agent="ben")
            clock.advance(30)
            reply = desk.reply(cid, agent="ben", text="Paid tomorrow.")
            desk.mark_read(cid, agent="ben", entry_id=reply.id)
            desk.resolve(cid, agent="ben")
        else:
            clock.advance(600)
            desk.resolve(cid, agent="ana")


@pytest.fixture
def pg_url() -> Iterator[str]:
    server = postgres_server()
    url = server.take()
    try:
        yield url
    finally:
        server.give_back(url)


@pytest.fixture
def filled(pg_url: str) -> str:
    clock = FakeClock()
    desk = DeskService(PostgresStore.open(pg_url, clock=clock))
    try:
        fill(desk, clock)
    finally:
        desk.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
    return pg_url


def statements(d: Any, run: Run, *, since: Any = None) -> list[tuple[str, Any]]:
    """Every statement `compute_stats` sends, with its parameters, run through `run`."""
    sent: list[tuple[str, Any]] = []

    def recording(sql: str, params: Any) -> list[Any]:
        sent.append((sql, params))
        return run(sql, params)

    compute_stats(recording, d, since=since, now=START + timedelta(days=2), thresholds=[0.7])
    return sent


def plan(conn: psycopg.Connection[Any], sql: str, params: Any) -> str:
    rows = conn.execute(f"EXPLAIN (ANALYZE, COSTS OFF) {sql}".encode(), params).fetchall()
    return "\n".join(row[0] for row in rows)


def test_the_content_gaps_key_the_questions_of_answered_conversations_only(filled: str) -> None:
    """Whether an escalation's question was answered in its conversation is looked for per
    escalation, and only where a decision of the conversation answered: hashed, PostgreSQL
    keyed every answered question in the database (a regexp_replace of 25 us each) for any
    window, and every escalation's question too."""
    with psycopg.connect(filled, autocommit=True) as conn:
        sent = statements(PostgresDialect(), lambda s, p: conn.execute(s.encode(), p).fetchall())
        [(gaps, params)] = [(s, p) for s, p in sent if "FROM escalations g" in s]
        explained = plan(conn, gaps, params).splitlines()
    keyed = next(n for n, line in enumerate(explained) if "regexp_replace" in line)
    indent = len(explained[keyed]) - len(explained[keyed].lstrip())
    header = next(
        line.strip()
        for line in reversed(explained[:keyed])
        if line.strip().startswith("SubPlan") and len(line) - len(line.lstrip()) < indent
    )
    text = "\n".join(explained)
    assert f"(NOT ({header}))" in text, text  # Correlated: one probe per escalation.
    assert f"hashed {header}" not in text, text
    # Behind a hashed look at the conversations with an answer.
    assert re.search(rf"\(NOT \(hashed SubPlan \d+\)\) OR \(NOT \({header}\)\)", text), text


def test_a_percentile_computes_its_values_once(filled: str) -> None:
    """count(v) and each percentile had their own copy of the first replies' correlated
    subqueries: the first reply of each escalation was looked for three times."""
    with psycopg.connect(filled, autocommit=True) as conn:
        sent = statements(PostgresDialect(), lambda s, p: conn.execute(s.encode(), p).fetchall())
        [(first_reply, params)] = [(s, p) for s, p in sent if "y.author = 'agent'" in s]
        explained = plan(conn, first_reply, params)
    assert explained.count("(author = 'agent'::text)") == 1, explained


def test_the_stores_connections_compile_no_query(pg_url: str) -> None:
    """JIT compiling took 0.3-0.8 s of each slower query of the figures (their correlated
    subqueries cost much on paper), more than running them."""
    with PostgresStore.open(pg_url) as store:
        assert store._rows("SHOW jit") == [("off",)]


def test_the_figures_count_the_conversations_in_one_pass(filled: str, tmp_path: Path) -> None:
    """The number of conversations is the sum of the days' counts, and the first day is read
    only for a window, off the index by time: two passes over every conversation's log (each
    0.2 s at 60,000 on PostgreSQL) fewer for everything recorded, one fewer for a window."""
    with psycopg.connect(filled, autocommit=True) as conn:

        def run(sql: str, params: Any) -> list[Any]:
            return conn.execute(sql.encode(), params).fetchall()

        everything = statements(PostgresDialect(), run)
        week = statements(PostgresDialect(), run, since=START)
    written = "EXISTS (SELECT 1 FROM entries e WHERE e.conversation_id = c.id)"
    assert sum(written in sql for sql, _ in everything) == 1
    assert sum(written in sql for sql, _ in week) == 2
    assert len(everything) == 17 and len(week) == 18  # The ratings are one statement more.


@pytest.mark.parametrize("since", [None, START + timedelta(hours=10), START - timedelta(days=3)])
def test_both_backends_give_the_same_figures(pg_url: str, tmp_path: Path, since: Any) -> None:
    """The same conversations, written through the desk on each backend: the same figures, for
    everything, a window inside them and one reaching back before the first."""
    figures: list[DeskStats] = []
    for store in (PostgresStore, SQLiteStore):
        clock = FakeClock()
        opened: Any = (
            PostgresStore.open(pg_url, clock=clock) if store is PostgresStore
            else SQLiteStore.open(tmp_path / "same.sqlite3", clock=clock)
        )  # fmt: skip
        desk = DeskService(opened)
        try:
            fill(desk, clock)
            clock.now = START + timedelta(days=2)
            figures.append(desk.stats(since=since, threshold=0.7))
        finally:
            desk.close()
    on_postgres, on_sqlite = figures
    assert on_postgres.conversations and on_postgres.first_reply_s.count
    assert on_postgres.content_gaps
    assert on_postgres == on_sqlite
