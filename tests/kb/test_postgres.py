"""What only the PostgreSQL knowledge base has: its schema, its server, its password."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import psycopg
import pytest

from chatbot.cli.main import main
from chatbot.dburl import display
from chatbot.engine.engine import Engine
from chatbot.engine.live import LiveEngine
from chatbot.knowledge_base import Passage
from chatbot.knowledge_base.interface import ConflictError
from chatbot.knowledge_base.postgres import SCHEMA_VERSION, PostgresPassageStore
from chatbot.knowledge_base.storage import KnowledgeBaseError
from chatbot.retrieval.retrievers import BM25Retriever
from chatbot.valen.cache import ReplayCache
from chatbot.valen.judge import PassageJudge
from tests.conftest import ROOT
from tests.kb.backends import pg_url
from tests.kb.helpers import SECRET, with_password

__all__ = ["pg_url"]


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_the_schema_is_made_on_first_use_with_its_version(pg_url: str) -> None:
    with PostgresPassageStore.open(pg_url) as store:
        store.add(Passage(id="helmet", text="Helmets."))
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("SELECT schema_version, generation FROM kb_meta").fetchone()
    assert row == (SCHEMA_VERSION, 1)
    with PostgresPassageStore.open(pg_url) as again:  # Opening again changes nothing.
        assert [p.id for p in again.passages()] == ["helmet"]


def test_a_newer_schema_is_refused_with_one_line(
    pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    PostgresPassageStore.open(pg_url).close()
    with psycopg.connect(pg_url) as conn:
        conn.execute("UPDATE kb_meta SET schema_version = %s", (SCHEMA_VERSION + 1,))
    with pytest.raises(KnowledgeBaseError, match="newer than this helpdesk knows"):
        PostgresPassageStore.open(pg_url)
    assert main(["kb", "list", "--kb", pg_url]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"helpdesk: error: {display(pg_url)}: the knowledge base's schema is version "
        f"{SCHEMA_VERSION + 1}, newer than this helpdesk knows ({SCHEMA_VERSION}); "
        "upgrade helpdesk\n"
    )


def test_a_refused_connection_is_one_line_exit_2_and_no_password(pg_url: str) -> None:
    url = with_password(pg_url, SECRET)
    parts = urlsplit(url)
    refused = url.replace(f":{parts.port}/", f":{closed_port()}/")
    for argv in (["kb", "list", "--kb", refused], ["ask", "Where is my helmet?", "--kb", refused]):
        done = subprocess.run(
            [sys.executable, "-m", "chatbot", *argv],
            cwd=ROOT, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 2
        assert done.stdout == ""
        [line] = done.stderr.splitlines()
        assert line.startswith(f"helpdesk: error: {display(refused)}: cannot connect")
        assert "Connection refused" in line
        assert SECRET not in done.stderr


def test_a_password_never_appears_in_what_the_store_says(pg_url: str) -> None:
    url = with_password(pg_url, SECRET)  # Trust authentication: the password is not checked.
    with PostgresPassageStore.open(url) as store:
        assert SECRET not in store.location
        with pytest.raises(KnowledgeBaseError) as raised:
            store.get("nope")
        assert SECRET not in str(raised.value)
    assert SECRET not in display(f"{url}?password={SECRET}&sslmode=disable")


def test_a_hand_broken_row_is_a_problem_line_not_a_crash(
    pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with PostgresPassageStore.open(pg_url) as store:
        store.add(Passage(id="helmet", text="Helmets."))
        store.add(Passage(id="dock", text="Docks."))
    with psycopg.connect(pg_url) as conn:
        conn.execute("UPDATE kb_passages SET content = '{\"id\": ' WHERE id = 'dock'")
    with PostgresPassageStore.open(pg_url) as store:
        scan = store.scan()
        assert [s.passage.id for s in scan.passages] == ["helmet"]
        [problem] = scan.problems
        assert "passage 'dock'" in problem and "malformed JSON" in problem
    assert main(["kb", "check", "--kb", pg_url]) == 1
    out, _err = capsys.readouterr()
    assert out.startswith(f"problem: {display(pg_url)}: passage 'dock': malformed JSON")


def drop_connections(url: str) -> None:
    """What a server restart does to every connection but the caller's: ends them, and waits
    until they are gone (pg_terminate_backend only signals them)."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
        ended = [int(row[0]) for row in rows]
        while True:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", (ended,)
            ).fetchone()
            if row is not None and row[0] == 0:
                return
            time.sleep(0.01)


