"""An escalation is one write transaction (issue 13), on every backend: the bot's (its decision,
the `decided` event, the move to the queue, the `escalated` event, the content gap) and the
customer's who asks for a person with their first message (the conversation, the message, the
escalation), or for a person before writing anything (the conversation, the escalation).
Counted from outside, on the real database: SQLite's commit frames in its WAL file,
PostgreSQL's transaction id on every row written. A failure half-way leaves nothing behind.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from chatbot.desk.models import ChatEvent, Escalated, State
from chatbot.desk.service import DeskService
from chatbot.engine.models import Reason
from chatbot.store.interface import StoreError
from tests.backends import Backend
from tests.store.conftest import FakeClock, escalated

WORKER = "worker-1"
QUESTION = "No free docks, will I pay a late fee?"
TABLES = ("conversations", "entries", "decisions", "escalations")


@pytest.fixture
def desk(backend: Backend) -> Iterator[DeskService]:
    service = backend.service(FakeClock())
    yield service
    service.close()


def wal_commits(db: Path) -> tuple[bytes, int]:
    """The WAL's salts and how many transactions it holds: frames whose header carries the
    database size are the last of a commit (SQLite's file format, section 4.1)."""
    wal = db.with_name(db.name + "-wal")
    data = wal.read_bytes() if wal.exists() else b""
    if len(data) < 32:
        return b"", 0
    page_size = int.from_bytes(data[8:12], "big")
    salts, commits, at = data[16:24], 0, 32
    while at + 24 + page_size <= len(data) and data[at + 8 : at + 16] == salts:
        commits += int.from_bytes(data[at + 4 : at + 8], "big") != 0
        at += 24 + page_size
    return salts, commits


class Writes:
    """What one step wrote, seen from another connection: how many transactions committed it
    (SQLite), or the ids of the transactions that wrote the rows it added or changed
    (PostgreSQL)."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.wal = (b"", 0)
        self.ids: dict[str, int] = {}
        if backend.name == "sqlite":
            self.wal = wal_commits(Path(backend.location))
            return
        import psycopg

        with psycopg.connect(str(backend.location), autocommit=True) as conn:
            for table in TABLES:
                row = conn.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()
                assert row is not None
                self.ids[table] = int(row[0])

    def transactions(self, conversation_id: int | None = None) -> int:
        """SQLite: commits since the mark. PostgreSQL: distinct transaction ids among rows added
        since the mark and the conversation's row (changed by the step)."""
        if self.backend.name == "sqlite":
            salts, now = wal_commits(Path(self.backend.location))
            assert salts == self.wal[0], "the WAL was checkpointed and restarted meanwhile"
            return now - self.wal[1]
        import psycopg

        added = " UNION ".join(f"SELECT xmin::text FROM {table} WHERE id > %s" for table in TABLES)
        with psycopg.connect(str(self.backend.location), autocommit=True) as conn:
            rows = conn.execute(
                f"{added} UNION SELECT xmin::text FROM conversations WHERE id = %s",
                [*(self.ids[table] for table in TABLES), conversation_id or 0],
            ).fetchall()
        return len(rows)


def refuse_content_gaps(backend: Backend) -> None:
    """Sabotage: the database refuses to store a content gap, the last step of an escalation."""
    if backend.name == "sqlite":
        with sqlite3.connect(backend.location) as raw:
            raw.execute(
                "CREATE TRIGGER refuse BEFORE INSERT ON escalations"
                " BEGIN SELECT RAISE(ABORT, 'refused by trigger'); END"
            )
        return
    import psycopg

    with psycopg.connect(str(backend.location), autocommit=True) as conn:
        conn.execute(
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS"
            " $$ BEGIN RAISE EXCEPTION 'refused by trigger'; END $$"
        )
        conn.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON escalations"
            " FOR EACH ROW EXECUTE FUNCTION refuse()"
        )


def allow_content_gaps(backend: Backend) -> None:
    if backend.name == "sqlite":
        with sqlite3.connect(backend.location) as raw:
            raw.execute("DROP TRIGGER IF EXISTS refuse")
        return
    import psycopg

    with psycopg.connect(str(backend.location), autocommit=True) as conn:
        conn.execute("DROP TRIGGER IF EXISTS refuse ON escalations")
        conn.execute("DROP FUNCTION IF EXISTS refuse()")


@pytest.fixture
def sabotaged(desk: DeskService, backend: Backend) -> Iterator[None]:
    refuse_content_gaps(backend)  # After `desk`, which made the database.
    try:
        yield
    finally:  # PostgreSQL test databases are handed to the next test.
        allow_content_gaps(backend)


