"""What only the SQLite store has: the file (WAL, privacy, refusals), compact storage, rollback."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from chatbot.desk.models import Author, ChatEvent, Escalation, State
from chatbot.engine.models import Reason
from chatbot.store import codec
from chatbot.store.interface import StoreError
from chatbot.store.schema import MIGRATIONS
from chatbot.store.sqlite import SQLiteStore
from tests.store.conftest import FakeClock, answered, escalated
from tests.store.helpers import ask, claimed, waiting


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "helpdesk.sqlite3"


@pytest.fixture
def sqlite_store(db_path: Path, clock: FakeClock) -> Iterator[SQLiteStore]:
    with SQLiteStore.open(db_path, clock=clock) as opened:
        yield opened


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def downgrade(db_path: Path, version: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the database's schema what version `version` made (a database written with today's
    code, as an older one would have held those rows): what later migrations added is dropped,
    what they redefined is defined as before, tables they reshaped are rebuilt as they were."""
    reference = db_path.with_name(f"reference-{version}.sqlite3")
    with monkeypatch.context() as patch:
        patch.setattr("chatbot.store.sqlite.MIGRATIONS", MIGRATIONS[:version])
        SQLiteStore.open(reference).close()
    query = "SELECT name, type, sql FROM sqlite_master WHERE sql IS NOT NULL"
    with sqlite3.connect(reference) as ref:
        wanted = {name: (kind, sql) for name, kind, sql in ref.execute(query)}
        columns = {
            table: [row[1] for row in ref.execute(f"PRAGMA table_info({table})")]
            for table, (kind, _) in wanted.items()
            if kind == "table"
        }
    with sqlite3.connect(db_path) as raw:
        have = {name: (kind, sql) for name, kind, sql in raw.execute(query)}
        for table, names in columns.items():
            if have.get(table) == wanted[table]:
                continue
            current = {row[1] for row in raw.execute(f"PRAGMA table_info({table})")}
            shared = [name for name in names if name in current]
            values = [
                # Migration 7 keeps most content gaps' questions by reference.
                "coalesce(question, (SELECT e.text FROM entries e WHERE e.id = question_entry))"
                if (table, name) == ("escalations", "question") and "question_entry" in current
                else name
                for name in shared
            ]
            raw.execute(wanted[table][1].replace(table, f"{table}_shape", 1))
            raw.execute(
                f"INSERT INTO {table}_shape ({', '.join(shared)})"
                f" SELECT {', '.join(values)} FROM {table}"
            )
            raw.execute(f"DROP TABLE {table}")
            raw.execute(f"ALTER TABLE {table}_shape RENAME TO {table}")
        have = {name: (kind, sql) for name, kind, sql in raw.execute(query)}
        for name, (kind, _) in sorted(have.items(), key=lambda item: item[1][0] == "table"):
            if name not in wanted or (kind == "index" and wanted[name] != have[name]):
                raw.execute(f"DROP {kind} {name}")
        have = {name: (kind, sql) for name, kind, sql in raw.execute(query)}
        for name, (_, sql) in wanted.items():
            if name not in have:
                raw.execute(sql)
        raw.execute(f"PRAGMA user_version = {version}")


