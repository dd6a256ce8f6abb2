"""Conversations, transcripts, decisions, the handoff queue and claims, in one SQLite file.

Every `helpdesk` process on a machine opens the same file in WAL mode, so readers never block the
one writer. Each write is one short `BEGIN IMMEDIATE` transaction; `busy_timeout` lets a second
writer wait its turn instead of failing. The public methods are the store's interface: a PostgreSQL
store would offer the same ones.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from chatbot.engine.models import Decision, Reason
from chatbot.errors import HelpdeskError
from chatbot.knowledge_base.models import Passage
from chatbot.store.models import (
    Author,
    ChatMessage,
    ClaimResult,
    ContentGap,
    Conversation,
    Feedback,
    QueueItem,
    State,
    StoredDecision,
)
from chatbot.store.schema import MIGRATIONS

Clock = Callable[[], datetime]

BUSY_TIMEOUT_MS = 3000

ESCALATED_NOTICE = "The bot could not answer this from the help center. A person will reply here."
ASKED_NOTICE = "A person will reply here."


class StoreError(HelpdeskError):
    """The database cannot be opened or used."""


class ConversationNotFound(StoreError):
    """No conversation has the id asked for."""


class ConflictError(StoreError):
    """The conversation is not in a state that allows the action (someone else got there first)."""


def utc_now() -> datetime:
    return datetime.now(UTC)


def _time(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, UTC)


def _stamp(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


class Store:
    """The conversation store over one SQLite file. Not thread-safe: one per thread or process."""

    def __init__(self, connection: sqlite3.Connection, *, path: Path, clock: Clock) -> None:
        self._db = connection
        self.path = path
        self._clock = clock
        self._local_writes = 0

    # -- opening ----------------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path, *, clock: Clock = utc_now) -> Store:
        """Open (creating it and its folder if needed) and migrate the database at `path`."""
        path = Path(path).expanduser()
        if path.is_dir():
            raise StoreError(f"{path}: is a directory, expected a database file")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            reason = error.strerror or str(error)
            raise StoreError(f"{path}: cannot create folder {path.parent}: {reason}") from None
        try:
            connection = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
        except sqlite3.Error as error:
            raise StoreError(f"{path}: cannot open database: {error}") from None
        store = cls(connection, path=path, clock=clock)
        try:
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
            connection.execute("PRAGMA foreign_keys = ON")
            store._migrate()
        except sqlite3.Error as error:
            connection.close()
            raise StoreError(f"{path}: cannot use database: {error}") from None
        except StoreError:
            connection.close()
            raise
        return store

    def _migrate(self) -> None:
        with self._write() as db:
            # Re-read inside the write lock: another process may have migrated meanwhile.
            (version,) = db.execute("PRAGMA user_version").fetchone()
            if version > len(MIGRATIONS):
                raise StoreError(
                    f"{self.path}: database schema version {version} is newer than this helpdesk "
                    f"understands ({len(MIGRATIONS)}); upgrade helpdesk"
                )
            for number, migration in enumerate(MIGRATIONS[version:], start=version + 1):
                for statement in migration:
                    db.execute(statement)
                db.execute(f"PRAGMA user_version = {number}")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        version: int = self._db.execute("PRAGMA user_version").fetchone()[0]
        return version

    # -- change detection -------------------------------------------------------------------------

    def version(self) -> int:
        """A number that grows whenever anyone commits a change: compare it to poll cheaply.

        `PRAGMA data_version` only moves for other connections' commits, so this connection's own
        commits are counted on top.
        """
        (data_version,) = self._db.execute("PRAGMA data_version").fetchone()
        return int(data_version) + self._local_writes

    # -- plumbing ---------------------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            raise StoreError(f"{self.path}: database is busy: {error}") from None
        try:
            yield self._db
            self._db.execute("COMMIT")
        except sqlite3.Error as error:
            self._rollback()
            raise StoreError(f"{self.path}: cannot write: {error}") from None
        except BaseException:
            self._rollback()
            raise
        self._local_writes += 1

    def _rollback(self) -> None:
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")

    def _now(self) -> float:
        return self._clock().timestamp()

    def _conversation_row(self, db: sqlite3.Connection, conversation_id: int) -> tuple[Any, ...]:
        row = db.execute(
            "SELECT id, state, agent, reason, top_probability, waiting_since, created_at,"
            " updated_at FROM conversations WHERE id = ?",
            (conversation_id,),
        ).fetchone()
        if row is None:
            raise ConversationNotFound(f"conversation {conversation_id} not found")
        return tuple(row)

    def _state(self, db: sqlite3.Connection, conversation_id: int) -> State:
        return State(self._conversation_row(db, conversation_id)[1])

    @staticmethod
    def _to_conversation(row: Any) -> Conversation:
        id_, state, agent, reason, top, waiting_since, created_at, updated_at = row
        return Conversation(
            id=id_,
            state=State(state),
            agent=agent,
            reason=None if reason is None else Reason(reason),
            top_probability=top,
            waiting_since=_time(waiting_since),
            created_at=_stamp(created_at),
            updated_at=_stamp(updated_at),
        )

    _MESSAGE_COLUMNS = (
        "id, conversation_id, author, text, agent, passage_id, passage_title, decision_id,"
        " feedback, created_at"
    )

    @staticmethod
    def _to_message(row: Any) -> ChatMessage:
        id_, conversation_id, author, text, agent, passage_id, title, decision_id, feedback, at = (
            row
        )
        return ChatMessage(
            id=id_,
            conversation_id=conversation_id,
            author=Author(author),
            text=text,
            agent=agent,
            passage_id=passage_id,
            passage_title=title,
            decision_id=decision_id,
            feedback=None if feedback is None else Feedback(feedback),
            created_at=_stamp(at),
        )

    def _insert_message(
        self,
        db: sqlite3.Connection,
        conversation_id: int,
        *,
        author: Author,
        text: str,
        agent: str | None = None,
        passage_id: str | None = None,
        passage_title: str | None = None,
        decision_id: int | None = None,
    ) -> int:
        now = self._now()
        cursor = db.execute(
            "INSERT INTO messages (conversation_id, author, text, agent, passage_id, passage_title,"
            " decision_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (conversation_id, author.value, text, agent, passage_id, passage_title, decision_id,
             now),
        )  # fmt: skip
        db.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", (now, conversation_id))
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def _message(self, message_id: int) -> ChatMessage:
        row = self._db.execute(
            f"SELECT {self._MESSAGE_COLUMNS} FROM messages WHERE id = ?", (message_id,)
        ).fetchone()
        if row is None:
            raise StoreError(f"message {message_id} not found")
        return self._to_message(row)

    def _escalate(
        self,
        db: sqlite3.Connection,
        conversation_id: int,
        *,
        reason: Reason,
        question: str | None,
        top_probability: float | None,
        notice: str,
    ) -> None:
        """Put a conversation in the queue and remember the question as a content gap."""
        now = self._now()
        (last_message,) = db.execute(
            "SELECT coalesce(max(id), 0) FROM messages WHERE conversation_id = ?",
            (conversation_id,),
        ).fetchone()
        db.execute(
            "UPDATE conversations SET state = 'waiting', agent = NULL, reason = ?,"
            " top_probability = ?, waiting_since = ?, updated_at = ? WHERE id = ?",
            (reason.value, top_probability, now, now, conversation_id),
        )
        if question:
            db.execute(
                "INSERT INTO escalations (conversation_id, question, reason, top_probability,"
                " after_message_id, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (conversation_id, question, reason.value, top_probability, last_message, now),
            )
        self._insert_message(db, conversation_id, author=Author.SYSTEM, text=notice)

    # -- the customer's side ----------------------------------------------------------------------

    def start_conversation(self) -> Conversation:
        """A new conversation, answered by the bot."""
        now = self._now()
        with self._write() as db:
            cursor = db.execute(
                "INSERT INTO conversations (state, created_at, updated_at) VALUES ('bot', ?, ?)",
                (now, now),
            )
            assert cursor.lastrowid is not None
            return self._to_conversation(self._conversation_row(db, cursor.lastrowid))

    def add_customer_message(self, conversation_id: int, text: str) -> ChatMessage:
        """Commit what the customer wrote, before anything that can fail looks at it.

        A resolved conversation goes back to the bot: the customer is asking something new.
        """
        with self._write() as db:
            self._conversation_row(db, conversation_id)
            db.execute(
                "UPDATE conversations SET state = 'bot', agent = NULL"
                " WHERE id = ? AND state = 'resolved'",
                (conversation_id,),
            )
            message_id = self._insert_message(
                db, conversation_id, author=Author.CUSTOMER, text=text
            )
        return self._message(message_id)

    def record_decision(
        self, conversation_id: int, *, message_id: int, decision: Decision
    ) -> StoredDecision:
        """Keep the engine's decision and act on it, in one transaction.

        Only while the bot still owns the conversation does the decision become a bot answer or an
        escalation; if the customer asked for a person meanwhile, it is kept for the agent alone.
        """
        now = self._now()
        with self._write() as db:
            state = self._state(db, conversation_id)
            cursor = db.execute(
                "INSERT INTO decisions (conversation_id, message_id, answer_id, reason,"
                " top_probability, latency_ms, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    conversation_id,
                    message_id,
                    None if decision.answer is None else decision.answer.id,
                    None if decision.reason is None else decision.reason.value,
                    decision.top_probability,
                    decision.latency_ms,
                    decision.model_dump_json(),
                    now,
                ),
            )
            assert cursor.lastrowid is not None
            decision_id = cursor.lastrowid
            if state is State.BOT:
                if decision.answer is not None:
                    self._insert_message(
                        db,
                        conversation_id,
                        author=Author.BOT,
                        text=decision.answer.text,
                        passage_id=decision.answer.id,
                        passage_title=decision.answer.title or None,
                        decision_id=decision_id,
                    )
                else:
                    assert decision.reason is not None
                    self._escalate(
                        db,
                        conversation_id,
                        reason=decision.reason,
                        question=decision.question,
                        top_probability=decision.top_probability,
                        notice=ESCALATED_NOTICE,
                    )
        return StoredDecision(
            id=decision_id,
            conversation_id=conversation_id,
            message_id=message_id,
            created_at=_stamp(now),
            decision=decision,
        )

    def escalate(self, conversation_id: int, *, reason: Reason = Reason.CUSTOMER_ASKED) -> bool:
        """Hand the conversation to a person ("talk to a person"); False if one already has it.

        The customer's latest question becomes the content gap, with its decision's top score.
        """
        with self._write() as db:
            state = self._state(db, conversation_id)
            if state in (State.WAITING, State.CLAIMED):
                return False
            question, top = self._latest_question(db, conversation_id)
            self._escalate(
                db,
                conversation_id,
                reason=reason,
                question=question,
                top_probability=top,
                notice=ASKED_NOTICE,
            )
            return True

    @staticmethod
    def _latest_question(
        db: sqlite3.Connection, conversation_id: int
    ) -> tuple[str | None, float | None]:
        row = db.execute(
            "SELECT m.text, d.top_probability FROM messages m"
            " LEFT JOIN decisions d ON d.message_id = m.id"
            " WHERE m.conversation_id = ? AND m.author = 'customer'"
            " ORDER BY m.id DESC, d.id DESC LIMIT 1",
            (conversation_id,),
        ).fetchone()
        return (None, None) if row is None else (row[0], row[1])

    def set_feedback(self, message_id: int, feedback: Feedback) -> Conversation:
        """Record the customer's verdict on a bot answer; "not helpful" hands it to a person."""
        with self._write() as db:
            row = db.execute(
                "SELECT m.conversation_id, d.body FROM messages m"
                " LEFT JOIN decisions d ON d.id = m.decision_id"
                " WHERE m.id = ? AND m.author = 'bot'",
                (message_id,),
            ).fetchone()
            if row is None:
                raise StoreError(f"message {message_id} is not a bot answer")
            conversation_id, body = row
            db.execute(
                "UPDATE messages SET feedback = ? WHERE id = ?", (feedback.value, message_id)
            )
            state = self._state(db, conversation_id)
            if feedback is Feedback.NOT_HELPFUL and state in (State.BOT, State.RESOLVED):
                decision = None if body is None else Decision.model_validate_json(body)
                self._escalate(
                    db,
                    conversation_id,
                    reason=Reason.CUSTOMER_ASKED,
                    question=None if decision is None else decision.question,
                    top_probability=None if decision is None else decision.top_probability,
                    notice=ASKED_NOTICE,
                )
            return self._to_conversation(self._conversation_row(db, conversation_id))

    # -- the agent's side -------------------------------------------------------------------------

    def claim(self, conversation_id: int, *, agent: str) -> ClaimResult:
        """Take a waiting conversation. One conditional UPDATE decides, so only one agent wins."""
        with self._write() as db:
            cursor = db.execute(
                "UPDATE conversations SET state = 'claimed', agent = ?, updated_at = ?"
                " WHERE id = ? AND state = 'waiting'",
                (agent, self._now(), conversation_id),
            )
            won = cursor.rowcount == 1
            if won:
                self._insert_message(
                    db,
                    conversation_id,
                    author=Author.SYSTEM,
                    text=f"{agent} joined the conversation.",
                )
            conversation = self._to_conversation(self._conversation_row(db, conversation_id))
        return ClaimResult(won=won, conversation=conversation)

    def _require_owner(self, db: sqlite3.Connection, conversation_id: int, agent: str) -> None:
        conversation = self._to_conversation(self._conversation_row(db, conversation_id))
        if conversation.state is not State.CLAIMED:
            raise ConflictError(
                f"conversation {conversation_id} is {conversation.state.value}; claim it first"
            )
        if conversation.agent != agent:
            raise ConflictError(
                f"conversation {conversation_id} is claimed by {conversation.agent}"
            )

    def reply(
        self, conversation_id: int, *, agent: str, text: str, passage: Passage | None = None
    ) -> ChatMessage:
        """An agent's reply (or a knowledge-base passage sent as one) to the customer."""
        with self._write() as db:
            self._require_owner(db, conversation_id, agent)
            message_id = self._insert_message(
                db,
                conversation_id,
                author=Author.AGENT,
                text=text,
                agent=agent,
                passage_id=None if passage is None else passage.id,
                passage_title=None if passage is None else (passage.title or None),
            )
        return self._message(message_id)

    def resolve(self, conversation_id: int, *, agent: str) -> Conversation:
        """Close a conversation the agent owns (the agent stays on record as who closed it)."""
        return self._release(
            conversation_id,
            agent=agent,
            assignments="state = 'resolved'",
            note=f"{agent} marked this resolved. Write again any time.",
        )

    def hand_back(self, conversation_id: int, *, agent: str) -> Conversation:
        """Give a conversation the agent owns back to the bot."""
        return self._release(
            conversation_id,
            agent=agent,
            assignments="state = 'bot', agent = NULL",
            note=f"{agent} handed the conversation back to the bot.",
        )

    def _release(
        self, conversation_id: int, *, agent: str, assignments: str, note: str
    ) -> Conversation:
        """The owner lets go of a conversation: new state, and a note both sides see."""
        with self._write() as db:
            self._require_owner(db, conversation_id, agent)
            db.execute(
                f"UPDATE conversations SET {assignments}, waiting_since = NULL WHERE id = ?",
                (conversation_id,),
            )
            self._insert_message(db, conversation_id, author=Author.SYSTEM, text=note)
            return self._to_conversation(self._conversation_row(db, conversation_id))

    # -- reading ----------------------------------------------------------------------------------

    def conversation(self, conversation_id: int) -> Conversation:
        return self._to_conversation(self._conversation_row(self._db, conversation_id))

    def messages(self, conversation_id: int, *, after_id: int = 0) -> list[ChatMessage]:
        """The transcript in order; `after_id` fetches only what is new since the last look."""
        rows = self._db.execute(
            f"SELECT {self._MESSAGE_COLUMNS} FROM messages"
            " WHERE conversation_id = ? AND id > ? ORDER BY id",
            (conversation_id, after_id),
        ).fetchall()
        return [self._to_message(row) for row in rows]

    def decisions(self, conversation_id: int) -> list[StoredDecision]:
        """Every decision the engine made in the conversation, oldest first."""
        rows = self._db.execute(
            "SELECT id, conversation_id, message_id, created_at, body FROM decisions"
            " WHERE conversation_id = ? ORDER BY id",
            (conversation_id,),
        ).fetchall()
        return [self._to_decision(row) for row in rows]

    def latest_decision(self, conversation_id: int) -> StoredDecision | None:
        """The newest decision alone: what the agent console shows, without parsing the rest."""
        row = self._db.execute(
            "SELECT id, conversation_id, message_id, created_at, body FROM decisions"
            " WHERE conversation_id = ? ORDER BY id DESC LIMIT 1",
            (conversation_id,),
        ).fetchone()
        return None if row is None else self._to_decision(row)

    @staticmethod
    def _to_decision(row: Any) -> StoredDecision:
        id_, conversation_id, message_id, at, body = row
        return StoredDecision(
            id=id_,
            conversation_id=conversation_id,
            message_id=message_id,
            created_at=_stamp(at),
            decision=Decision.model_validate_json(body),
        )

    _QUEUE_COLUMNS = (
        "c.id, c.state, coalesce(c.waiting_since, c.updated_at), c.reason, c.top_probability,"
        " c.agent, (SELECT m.text FROM messages m WHERE m.conversation_id = c.id"
        "  AND m.author = 'customer' ORDER BY m.id LIMIT 1)"
    )

    def queue(self, *, agent: str | None = None) -> list[QueueItem]:
        """Conversations waiting for a person (longest wait first), then those `agent` owns.

        Other agents' claims are left out: they pile up, and every poll of the queue would read
        them all. Each part is one range of an index (migration 2), so a poll costs what is
        waiting and what this agent has, not what everyone ever claimed.
        """
        rows = self._db.execute(
            f"SELECT {self._QUEUE_COLUMNS} FROM conversations c"
            " WHERE c.state = 'waiting' ORDER BY c.waiting_since, c.id"
        ).fetchall()
        if agent is not None:
            rows += self._db.execute(
                f"SELECT {self._QUEUE_COLUMNS} FROM conversations c"
                " WHERE c.state = 'claimed' AND c.agent = ? ORDER BY c.waiting_since, c.id",
                (agent,),
            ).fetchall()
        return [
            QueueItem(
                conversation_id=id_,
                state=State(state),
                waiting_since=_stamp(since),
                reason=None if reason is None else Reason(reason),
                top_probability=top,
                agent=agent_,
                first_question=first or "",
            )
            for id_, state, since, reason, top, agent_, first in rows
        ]

    # -- content gaps, for the knowledge-base editor ----------------------------------------------

    def content_gaps(self, *, include_handled: bool = True, limit: int = 200) -> list[ContentGap]:
        """Escalated questions, newest first, with the agent's reply that followed, if any."""
        rows = self._db.execute(
            "SELECT e.id, e.conversation_id, e.question, e.reason, e.top_probability,"
            " e.created_at, e.handled_at, e.passage_id,"
            " (SELECT m.text FROM messages m WHERE m.conversation_id = e.conversation_id"
            "  AND m.author = 'agent' AND m.id > e.after_message_id ORDER BY m.id LIMIT 1)"
            " FROM escalations e WHERE (? OR e.handled_at IS NULL)"
            " ORDER BY e.created_at DESC, e.id DESC LIMIT ?",
            (include_handled, limit),
        ).fetchall()
        return [
            ContentGap(
                id=id_,
                conversation_id=conversation,
                question=question,
                reason=Reason(reason),
                top_probability=top,
                created_at=_stamp(at),
                handled=handled_at is not None,
                passage_id=passage_id,
                agent_reply=reply,
            )
            for id_, conversation, question, reason, top, at, handled_at, passage_id, reply in rows
        ]

    def mark_gap_handled(self, gap_id: int, *, passage_id: str) -> None:
        """Record that passage `passage_id` was written to fill this gap."""
        with self._write() as db:
            cursor = db.execute(
                "UPDATE escalations SET handled_at = ?, passage_id = ? WHERE id = ?",
                (self._now(), passage_id, gap_id),
            )
            if cursor.rowcount != 1:
                raise StoreError(f"content gap {gap_id} not found")
