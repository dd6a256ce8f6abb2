"""Issue 11: how soon another process's knowledge-base edit is live in a follower, PostgreSQL
(LISTEN/NOTIFY) beside files (the directory stamp polled every second, as the app and bots do).

A follower process runs `LiveEngine.follow` as a bot does and prints the moment each rebuilt
engine is in place; this process saves a passage, waits for that line, and takes the difference
(CLOCK_MONOTONIC is one clock for every process on the machine). Each latency runs from the start
of the writer's save to the new engine answering, so it includes the write, the notification (or
the poll), reading the passages and building the BM25 index. The saves are one at a time.

    python bench/kb_notify.py [--edits N] [--file-edits N] [--postgres URL]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg  # noqa: E402
from psycopg import sql  # noqa: E402

from chatbot.engine.engine import Engine  # noqa: E402
from chatbot.engine.live import POLL_S, LiveEngine  # noqa: E402
from chatbot.knowledge_base.interface import KnowledgeBaseStore  # noqa: E402
from chatbot.knowledge_base.postgres import PostgresPassageStore  # noqa: E402
from chatbot.knowledge_base.storage import load_knowledge_base, shipped_knowledge_base  # noqa: E402
from chatbot.knowledge_base.store import PassageStore  # noqa: E402
from chatbot.retrieval.retrievers import BM25Retriever  # noqa: E402
from chatbot.valen.cache import ReplayCache  # noqa: E402
from chatbot.valen.judge import PassageJudge  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ADMIN_URL = os.environ.get("HELPDESK_TEST_POSTGRES") or "postgresql://postgres@127.0.0.1:5432/test"


def open_store(location: str) -> KnowledgeBaseStore:
    if location.startswith("postgresql://"):
        return PostgresPassageStore.open(location)
    return PassageStore(Path(location))


async def follow(location: str) -> None:
    """The follower: `LiveEngine.follow`'s loop (wait, then poll), printing when it woke and when
    the rebuilt engine was in place, for each change."""
    store = open_store(location)
    judge = PassageJudge(replay="on", cache=ReplayCache(ROOT / "caches" / "rerank.json"))
    engine = Engine(retriever=BM25Retriever(store.passages()), judge=judge)
    live = LiveEngine(engine, store)

    async def loop() -> None:
        async with store.watch() as changes:
            print("ready", flush=True)
            while True:
                await changes.wait(POLL_S)
                woke = time.monotonic()
                if live.changed() and await live.rebuild() is not None:
                    print(f"{woke} {time.monotonic()}", flush=True)

    task = asyncio.create_task(loop())
    await asyncio.to_thread(sys.stdin.read)  # Until the writer closes our stdin.
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    store.close()


def measure(location: str, edits: int) -> tuple[list[float], list[float], list[float]]:
    """Milliseconds from the start of each save to its return, to the follower waking, and to
    its rebuilt engine being in place. Saves on files start at a random point of the poll
    interval."""
    writer = open_store(location)
    follower = subprocess.Popen(
        [sys.executable, __file__, "--follow", location],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    assert follower.stdin is not None and follower.stdout is not None
    try:
        assert follower.stdout.readline().strip() == "ready"
        if isinstance(writer, PostgresPassageStore):
            wait_listening(location)
        saved: list[float] = []
        woke: list[float] = []
        live: list[float] = []
        for n in range(edits):
            if not isinstance(writer, PostgresPassageStore):
                time.sleep(random.uniform(0, POLL_S))  # Polling: any phase of the interval.
            current = writer.get("helmet")
            edited = current.passage.model_copy(update={"text": f"Helmets, edit {n}."})
            started = time.monotonic()
            writer.save(edited, based_on=current.revision)
            saved.append((time.monotonic() - started) * 1000)
            heard, rebuilt = map(float, follower.stdout.readline().split())
            woke.append((heard - started) * 1000)
            live.append((rebuilt - started) * 1000)
        return saved, woke, live
    finally:
        follower.stdin.close()
        follower.wait(timeout=30)
        writer.close()


def wait_listening(url: str) -> None:
    """Until the follower's LISTEN is in place (a condition on the server, not a pause)."""
    with psycopg.connect(url, autocommit=True) as conn:
        while True:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND query LIKE 'LISTEN%'"
            ).fetchone()
            if row is not None and row[0] > 0:
                return
            time.sleep(0.01)


def percentiles(values: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50_ms": round(statistics.median(values), 1), "p99_ms": round(cuts[98], 1),
            "max_ms": round(max(values), 1), "n": len(values)}  # fmt: skip


def run(edits: int = 200, file_edits: int = 20, admin: str = ADMIN_URL) -> dict[str, Any]:
    figures: dict[str, Any] = {}

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "kb"
        PassageStore(directory).import_passages(load_knowledge_base(shipped_knowledge_base()))
        saved, woke, live = measure(str(directory), file_edits)
        figures["files_poll_1s"] = {
            "save": percentiles(saved),
            "woke": percentiles(woke),
            "live": percentiles(live),
        }

    name = f"helpdesk_kb_bench_{secrets.token_hex(6)}"
    parts = urlsplit(admin)
    url = urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        try:
            with PostgresPassageStore.open(url) as store:
                store.import_passages(load_knowledge_base(shipped_knowledge_base()))
            saved, woke, live = measure(url, edits)
            figures["postgres_notify"] = {
                "save": percentiles(saved),
                "woke": percentiles(woke),
                "live": percentiles(live),
            }
        finally:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
    pg, files = figures["postgres_notify"], figures["files_poll_1s"]
    figures["files_over_postgres_live_p50"] = round(
        files["live"]["p50_ms"] / pg["live"]["p50_ms"], 1
    )
    return figures


def flat(quick: bool) -> dict[str, float]:
    """The figures `run.py` prints, one key each."""
    figures = run(edits=100 if quick else 300, file_edits=10 if quick else 30)
    pg, files = figures["postgres_notify"], figures["files_poll_1s"]
    return {
        "kb_notify_woke_p50_ms": pg["woke"]["p50_ms"],
        "kb_notify_woke_p99_ms": pg["woke"]["p99_ms"],
        "kb_notify_live_p50_ms": pg["live"]["p50_ms"],
        "kb_notify_live_p99_ms": pg["live"]["p99_ms"],
        "kb_files_poll_live_p50_ms": files["live"]["p50_ms"],
        "kb_files_poll_live_p99_ms": files["live"]["p99_ms"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=200, help="saves measured on PostgreSQL")
    parser.add_argument("--file-edits", type=int, default=20, help="saves measured on files")
    parser.add_argument("--postgres", default=ADMIN_URL, help="server to make a database on")
    parser.add_argument("--follow", metavar="LOCATION", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.follow:
        asyncio.run(follow(args.follow))
        return
    print(json.dumps(run(args.edits, args.file_edits, args.postgres), indent=2))


if __name__ == "__main__":
    main()