def test_new_database_is_wal_and_fully_migrated(sqlite_store: SQLiteStore, db_path: Path) -> None:
    assert sqlite_store.schema_version == len(MIGRATIONS) == 15
    with sqlite3.connect(db_path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {row[0] for row in raw.execute("SELECT name FROM sqlite_master")}
    assert {"conversations", "entries", "questions", "decisions", "passage_texts"} <= tables
    assert "messages" not in tables


def test_connections_opening_a_new_database_together_all_open_it(tmp_path: Path) -> None:
    """SQLite fails one of two connections switching a new file to WAL at once, busy timeout or
    not: before the fix this failed in about 1 round in 15 (a full suite run met it)."""
    rounds, overlapped = 60, 0
    for number in range(rounds):
        path = tmp_path / f"new-{number}.sqlite3"
        spans = open_together(path, openers=4)
        overlapped += max(start for start, _ in spans) < min(end for _, end in spans)
        with sqlite3.connect(path) as raw:
            assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert overlapped > rounds // 2  # The opens raced: all four were under way at one moment.


def open_together(path: Path, *, openers: int) -> list[tuple[float, float]]:
    """Open and close the store at `path` from `openers` threads released at once; returns
    when each open started and ended, and fails on any error."""
    barrier = threading.Barrier(openers, timeout=30)
    spans: list[tuple[float, float]] = []
    errors: list[BaseException] = []

    def open_it() -> None:
        try:
            barrier.wait()
            started = time.monotonic()
            SQLiteStore.open(path).close()
            spans.append((started, time.monotonic()))
        except BaseException as error:  # noqa: BLE001 - reported by the assertion below.
            errors.append(error)

    threads = [threading.Thread(target=open_it) for _ in range(openers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(spans) == openers
    return spans


def test_a_version_5_database_gains_its_decisions_valen_errors(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 6 reads the errors of decisions made before it out of their bodies, once."""
    with SQLiteStore.open(db_path, clock=clock) as store:
        for _ in range(2):
            question = ask(store, "I was charged twice")
            store.lease_questions(worker="w", limit=1, lease_s=30)
            store.record_decision(question.id, worker="w", expect=State.BOT,
                                  decision=answered(), answer=True, escalation=None)  # fmt: skip
        waiting(store, "No free docks")
    # Back to version 5: what migrations 6 and 7 added is dropped, the decisions and events stay.
    downgrade(db_path, 5, monkeypatch)
    with sqlite3.connect(db_path) as raw:
        gone = "SELECT * FROM sqlite_master WHERE name IN ('judgment_errors', 'passage_revisions')"
        assert not raw.execute(gone).fetchall()
    with SQLiteStore.open(db_path, clock=clock) as store:
        assert store.schema_version == len(MIGRATIONS) == 15
        stats = store.stats(None)
        # answered() holds one replay miss beside two judged passages.
        assert [(e.kind, e.count) for e in stats.valen_errors] == [("replay-miss", 2)]
        assert stats.decisions == 2
        # The escalation made before migration 6 is counted by its reason.
        assert {r.reason.value: r.count for r in stats.escalations_by_reason if r.count} == {
            "low-score": 1
        }


def test_a_version_6_database_reads_the_same_after_migration_7(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows as version 6 stored them (deflated JSON bodies, `decided` and `escalated` events as
    JSON objects, bot answers by text digest with their titles, content gaps with their
    questions) read as they did once migration 7 has run, and new rows beside them too."""
    with SQLiteStore.open(db_path, clock=clock) as store:
        answered_in = ask(store, answered().question)
        store.lease_questions(worker="w", limit=1, lease_s=30)
        store.record_decision(answered_in.id, worker="w", expect=State.BOT, decision=answered(),
                              answer=True, escalation=None)  # fmt: skip
        escalated_in = ask(store, escalated().question)
        store.lease_questions(worker="w", limit=1, lease_s=30)
        store.record_decision(
            escalated_in.id, worker="w", expect=State.BOT, decision=escalated(), answer=False,
            escalation=Escalation(reason=Reason.LOW_SCORE, top_probability=0.644,
                                  question_entry=escalated_in.id, question=escalated().question),
        )  # fmt: skip
        conversations = (answered_in.conversation_id, escalated_in.conversation_id)
        before = [(store.entries(c), store.decisions(c)) for c in conversations]
        gaps, stats = store.content_gaps(), store.stats(None)
    with sqlite3.connect(db_path) as raw:  # Version 6's formats, row by row.
        for conversation_log, decisions in before:
            for stored in decisions:
                body, _ = codec.compact(stored.decision)
                raw.execute("UPDATE decisions SET body = ? WHERE id = ?",
                            (codec.pack(body), stored.id))  # fmt: skip
            for entry in conversation_log:
                if isinstance(entry, ChatEvent):
                    raw.execute("UPDATE entries SET params = ?, decision_id = NULL WHERE id = ?",
                                (entry.event.model_dump_json(), entry.id))  # fmt: skip
                elif entry.author is Author.BOT:
                    assert entry.text is not None
                    raw.execute(
                        "UPDATE entries SET text_digest = ?, passage_title = ?, revision = NULL"
                        " WHERE id = ?",
                        (codec.digest(entry.text), entry.passage_title, entry.id),
                    )
    downgrade(db_path, 6, monkeypatch)
    with sqlite3.connect(db_path) as raw:
        old_formats = (
            "SELECT (SELECT count(*) FROM escalations WHERE question IS NULL),"
            " (SELECT count(*) FROM entries WHERE params NOT LIKE '{%'),"
            " (SELECT count(*) FROM decisions WHERE substr(body, 1, 1) != x'78')"
        )
        assert raw.execute(old_formats).fetchone() == (0, 0, 0)
    with SQLiteStore.open(db_path, clock=clock) as store:
        assert store.schema_version == len(MIGRATIONS) == 15
        assert [(store.entries(c), store.decisions(c)) for c in conversations] == before
        assert store.content_gaps() == gaps
        assert store.stats(None) == stats
        # New rows beside the old ones.
        again = ask(store, answered().question)
        store.lease_questions(worker="w", limit=1, lease_s=30)
        store.record_decision(again.id, worker="w", expect=State.BOT, decision=answered(),
                              answer=True, escalation=None)  # fmt: skip
        assert [d.decision for d in store.decisions(again.conversation_id)] == [answered()]
        with sqlite3.connect(db_path) as raw:
            [(body,)] = raw.execute("SELECT body FROM decisions ORDER BY id DESC LIMIT 1")
        assert codec.is_positional(body)


def test_a_version_3_database_gains_read_markers_with_everything_unread(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SQLiteStore.open(db_path, clock=clock) as store:
        conversation_id = claimed(store)
    downgrade(db_path, 3, monkeypatch)
    with SQLiteStore.open(db_path, clock=clock) as store:
        assert store.schema_version == len(MIGRATIONS) == 15
        [item] = store.queue(agent="ana")
        assert (item.conversation_id, item.unread, item.read_entry) == (conversation_id, True, 0)
        store.mark_read(conversation_id, agent="ana", entry_id=store.last_entry_id())
        assert not store.queue(agent="ana")[0].unread


def test_a_version_7_database_gains_typing_and_keeps_its_conversations(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SQLiteStore.open(db_path, clock=clock) as store:
        conversation_id = claimed(store)
        before = store.entries(conversation_id)
    downgrade(db_path, 7, monkeypatch)
    with sqlite3.connect(db_path) as raw:
        tables = {name for (name,) in raw.execute("SELECT name FROM sqlite_master")}
        assert "typing" not in tables
    with SQLiteStore.open(db_path, clock=clock) as store:
        assert store.schema_version == len(MIGRATIONS) == 15
        assert store.entries(conversation_id) == before
        store.set_typing(conversation_id, author=Author.AGENT, seconds=6)
        assert list(store.typing(conversation_id)) == [Author.AGENT]


def test_reopening_keeps_data_and_does_not_migrate_again(db_path: Path, clock: FakeClock) -> None:
    with SQLiteStore.open(db_path, clock=clock) as first:
        question = ask(first, "hello")
    with SQLiteStore.open(db_path, clock=clock) as second:
        assert second.schema_version == len(MIGRATIONS)
        assert second.entries(question.conversation_id) == [question]


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o277])
def test_the_database_and_its_folders_are_private_whatever_the_umask(
    tmp_path: Path, umask: int
) -> None:
    previous = os.umask(umask)
    try:
        path = tmp_path / "a" / "b" / "helpdesk.sqlite3"
        with SQLiteStore.open(path) as store:
            ask(store, "hello")  # Writes, so the -wal and -shm files exist.
            files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
            assert all(f.exists() for f in files)
            assert [mode(f) for f in files] == [0o600, 0o600, 0o600]
        assert mode(tmp_path / "a") == mode(tmp_path / "a" / "b") == 0o700
    finally:
        os.umask(previous)


def test_an_existing_folder_is_left_alone(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    with SQLiteStore.open(shared / "x.db"):
        pass
    assert mode(shared) == 0o755 and mode(shared / "x.db") == 0o600


def test_a_newer_schema_is_refused_with_one_line(db_path: Path) -> None:
    with sqlite3.connect(db_path) as raw:
        raw.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    with pytest.raises(StoreError, match="newer than this helpdesk understands"):
        SQLiteStore.open(db_path)


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("this is not a database, just some text that is long enough" * 20)
    with pytest.raises(StoreError, match="cannot use database"):
        SQLiteStore.open(path)


def test_a_fifo_or_a_device_is_refused_for_what_it_is(tmp_path: Path) -> None:
    # SQLite said only "disk I/O error" for both, which reads like a failing disk.
    fifo = tmp_path / "db.fifo"
    os.mkfifo(fifo)
    with pytest.raises(StoreError) as error:
        SQLiteStore.open(fifo)
    assert str(error.value) == f"{fifo}: is a FIFO (named pipe), expected a database file"
    with pytest.raises(StoreError) as error:
        SQLiteStore.open(Path("/dev/null"))
    assert (
        str(error.value) == "/dev/null: is a device or other special file, expected a database file"
    )
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # Left as it was.


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a directory"):
        SQLiteStore.open(tmp_path)


def test_a_path_under_a_file_is_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(StoreError, match="cannot create folder"):
        SQLiteStore.open(blocker / "sub" / "x.db")


def test_each_passage_text_is_stored_once(sqlite_store: SQLiteStore, db_path: Path) -> None:
    for _ in range(5):
        question = ask(sqlite_store, "charged twice?")
        [leased] = sqlite_store.lease_questions(worker="w", limit=1, lease_s=30)
        sqlite_store.record_decision(leased.id, worker="w", expect=State.BOT,
                                     decision=answered(), answer=True, escalation=None)  # fmt: skip
    decision = answered()
    with sqlite3.connect(db_path) as raw:
        texts = [row[0] for row in raw.execute("SELECT text FROM passage_texts")]
        bodies = [row[0] for row in raw.execute("SELECT body FROM decisions")]
        copies = raw.execute("SELECT count(*) FROM entries WHERE text = ?",
                             (decision.candidates[0].text,)).fetchone()[0]  # fmt: skip
    assert sorted(texts) == sorted(c.text for c in decision.candidates)
    assert all(codec.is_positional(body) for body in bodies)  # Issue 13.
    assert all(
        c.text.encode() not in body and (not c.title or c.title.encode() not in body)
        for body in bodies
        for c in decision.candidates
    )
    assert copies == 0  # The bot's answers refer to the text too.
    assert sqlite_store.decisions(question.conversation_id)[0].decision == decision


def test_a_decision_stored_as_json_text_before_is_still_read(
    sqlite_store: SQLiteStore, db_path: Path
) -> None:
    question = ask(sqlite_store, "charged twice?")
    [leased] = sqlite_store.lease_questions(worker="w", limit=1, lease_s=30)
    sqlite_store.record_decision(leased.id, worker="w", expect=State.BOT,
                                 decision=answered(), answer=True, escalation=None)  # fmt: skip
    # The body as versions before issue 13 stored it, then as deflated JSON (issue 13's first).
    body, _ = codec.compact(answered())
    for old in (json.dumps(body), codec.pack(body)):
        with sqlite3.connect(db_path) as raw:
            raw.execute("UPDATE decisions SET body = ?", (old,))
        [stored] = sqlite_store.decisions(question.conversation_id)
        # The agent still sees every text the bot judged.
        assert stored.decision == answered()
        assert [c.text for c in stored.decision.candidates] == [
            c.text for c in answered().candidates
        ]


def test_a_failed_write_rolls_back_and_names_the_file(
    sqlite_store: SQLiteStore, db_path: Path
) -> None:
    conversation = sqlite_store.create_conversation()
    with sqlite3.connect(db_path) as raw:  # Sabotage: a trigger that refuses customer messages.
        raw.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON entries"
            " BEGIN SELECT RAISE(ABORT, 'refused by trigger'); END"
        )
    with pytest.raises(StoreError, match="cannot write: refused by trigger"):
        ask(sqlite_store, "hello", conversation.id)
    assert sqlite_store.entries(conversation.id) == []
    assert sqlite_store.create_conversation().id == 2  # Still usable: no transaction left open.


def test_an_idle_worker_takes_no_write_lock(sqlite_store: SQLiteStore, db_path: Path) -> None:
    with sqlite3.connect(db_path, isolation_level=None) as other:
        other.execute("BEGIN IMMEDIATE")  # Another process holds the write lock...
        try:
            # ...and a worker finding nothing to do is not kept waiting behind it.
            assert sqlite_store.lease_questions(worker="w", limit=5, lease_s=30) == []
        finally:
            other.execute("ROLLBACK")


def test_a_long_conversation_opens_on_its_newest_page(sqlite_store: SQLiteStore) -> None:
    conversation_id = claimed(sqlite_store)
    for number in range(997):
        sqlite_store.reply(conversation_id, agent="ana", expect=State.CLAIMED, text=f"m {number}")
    newest = sqlite_store.entries(conversation_id, limit=100)
    assert len(newest) == 100 and newest[-1].text == "m 996"  # type: ignore[union-attr]
    assert sqlite_store.count_entries(conversation_id, before_id=newest[0].id) == 900


def test_a_conversations_language_is_one_index_probe(sqlite_store: SQLiteStore) -> None:
    """Reading a conversation's locale never walks its log: migration 6's index of each
    conversation's events by kind finds the latest `locale-set` in one probe."""
    plan = " ".join(
        str(row)
        for row in sqlite_store._db.execute(
            f"EXPLAIN QUERY PLAN {SQLiteStore._CONVERSATION} WHERE c.id = 1"
        )
    )
    assert "entries_by_conversation_event" in plan