def test_a_dropped_connection_is_reopened_and_a_failed_write_is_reported(pg_url: str) -> None:
    with PostgresPassageStore.open(pg_url) as store:
        store.add(Passage(id="helmet", text="Helmets."))
        drop_connections(pg_url)
        assert store.get("helmet").passage.text == "Helmets."  # A read just tries again.
        drop_connections(pg_url)
        with pytest.raises(KnowledgeBaseError, match=r"cannot add the passage: .+") as raised:
            store.add(Passage(id="dock", text="Docks."))
        assert "\n" not in str(raised.value)
        store.add(Passage(id="dock", text="Docks."))  # Said, not dropped: trying again works.
        assert [p.id for p in store.passages()] == ["dock", "helmet"]


def test_two_saves_from_one_revision_race_and_exactly_one_wins(pg_url: str) -> None:
    """Two editors on two connections save from the same revision at the same moment. The write
    lock is held by hand until both are seen waiting on it (so they really overlap); then it is
    let go, and one save lands while the other is refused."""
    with PostgresPassageStore.open(pg_url) as setup:
        base = setup.add(Passage(id="helmet", text="Helmets."))
    stores = [PostgresPassageStore.open(pg_url) for _ in range(2)]
    outcomes: list[str] = []

    def save(store: PostgresPassageStore, text: str) -> None:
        try:
            store.save(Passage(id="helmet", text=text), based_on=base.revision)
            outcomes.append(f"saved {text}")
        except ConflictError:
            outcomes.append("refused")

    with psycopg.connect(pg_url) as holder, psycopg.connect(pg_url, autocommit=True) as probe:
        holder.execute("SELECT 1 FROM kb_meta FOR UPDATE")
        threads = [
            threading.Thread(target=save, args=(store, text))
            for store, text in zip(stores, ("Mine.", "Theirs."), strict=True)
        ]
        for thread in threads:
            thread.start()
        while True:  # Both saves wait on the lock: they overlap.
            row = probe.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock'"
            ).fetchone()
            if row is not None and row[0] == 2:
                break
            time.sleep(0.01)
        holder.rollback()
        for thread in threads:
            thread.join(timeout=30)
    for store in stores:
        store.close()
    assert sorted(outcomes)[0] == "refused" and sorted(outcomes)[1].startswith("saved ")
    with PostgresPassageStore.open(pg_url) as store:
        winner = outcomes[0] if outcomes[0] != "refused" else outcomes[1]
        assert store.get("helmet").passage.text == winner.removeprefix("saved ")
        assert [v.passage().text for v in store.history("helmet")] == ["Helmets."]


def listeners(url: str) -> set[int]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND query LIKE 'LISTEN%'"
        ).fetchall()
    return {int(row[0]) for row in rows}


async def until(condition: Callable[[], bool], what: str) -> None:
    for _ in range(3000):
        if await asyncio.to_thread(condition):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never: {what}")


