"""Migration 3 on a database built by the shipped migrations 1–2 and filled the way version 2
wrote it: system sentences become typed events, decisions lose their copies of passage texts."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from chatbot.desk.models import (
    Author,
    ChatEvent,
    ChatMessage,
    Claimed,
    Escalated,
    Feedback,
    HandedBack,
    Resolved,
    State,
)
from chatbot.engine.models import Decision, Reason
from chatbot.store.interface import StoreError
from chatbot.store.schema import (
    MIGRATIONS,
    V2_ASKED_NOTICE,
    V2_ESCALATED_NOTICE,
)
from chatbot.store.sqlite import SQLiteStore
from tests.store.conftest import START, answered, escalated

T0 = START.timestamp()
Q1 = "I was charged twice, can I get my money back?"
Q2 = "No free docks, will I pay a late fee?"


def version_2(path: Path) -> sqlite3.Connection:
    """An empty database as helpdesk version 2 left it: migrations 1 and 2, nothing else."""
    db = sqlite3.connect(path, isolation_level=None)
    for migration in MIGRATIONS[:2]:
        assert isinstance(migration, tuple)
        for statement in migration:
            db.execute(statement)
    db.execute("PRAGMA user_version = 2")
    return db


def message(db: sqlite3.Connection, id_: int, conversation: int, author: str, text: str,
            **extra: object) -> None:  # fmt: skip
    columns = {"id": id_, "conversation_id": conversation, "author": author, "text": text,
               "created_at": T0 + id_, **extra}  # fmt: skip
    names = ", ".join(columns)
    db.execute(f"INSERT INTO messages ({names}) VALUES ({', '.join('?' * len(columns))})",
               list(columns.values()))  # fmt: skip


def decision(db: sqlite3.Connection, id_: int, conversation: int, message_id: int,
             made: Decision) -> None:  # fmt: skip
    db.execute(
        "INSERT INTO decisions (id, conversation_id, message_id, answer_id, reason,"
        " top_probability, latency_ms, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (id_, conversation, message_id, made.answer.id if made.answer else None,
         made.reason.value if made.reason else None, made.top_probability, made.latency_ms,
         made.model_dump_json(), T0 + message_id),
    )  # fmt: skip


def escalation(db: sqlite3.Connection, conversation: int, question: str, reason: str,
               top: float | None, after: int) -> None:  # fmt: skip
    db.execute(
        "INSERT INTO escalations (conversation_id, question, reason, top_probability,"
        " after_message_id, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        (conversation, question, reason, top, after, T0 + after),
    )


@pytest.fixture
def old_database(tmp_path: Path) -> Path:
    """Three conversations written in interleaved order, as three customers at once would:

    1. answered, marked not helpful (escalated), claimed by ana, replied to, resolved;
    2. escalated by a low score, waiting;
    3. "talk to a person" before any question, claimed by bo, handed back.
    """
    path = tmp_path / "helpdesk.sqlite3"
    db = version_2(path)
    for conversation, state, agent in ((1, "resolved", "ana"), (2, "waiting", None),
                                       (3, "bot", None)):  # fmt: skip
        db.execute(
            "INSERT INTO conversations (id, state, agent, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (conversation, state, agent, T0, T0),
        )
    good, low = answered(Q1), escalated(Q2)
    assert good.answer is not None
    message(db, 1, 1, "customer", Q1)
    message(db, 2, 2, "customer", Q2)
    decision(db, 1, 1, 1, good)
    message(db, 3, 1, "bot", good.answer.text, passage_id=good.answer.id,
            passage_title=good.answer.title, decision_id=1, feedback="not-helpful")  # fmt: skip
    decision(db, 2, 2, 2, low)
    escalation(db, 2, Q2, "low-score", 0.644, after=2)
    message(db, 4, 2, "system", V2_ESCALATED_NOTICE)
    escalation(db, 1, Q1, "customer-asked", 0.899, after=3)
    message(db, 5, 1, "system", V2_ASKED_NOTICE)
    message(db, 6, 3, "system", V2_ASKED_NOTICE)
    message(db, 7, 1, "system", "ana joined the conversation.")
    message(db, 8, 3, "system", "bo joined the conversation.")
    message(db, 9, 1, "agent", "Refunded: the hold drops off in 3 days.", agent="ana")
    message(db, 10, 1, "system", "ana marked this resolved. Write again any time.")
    message(db, 11, 3, "system", "bo handed the conversation back to the bot.")
    db.execute("UPDATE conversations SET reason = 'low-score', top_probability = 0.644,"
               " waiting_since = ? WHERE id = 2", (T0 + 4,))  # fmt: skip
    db.close()
    return path


def test_system_sentences_become_typed_events(old_database: Path) -> None:
    with SQLiteStore.open(old_database) as store:
        assert store.schema_version == len(MIGRATIONS)  # Migrated from 2 to the newest.
        first = store.entries(1)
        assert [(e.id, type(e)) for e in first] == [
            (1, ChatMessage), (3, ChatMessage), (5, ChatEvent), (7, ChatEvent), (9, ChatMessage),
            (10, ChatEvent),
        ]  # fmt: skip
        events = [e.event for e in first if isinstance(e, ChatEvent)]
        assert events == [
            Escalated(reason=Reason.CUSTOMER_ASKED, top_probability=0.899, question_entry=1),
            Claimed(agent="ana"),
            Resolved(agent="ana"),
        ]
        assert [e.event for e in store.entries(2) if isinstance(e, ChatEvent)] == [
            Escalated(reason=Reason.LOW_SCORE, top_probability=0.644, question_entry=2)
        ]
        assert [e.event for e in store.entries(3) if isinstance(e, ChatEvent)] == [
            Escalated(reason=Reason.CUSTOMER_ASKED),
            Claimed(agent="bo"),
            HandedBack(agent="bo"),
        ]
        assert first[-1].created_at.timestamp() == T0 + 10  # Times kept.


def test_messages_keep_their_ids_text_source_and_feedback(old_database: Path) -> None:
    with SQLiteStore.open(old_database) as store:
        customer, bot, *_, agent = (e for e in store.entries(1) if isinstance(e, ChatMessage))
        assert (customer.author, customer.text, customer.pending) == (
            Author.CUSTOMER, Q1, False,
        )  # fmt: skip
        good = answered(Q1)
        assert good.answer is not None
        assert (bot.id, bot.text, bot.decision_id) == (3, good.answer.text, 1)
        assert bot.source == "Charged twice for one ride (card-charged-twice)"
        assert bot.feedback is Feedback.NOT_HELPFUL
        assert (agent.agent, agent.text) == ("ana", "Refunded: the hold drops off in 3 days.")


def test_decisions_come_back_whole_from_compact_rows(old_database: Path) -> None:
    with SQLiteStore.open(old_database) as store:
        assert [d.decision for d in store.decisions(1)] == [answered(Q1)]
        [low] = store.decisions(2)
        assert (low.decision, low.message_id, low.worker) == (escalated(Q2), 2, None)
    with sqlite3.connect(old_database) as raw:
        bodies = [row[0] for row in raw.execute("SELECT body FROM decisions")]
        tables = {row[0] for row in raw.execute("SELECT name FROM sqlite_master")}
    assert not any("temporary hold" in body for body in bodies)
    assert not {"messages", "decisions_v2"} & tables


def test_the_queue_and_gaps_read_as_before(old_database: Path) -> None:
    with SQLiteStore.open(old_database) as store:
        [item] = store.queue()
        assert (item.conversation_id, item.question, item.reason) == (2, Q2, Reason.LOW_SCORE)
        assert store.conversation(1).state is State.RESOLVED
        assert store.conversation(1).claimed_at is not None
        assert store.conversation(1).claimed_at.timestamp() == T0 + 7  # type: ignore[union-attr]
        gaps = {gap.conversation_id: gap for gap in store.content_gaps()}
        # 1 was answered (its "not helpful" was stored as `customer-asked` then): no gap.
        assert list(gaps) == [2] and gaps[2].agent_reply is None
        # And it works on: a new question in the resolved conversation is a question again.
        _, asked = store.add_customer_message(1, "And the second charge?", expect=State.RESOLVED,
                                              to=State.BOT, pending=True)  # fmt: skip
        assert asked.id == 12 and asked.pending


def test_an_unrecognised_sentence_stops_the_migration_and_changes_nothing(
    old_database: Path,
) -> None:
    with sqlite3.connect(old_database) as raw:
        raw.execute("INSERT INTO messages (conversation_id, author, text, created_at)"
                    " VALUES (3, 'system', 'Something nobody wrote.', 0)")  # fmt: skip
    with pytest.raises(StoreError, match="unrecognised system message 'Something nobody wrote.'"):
        SQLiteStore.open(old_database)
    with sqlite3.connect(old_database) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 2
        assert raw.execute("SELECT count(*) FROM messages").fetchone()[0] == 12