def test_the_bot_escalates_in_one_write_transaction(desk: DeskService, backend: Backend) -> None:
    asked = desk.ask(None, QUESTION)
    [question] = desk.lease(WORKER, limit=1, lease_s=30)
    writes = Writes(backend)
    result = desk.record_decision(WORKER, question, escalated(QUESTION))
    assert result.outcome == "escalated"
    assert writes.transactions(asked.conversation.id) == 1
    conversation = desk.conversation(asked.conversation.id)
    assert conversation.state is State.WAITING
    assert conversation.pending == 0
    assert [gap.question for gap in desk.content_gaps()] == [QUESTION]
    assert [d.decision for d in desk.store.decisions(asked.conversation.id)] == [
        escalated(QUESTION)
    ]


def test_the_count_tells_transactions_apart(desk: DeskService, backend: Backend) -> None:
    """The measure can fail: the question and the bot's lease on it are two more."""
    writes = Writes(backend)
    asked = desk.ask(None, QUESTION)
    desk.lease(WORKER, limit=1, lease_s=30)
    desk.ask(asked.conversation.id, "Hello?")
    # The lease changes no row counted on PostgreSQL; the two messages are two transactions.
    assert writes.transactions(asked.conversation.id) == (3 if backend.name == "sqlite" else 2)


def test_a_customer_asks_a_person_in_one_write_transaction(
    desk: DeskService, backend: Backend
) -> None:
    writes = Writes(backend)
    asked = desk.ask(None, QUESTION, to_person=True)
    assert writes.transactions(asked.conversation.id) == 1
    assert asked.conversation.state is State.WAITING
    assert asked.conversation.question_entry == asked.message.id
    assert not asked.message.pending  # A person answers it, not the bot.
    [event] = [
        e.event for e in desk.store.entries(asked.conversation.id) if isinstance(e, ChatEvent)
    ]
    assert event == Escalated(reason=Reason.CUSTOMER_ASKED, question_entry=asked.message.id)
    [item] = desk.queue()
    assert (item.conversation_id, item.question) == (asked.conversation.id, QUESTION)
    assert [gap.question for gap in desk.content_gaps()] == [QUESTION]


def test_a_person_asked_for_before_any_message_is_one_write_transaction(
    desk: DeskService, backend: Backend
) -> None:
    writes = Writes(backend)
    result = desk.talk_to_person(None)
    assert result.escalated and result.conversation.state is State.WAITING
    assert writes.transactions(result.conversation.id) == 1
    [event] = [e.event for e in desk.store.entries(result.conversation.id)
               if isinstance(e, ChatEvent)]  # fmt: skip
    assert event == Escalated(reason=Reason.CUSTOMER_ASKED)
    assert [item.conversation_id for item in desk.queue()] == [result.conversation.id]
    assert desk.content_gaps() == []  # No question: nothing the help center missed.


def test_a_customer_already_with_a_person_just_writes(desk: DeskService) -> None:
    first = desk.ask(None, QUESTION, to_person=True)
    assert desk.claim(first.conversation.id, agent="ana").won
    again = desk.ask(first.conversation.id, "Are you there?", to_person=True)
    assert again.conversation.state is State.CLAIMED
    assert len(desk.content_gaps()) == 1


@pytest.mark.usefixtures("sabotaged")
def test_a_bot_escalation_that_fails_half_way_leaves_nothing(
    desk: DeskService, backend: Backend
) -> None:
    asked = desk.ask(None, QUESTION)
    [question] = desk.lease(WORKER, limit=1, lease_s=30)
    log = desk.store.entries(asked.conversation.id)
    with pytest.raises(StoreError, match="refused by trigger"):
        desk.record_decision(WORKER, question, escalated(QUESTION))
    # The decision, its event, the move to the queue: none of it was kept.
    assert desk.store.decisions(asked.conversation.id) == []
    assert desk.store.entries(asked.conversation.id) == log
    conversation = desk.conversation(asked.conversation.id)
    assert (conversation.state, conversation.pending) == (State.BOT, 1)
    assert desk.queue() == []
    # The worker still holds the question and settles it once the database takes it.
    allow_content_gaps(backend)
    assert desk.record_decision(WORKER, question, escalated(QUESTION)).outcome == "escalated"
    assert desk.conversation(asked.conversation.id).state is State.WAITING


@pytest.mark.usefixtures("sabotaged")
def test_a_customer_escalation_that_fails_half_way_leaves_nothing(desk: DeskService) -> None:
    with pytest.raises(StoreError, match="refused by trigger"):
        desk.ask(None, QUESTION, to_person=True)
    # Not even the conversation it would have started.
    assert desk.store.conversations() == []
    assert desk.store.last_entry_id() == 0