async def test_a_follower_listens_again_after_its_connection_drops(pg_url: str) -> None:
    """The server ends every connection (as a restart does); the follower, polling only once an
    hour, listens again on its own and still hears the next change."""
    with PostgresPassageStore.open(pg_url) as writer:
        writer.add(Passage(id="helmet", text="Helmets."))
    store = PostgresPassageStore.open(pg_url)
    judge = PassageJudge(replay="on", cache=ReplayCache(ROOT / "caches" / "rerank.json"))
    live = LiveEngine(Engine(retriever=BM25Retriever(store.passages()), judge=judge), store)
    rebuilt = asyncio.Event()
    live.on_rebuilt = lambda _engine: rebuilt.set()
    following = asyncio.create_task(live.follow(3600.0))
    try:
        await until(lambda: bool(listeners(pg_url)), "the follower listens")
        first = listeners(pg_url)
        drop_connections(pg_url)
        await until(lambda: bool(listeners(pg_url) - first), "the follower listens again")
        with PostgresPassageStore.open(pg_url) as writer:
            writer.add(Passage(id="dock", text="Docks."))
        await asyncio.wait_for(rebuilt.wait(), timeout=30)
    finally:
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
        store.close()
    assert sorted(p.id for p in live.engine.passages) == ["dock", "helmet"]


def test_only_an_import_makes_a_knowledge_base_in_a_database_without_one(
    pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mistyped database name (one that exists, with none of the knowledge base's tables)
    silently became a new knowledge base of one passage; it is refused as a missing folder is."""
    refusal = (
        f"helpdesk: error: {display(pg_url)}: no knowledge base there (no kb_* tables); "
        "`helpdesk kb import DIR --kb URL` makes one\n"
    )
    for argv in (["add", "--id", "helmet", "--text", "Helmets."], ["list"],
                 ["synonyms", "add", "bike", "bicycle"]):  # fmt: skip
        assert main(["kb", *argv, "--kb", pg_url]) == 2, argv
        assert capsys.readouterr() == ("", refusal)
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT to_regclass('kb_meta')").fetchone() == (None,)

    # The README's way to make one still works, and the other commands then use it.
    assert main(["kb", "import", str(ROOT / "knowledge_base"), "--kb", pg_url]) == 0
    assert main(["kb", "add", "--id", "lost-item", "--text", "Kept.", "--kb", pg_url]) == 0
    assert "added lost-item" in capsys.readouterr().out


def test_a_write_stuck_on_a_lock_fails_at_its_deadline_and_leaves_no_backend_waiting(
    pg_url: str,
) -> None:
    # Before, the deadline cut the connection on our side only: the server's backend went on
    # waiting for the lock, holding a connection slot, and the next call opened another.
    with PostgresPassageStore.open(pg_url) as writer:
        writer.add(Passage(id="helmet", text="Helmets."))
    store = PostgresPassageStore.open(pg_url, timeout_s=1.0)
    locker = psycopg.connect(pg_url)  # Not autocommit: the lock is held until rollback.
    observer = psycopg.connect(pg_url, autocommit=True)
    ours = {locker.info.backend_pid, observer.info.backend_pid}
    pool = ThreadPoolExecutor(1)  # Before the fix, a call hung on the lock: it fails here.

    def waiting() -> list[int]:
        rows = observer.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'"
        ).fetchall()
        return [int(pid) for (pid,) in rows if pid not in ours]

    try:
        locker.execute("LOCK TABLE kb_meta IN ACCESS EXCLUSIVE MODE")
        for _ in range(2):
            with pytest.raises(KnowledgeBaseError) as failed:
                pool.submit(store.add, Passage(id="dock", text="Docks.")).result(timeout=30)
            assert str(failed.value) == (
                f"{display(pg_url)}: cannot add the passage: no answer in 1 s"
            )
        # The lock is still held, and no backend of ours waits on it.
        give_up = time.monotonic() + 10
        while waiting() and time.monotonic() < give_up:
            time.sleep(0.05)
        assert not waiting()
        locker.rollback()
        store.add(Passage(id="dock", text="Docks."))  # The same store carries on.
        assert [p.id for p in store.passages()] == ["dock", "helmet"]
    finally:
        locker.close()  # Lets a call still waiting on the lock (before the fix) end.
        pool.shutdown()
        store.close()
        observer.close()
