"""The ratings' figures read off the rated events' own index (`entries_ratings`, SQLite's
migration 13 and PostgreSQL's 9), which holds their parameters: without it SQLite scanned every
entry for them, and PostgreSQL read a table row per rating. The ratings are one statement (the
resolutions they are a share of are counted with the escalations)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest

from chatbot.desk.service import DeskService
from chatbot.store.postgres import PostgresStore
from chatbot.store.sqlite import SQLiteStore
from chatbot.store.stats_sql import PostgresDialect, Run, SQLiteDialect, compute_stats
from tests.backends import postgres_server
from tests.desk.rating_helpers import rated_day
from tests.store.conftest import START, FakeClock


def ratings_statement(run: Run, dialect: Any) -> tuple[str, Any]:
    """The statement `compute_stats` reads the ratings of a window with, and its parameters."""
    sent: list[tuple[str, Any]] = []

    def recording(sql: str, params: Any) -> list[Any]:
        sent.append((sql, params))
        return run(sql, params)

    compute_stats(recording, dialect, since=START, now=START, thresholds=[0.7])
    [rated] = [(sql, params) for sql, params in sent if "'rated'" in sql]
    return rated


def test_sqlite_reads_the_ratings_off_their_index(tmp_path: Path) -> None:
    clock = FakeClock()
    store = SQLiteStore.open(tmp_path / "rated.sqlite3", clock=clock)
    desk = DeskService(store)
    try:
        rated_day(desk, clock)
        db = store._db

        def run(sql: str, params: Any) -> list[Any]:
            return db.execute(sql, params).fetchall()

        sql, params = ratings_statement(run, SQLiteDialect())
        plan = "\n".join(row[-1] for row in db.execute(f"EXPLAIN QUERY PLAN {sql}", params))
    finally:
        desk.close()
    assert "SEARCH x USING COVERING INDEX entries_ratings" in plan, plan
    assert "COVERING INDEX entries_by_conversation_event" in plan, plan  # Each one's resolution.
    assert "SCAN" not in plan, plan


@pytest.fixture
def pg_url() -> Any:
    server = postgres_server()
    url = server.take()
    try:
        yield url
    finally:
        server.give_back(url)


def test_postgresql_reads_the_ratings_off_their_index(pg_url: str) -> None:
    clock = FakeClock()
    desk = DeskService(PostgresStore.open(pg_url, clock=clock))
    try:
        rated_day(desk, clock)
    finally:
        desk.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        # A few rows: a sequential scan is cheaper, so the planner is told to prefer an index,
        # to see which one serves the statement and whether it needs the table. Not a bitmap
        # scan either: over four rows it costs the same as the index-only scan, and a run now
        # and then picked one over `entries_by_event_time`, which reads the table.
        conn.execute("SET enable_seqscan = off")
        conn.execute("SET enable_bitmapscan = off")
        sql, params = ratings_statement(
            lambda s, p: conn.execute(s.encode(), p).fetchall(), PostgresDialect()
        )
        rows = conn.execute(f"EXPLAIN (ANALYZE, COSTS OFF) {sql}".encode(), params).fetchall()
    plan = "\n".join(row[0] for row in rows)
    assert "Index Only Scan using entries_ratings on entries x" in plan, plan
    assert "Index Only Scan Backward using entries_by_conversation_event" in plan, plan
    assert "Heap Fetches: 0" in plan and "Heap Fetches: 1" not in plan, plan
