"""The conversation store in one SQLite file (`ConversationStore`).

Every `helpdesk` process on a machine opens the same file in WAL mode, so readers never block the
one writer. Each write is one short `BEGIN IMMEDIATE` transaction; `busy_timeout` lets a second
writer wait its turn instead of failing. The file and its folder are private to the user.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from chatbot.desk.clock import Clock, utc_now
from chatbot.desk.models import (
    EVENT_DATA,
    Author,
    BotQuestion,
    Changes,
    ChatEvent,
    ChatMessage,
    Claimed,
    ClaimResult,
    ContentGap,
    Conversation,
    Decided,
    DecisionResult,
    Entry,
    Escalated,
    Escalation,
    EventData,
    EventType,
    Feedback,
    FeedbackGiven,
    Note,
    Outcome,
    PendingQuestion,
    QueueItem,
    SearchHit,
    State,
    StoredDecision,
)
from chatbot.desk.stats import STAT_THRESHOLDS, DeskStats
from chatbot.engine.models import Answer, Decision, Reason
from chatbot.files import make_private_folders, special_kind
from chatbot.store import codec, gaps_sql
from chatbot.store.interface import (
    ConversationNotFound,
    EmptySweep,
    ForeignDatabase,
    LeaseLost,
    NotTheLatestAnswer,
    StaleState,
    StoreError,
    UnseenMessage,
    same_reply,
    swept,
)
from chatbot.store.schema import MIGRATIONS, judgment_error_counts
from chatbot.store.stats_sql import WRITTEN, SQLiteDialect, compute_stats, question_key
from chatbot.text import has_number

BUSY_TIMEOUT_MS = 5000
_LOCALE = (
    "SELECT json_extract(l.params, '$.locale') FROM entries l"
    " WHERE l.conversation_id = {conversation} AND l.event = 'locale-set'"
    " AND l.event <> 'decided'"
    " ORDER BY l.id DESC LIMIT 1"
)
"""A conversation's language: its latest `locale-set` event, one probe of migration 6's index
of each conversation's events by kind (entries_by_conversation_event)."""
FEED_POLL_S = 0.05
"""How often a change feed asks SQLite whether anyone committed: one cheap PRAGMA."""


def _escalated_params(event: Escalated) -> str:
    """An `escalated` event's parameters as migration 7 stores them: a JSON array of its reason,
    top probability and question, a third of the JSON object (which is what any other event
    keeps, and what one this cannot hold exactly falls back to)."""
    params = json.dumps(
        [event.reason.value, event.top_probability, event.question_entry], separators=(",", ":")
    )
    reason, top, question = json.loads(params)
    same = Escalated(reason=reason, top_probability=top, question_entry=question) == event
    return params if same else event.model_dump_json()


def _time(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, UTC)


def _stamp(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


def _marks(count: int) -> str:
    return ", ".join("?" * count)


WRITTEN_SQL = WRITTEN
"""A conversation `c` with a log entry (as the figures count them)."""
EMPTY_SQL = f"NOT {WRITTEN_SQL}"
"""A conversation `c` with no log entry: nobody wrote in it. A question, a decision and an
escalation each come with an entry in the same transaction, so none of those exists either."""
EMPTY_CHILDREN = (
    ("typing", "conversation_id"),
    ("read_markers", "conversation_id"),
    ("conversations", "id"),
)
"""What is deleted with an empty conversation, children first: rows that may name one with no
entry (an agent's read marker, a typing signal), then the conversation."""


def _casefold(text: str | None) -> str | None:
    """SQLite's own lower() folds ASCII alone; search ignores case in every script."""
    return None if text is None else text.casefold()


def _private_file(path: Path) -> None:
    """Create the database file and its missing folders readable by this user alone, whatever the
    umask. SQLite gives the `-wal` and `-shm` files the database file's permissions."""
    try:
        make_private_folders(path.parent)
    except OSError as error:
        reason = error.strerror or str(error)
        folder = error.filename or path.parent
        raise StoreError(f"{path}: cannot create folder {folder}: {reason}") from None
    if not path.parent.is_dir():
        raise StoreError(f"{path}: cannot create folder {path.parent}: a file is in the way")
    try:
        descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    except OSError as error:
        raise StoreError(f"{path}: cannot create database: {error.strerror or error}") from None
    try:
        os.fchmod(descriptor, 0o600)
    finally:
        os.close(descriptor)


def _connect(path: Path, *, thread_safe: bool = False, create: bool = True) -> sqlite3.Connection:
    """A connection to `path`; without `create`, read-only (see `read_only`), and a missing file
    is an error, never made."""
    if not create:
        return read_only(path, thread_safe=thread_safe)
    try:
        connection = sqlite3.connect(
            path,
            isolation_level=None,
            timeout=BUSY_TIMEOUT_MS / 1000,
            check_same_thread=not thread_safe,
        )
    except sqlite3.Error as error:
        raise StoreError(f"{path}: cannot open database: {error}") from None
    return connection


def read_only(path: Path, *, thread_safe: bool = False) -> sqlite3.Connection:
    """A connection that can only read `path`, for the commands that only read: they work on a
    backup, a read-only mount or a folder this user cannot write.

    A database in WAL mode is read through its `-shm` file, which SQLite makes beside it: in a
    folder it cannot write, even a read-only connection failed with "attempt to write a readonly
    database". With no `-wal` file there (no writer has it open, and the last one to close folded
    the log into the file), everything is in the file itself: it is then opened `immutable`,
    which needs neither. With a `-wal` file, the file alone may be behind: the error stands."""
    uri = path.resolve().as_uri()

    def connect(options: str) -> sqlite3.Connection:
        connection = sqlite3.connect(
            f"{uri}?{options}",
            uri=True,
            isolation_level=None,
            timeout=BUSY_TIMEOUT_MS / 1000,
            check_same_thread=not thread_safe,
        )
        try:
            # SQLite opens lazily: this first read is where a missing `-shm` fails.
            connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error:
            connection.close()
            raise
        return connection

    try:
        try:
            return connect("mode=ro")
        except sqlite3.OperationalError as error:
            if error.sqlite_errorcode & 0xFF not in _NO_SHM or _logged(path) or not path.is_file():
                raise
            return connect("mode=ro&immutable=1")
    except sqlite3.Error as error:
        # "Not a database", a `-wal` beside it that cannot be read without its `-shm`.
        raise StoreError(f"{path}: cannot read database: {_read_problem(path, error)}") from None


_NO_SHM = (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN)
"""How SQLite fails to read a database in WAL mode when it cannot make the `-shm` file beside it:
"attempt to write a readonly database" (no `-wal` either) or "unable to open database file"."""


def _logged(path: Path) -> bool:
    """Whether a write-ahead log beside `path` may hold changes the file itself lacks: an empty
    one (left by a writer that folded it in) holds none."""
    try:
        return Path(f"{path}-wal").stat().st_size > 0
    except FileNotFoundError:
        return False
    except OSError:
        return True


def _read_problem(path: Path, error: sqlite3.Error) -> str:
    """SQLite's reason a read failed, in words that never say a reader wrote: "attempt to write a
    readonly database" is its way of saying it could not make the `-shm` file beside it."""
    code = getattr(error, "sqlite_errorcode", 0) & 0xFF
    if code in _NO_SHM and _logged(path) and not Path(f"{path}-shm").exists():
        return (
            f"its write-ahead log ({path.name}-wal) holds changes, which are read through a "
            f"shared-memory file ({path.name}-shm) that its folder does not let this user make; "
            "read it as a user who can write the folder, or from a copy of both files"
        )
    return str(error)


HELPDESK_TABLE = "conversations"
"""The table every version of the help desk's schema has: a file without it is not ours."""
HELPDESK_SIGNATURE = "state in ('bot', 'waiting', 'claimed', 'resolved')"
"""What that table's definition has said since the first version (later ones only add columns):
`conversations` is a common name, and another application's may have our column names too
(`id`, `state`, `agent`, `created_at`); its states are ours alone."""


def other_tables(db: sqlite3.Connection) -> list[str]:
    """The tables of a database that holds some and none of the help desk's (another
    application's file, named by mistake); empty for ours or an empty one. Its `user_version`
    says nothing: other applications number their schemas too."""
    tables = dict(
        db.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table'"
            " AND name NOT LIKE 'sqlite!_%' ESCAPE '!' ORDER BY name"
        ).fetchall()
    )
    names = [str(name) for name in tables]
    definition = " ".join(str(tables.get(HELPDESK_TABLE) or "").lower().split())
    return [] if HELPDESK_SIGNATURE in definition else names


def stored_version(path: Path) -> int | None:
    """The help desk's schema version in the SQLite file at `path`, or None when it has no
    help-desk tables (an empty file); `ForeignDatabase` when it holds only others'. The file is
    opened read-only: nothing is created or changed (for the commands that only read)."""
    connection = read_only(path)
    try:
        if foreign := other_tables(connection):
            raise ForeignDatabase(str(path), foreign)
        (version,) = connection.execute("PRAGMA user_version").fetchone()
    except sqlite3.Error as error:  # "file is not a database"
        raise StoreError(f"{path}: cannot read database: {error}") from None
    finally:
        connection.close()
    return int(version) or None


def seen_until(last_seen: datetime | None) -> float | None:
    """The newest sighting a release for an agent who left allows: the one its caller watched
    go stale (a millisecond's slack for its timestamp's trip through a datetime). Shared with
    the PostgreSQL store."""
    return None if last_seen is None else last_seen.timestamp() + 0.001


def search_hit(
    row: tuple[int, str, str | None, float, int, str, str | None],
) -> SearchHit:
    """A `search` row as a hit: a note's text and agent come from its event's stored
    parameters (the last column, None for a message). Shared with the PostgreSQL store."""
    id_, state, agent, updated, entry, found, note_params = row
    note = None if note_params is None else Note.model_validate_json(note_params)
    return SearchHit(
        conversation_id=id_,
        state=State(state),
        agent=agent,
        updated_at=datetime.fromtimestamp(updated, UTC),
        entry_id=entry,
        text=found if note is None else note.text,
        note_by=None if note is None else note.agent,
    )


WAL_RETRY_S = 0.005
"""The pause between tries to switch a new database to WAL while another connection does."""


def _use_wal(connection: sqlite3.Connection) -> None:
    """Switch the database to write-ahead logging. Two connections switching a new file at the
    same moment make one fail at once with "database is locked": SQLite does not call the busy
    handler for the switch (processes starting together on a fresh database, 1 time in 15 with
    four threads). So the switch is retried for as long as the busy timeout, and skipped when
    another connection has made it meanwhile."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            connection.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if error.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY or time.monotonic() > deadline:
                raise
        (mode,) = connection.execute("PRAGMA journal_mode").fetchone()
        if str(mode).lower() == "wal":
            return
        time.sleep(WAL_RETRY_S)


class SQLiteChangeFeed:
    """Notices anyone's commit by polling `PRAGMA data_version` on a connection of its own (which
    never writes, so every commit it sees is someone else's)."""

    def __init__(self, path: Path) -> None:
        # Created on one thread, used on the watcher's: never two at once.
        self._db = _connect(path, thread_safe=True)
        self._version = self._data_version()

    def _data_version(self) -> int:
        (version,) = self._db.execute("PRAGMA data_version").fetchone()
        return int(version)

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            try:
                version = self._data_version()
            except sqlite3.Error as error:
                raise StoreError(f"cannot watch the database: {error}") from None
            if version != self._version:
                self._version = version
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            time.sleep(min(FEED_POLL_S, remaining))

    def close(self) -> None:
        self._db.close()


def _not_a_file(path: Path) -> str | None:
    """What `path` is when it exists and is not a regular file: SQLite on a FIFO or a device
    said only "disk I/O error"."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None  # Missing (it is made), or unreadable: opening it says why.
    return None if stat.S_ISREG(mode) else special_kind(mode)


class SQLiteStore:
    """The conversation store over one SQLite file. One instance per thread."""

    def __init__(self, connection: sqlite3.Connection, *, path: Path, clock: Clock) -> None:
        self._db = connection
        self.path = path
        self._clock = clock

    # -- opening ----------------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path, *, clock: Clock = utc_now, migrate: bool = True) -> SQLiteStore:
        """Open (creating it, private, with its folders if needed) and migrate the database.

        `migrate=False` is for the commands that only read: the file must exist and is left as
        it is, at the schema version it has (`schema_version`; one newer than this code is still
        refused). Upgrading is for the processes that write: a newer host's `doctor` migrating a
        database that older hosts still use would lock them out."""
        path = Path(path).expanduser()
        kind = _not_a_file(path)
        if kind is not None:
            raise StoreError(f"{path}: is {kind}, expected a database file")
        if migrate:
            _private_file(path)
        connection = _connect(path, create=migrate)
        store = cls(connection, path=path, clock=clock)
        try:
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            # First: even the switch to WAL is a change written to another application's file.
            store._refuse_foreign(connection)
            if migrate:  # A reader leaves the journal mode as it is; the file's own makes it WAL.
                _use_wal(connection)
            connection.execute("PRAGMA synchronous = NORMAL")
            connection.execute("PRAGMA foreign_keys = ON")
            connection.create_function("casefold", 1, _casefold, deterministic=True)
            connection.create_function("has_number", 2, has_number, deterministic=True)
            # The figures' and the content gaps' comparison of questions (`SQLiteDialect`).
            connection.create_function("question_key", 1, question_key, deterministic=True)
            if migrate:
                store._migrate()
            else:
                store._refuse_newer(store.schema_version)
        except sqlite3.Error as error:
            connection.close()
            raise StoreError(f"{path}: cannot use database: {error}") from None
        except StoreError:
            connection.close()
            raise
        return store

    def _migrate(self) -> None:
        (version,) = self._db.execute("PRAGMA user_version").fetchone()
        if version == len(MIGRATIONS):
            return
        with self._write() as db:
            # Re-read inside the write lock: another process may have migrated meanwhile.
            (version,) = db.execute("PRAGMA user_version").fetchone()
            self._refuse_newer(version)
            for number, migration in enumerate(MIGRATIONS[version:], start=version + 1):
                if callable(migration):
                    migration(db)
                else:
                    for statement in migration:
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {number}")

    def _refuse_foreign(self, db: sqlite3.Connection) -> None:
        """Refuse another application's file: the help desk's tables made beside its own would
        mix two applications' data in one file, and a migration of ours would run on its tables
        by their version number."""
        if foreign := other_tables(db):
            raise ForeignDatabase(str(self.path), foreign)

    def _refuse_newer(self, version: int) -> None:
        if version > len(MIGRATIONS):
            raise StoreError(
                f"{self.path}: database schema version {version} is newer than this helpdesk "
                f"understands ({len(MIGRATIONS)}); upgrade helpdesk"
            )

    def close(self) -> None:
        self._db.close()

    def now(self) -> datetime:
        return self._clock()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        version: int = self._db.execute("PRAGMA user_version").fetchone()[0]
        return version

    def open_feed(self) -> SQLiteChangeFeed:
        return SQLiteChangeFeed(self.path)

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

    def _rollback(self) -> None:
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")

    def _now(self) -> float:
        return self._clock().timestamp()

    _CONVERSATION = (
        "SELECT c.id, c.state, c.agent, c.reason, c.top_probability, c.waiting_since,"
        " c.claimed_at, c.question_entry, c.created_at, c.updated_at,"
        " (SELECT count(*) FROM questions q WHERE q.conversation_id = c.id),"
        " (SELECT coalesce(max(e.id), 0) FROM entries e WHERE e.conversation_id = c.id),"
        f" ({_LOCALE.format(conversation='c.id')})"
        " FROM conversations c"
    )

    @staticmethod
    def _to_conversation(row: Any) -> Conversation:
        (id_, state, agent, reason, top, waiting_since, claimed_at, question, created_at,
         updated_at, pending, last, locale) = row  # fmt: skip
        return Conversation(
            id=id_,
            state=State(state),
            agent=agent,
            reason=None if reason is None else Reason(reason),
            top_probability=top,
            waiting_since=_time(waiting_since),
            claimed_at=_time(claimed_at),
            question_entry=question,
            created_at=_stamp(created_at),
            updated_at=_stamp(updated_at),
            pending=pending,
            last_entry=last,
            locale=locale,
        )

    def _conversation(self, db: sqlite3.Connection, conversation_id: int) -> Conversation:
        row = db.execute(f"{self._CONVERSATION} WHERE c.id = ?", (conversation_id,)).fetchone()
        if row is None:
            raise ConversationNotFound(f"conversation {conversation_id} not found")
        return self._to_conversation(row)

    def _require(
        self,
        db: sqlite3.Connection,
        conversation_id: int,
        expect: State,
        *,
        agent: str | None = None,
    ) -> None:
        """The conditional part of a write: the state (and owner) the service decided on."""
        row = db.execute(
            "SELECT state, agent FROM conversations WHERE id = ?", (conversation_id,)
        ).fetchone()
        if row is None:
            raise ConversationNotFound(f"conversation {conversation_id} not found")
        state, owner = State(row[0]), row[1]
        if state is not expect:
            raise StaleState(f"conversation {conversation_id} is {state.value} now")
        if agent is not None and owner != agent:
            raise StaleState(f"conversation {conversation_id} is claimed by {owner} now")

    _ENTRY = (
        "SELECT e.id, e.conversation_id, e.author, e.event, coalesce(e.text, t.text), e.agent,"
        " e.passage_id, coalesce(e.passage_title, nullif(r.title, '')), e.decision_id,"
        " e.feedback, e.params, e.created_at,"
        " q.entry_id IS NOT NULL,"
        " (SELECT d.message_id FROM decisions d WHERE d.id = e.decision_id AND e.event = 'decided')"
        " FROM entries e LEFT JOIN passage_revisions r ON r.id = e.revision"
        " LEFT JOIN passage_texts t ON t.digest = coalesce(e.text_digest, r.digest)"
        " LEFT JOIN questions q ON q.entry_id = e.id"
    )

    @staticmethod
    def _to_entry(row: Any) -> ChatMessage | ChatEvent:
        (id_, conversation_id, author, event, text, agent, passage_id, title, decision_id,
         feedback, params, at, pending, decided_question) = row  # fmt: skip
        if event is not None:
            data: EventData
            if event == EventType.DECIDED.value and not params.startswith("{"):
                # Migration 7's `decided` row: its outcome in `params`, the rest in columns.
                data = Decided(
                    decision=decision_id, question_entry=decided_question, outcome=params
                )
            elif event == EventType.ESCALATED.value and params.startswith("["):
                reason, top, question = json.loads(params)
                data = Escalated(reason=reason, top_probability=top, question_entry=question)
            else:
                data = EVENT_DATA.validate_json(params)
            return ChatEvent(
                id=id_, conversation_id=conversation_id, created_at=_stamp(at), event=data
            )
        return ChatMessage(
            id=id_,
            conversation_id=conversation_id,
            created_at=_stamp(at),
            author=Author(author),
            text=text,
            agent=agent,
            passage_id=passage_id,
            passage_title=title,
            decision_id=decision_id,
            feedback=None if feedback is None else Feedback(feedback),
            pending=bool(pending),
        )

    def _message(self, db: sqlite3.Connection, entry_id: int) -> ChatMessage:
        row = db.execute(f"{self._ENTRY} WHERE e.id = ?", (entry_id,)).fetchone()
        entry = None if row is None else self._to_entry(row)
        if not isinstance(entry, ChatMessage):
            raise StoreError(f"message {entry_id} not found")
        return entry

    def _append(
        self,
        db: sqlite3.Connection,
        conversation_id: int,
        *,
        author: Author | None = None,
        event: EventData | None = None,
        text: str | None = None,
        agent: str | None = None,
        passage_id: str | None = None,
        passage_title: str | None = None,
        decision_id: int | None = None,
        revision: int | None = None,
    ) -> int:
        """Append a message or an event to the log; a quoted passage's text is kept once (a bot
        answer names its passage `revision`, which has the text and the title)."""
        now = self._now()
        key = None
        if revision is not None:
            text = passage_title = None
        elif passage_id is not None and text is not None:
            key = codec.digest(text)
            db.execute("INSERT OR IGNORE INTO passage_texts VALUES (?, ?)", (key, text))
            text = None
        params = None if event is None else event.model_dump_json()
        if isinstance(event, Decided):  # Its decision in `decision_id`, its outcome in `params`.
            decision_id, params = event.decision, event.outcome
        elif isinstance(event, Escalated):
            params = _escalated_params(event)
        # `revision` named only when set: the rest of the row is as every version stores it.
        cursor = db.execute(
            "INSERT INTO entries (conversation_id, author, event, text, text_digest, agent,"
            " passage_id, passage_title, decision_id, params, created_at"
            f"{'' if revision is None else ', revision'})"
            f" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?{'' if revision is None else ', ?'})",
            (
                conversation_id,
                None if author is None else author.value,
                None if event is None else event.type.value,
                text,
                key,
                agent,
                passage_id,
                passage_title,
                decision_id,
                params,
                now,
                *(() if revision is None else (revision,)),
            ),
        )
        db.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", (now, conversation_id))
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def _escalate(
        self, db: sqlite3.Connection, conversation_id: int, escalation: Escalation
    ) -> None:
        """Into the queue, with its event, and the question as a content gap."""
        now = self._now()
        (last_entry,) = db.execute(
            "SELECT coalesce(max(id), 0) FROM entries WHERE conversation_id = ?",
            (conversation_id,),
        ).fetchone()
        db.execute(
            "UPDATE conversations SET state = 'waiting', agent = NULL, claimed_at = NULL,"
            " reason = ?, top_probability = ?, waiting_since = ?, question_entry = ?,"
            " updated_at = ? WHERE id = ?",
            (escalation.reason.value, escalation.top_probability, now,
             escalation.question_entry, now, conversation_id),
        )  # fmt: skip
        if escalation.question:
            # The question by reference to its message when that is what it says.
            question: str | None = escalation.question
            if escalation.question_entry is not None:
                said = db.execute(
                    "SELECT text FROM entries WHERE id = ?", (escalation.question_entry,)
                ).fetchone()
                if said is not None and said[0] == question:
                    question = None
            db.execute(
                "INSERT INTO escalations (conversation_id, question, question_entry, reason,"
                " top_probability, after_message_id, created_at, question_key)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (conversation_id, question, escalation.question_entry, escalation.reason.value,
                 escalation.top_probability, last_entry, now, question_key(escalation.question)),
            )  # fmt: skip
        self._append(db, conversation_id, event=escalation.event())

    # -- the customer's side ----------------------------------------------------------------------

    def create_conversation(self) -> Conversation:
        with self._write() as db:
            return self._conversation(db, self._create(db, State.BOT))

    def _create(self, db: sqlite3.Connection, expect: State) -> int:
        """A new conversation, with the bot: what a write on a conversation not yet made expects."""
        if expect is not State.BOT:
            raise StaleState(f"a new conversation is with the bot, not {expect.value}")
        now = self._now()
        cursor = db.execute(
            "INSERT INTO conversations (state, created_at, updated_at) VALUES ('bot', ?, ?)",
            (now, now),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def keep_conversations(self, conversation_ids: Sequence[int]) -> int:
        # Read first: a write would take the database's one write lock (and wake every change
        # feed) for the common case, a conversation written in long ago.
        ids = list(dict.fromkeys(conversation_ids))
        empty = (
            self._in_chunks(
                f"SELECT c.id FROM conversations c WHERE c.id IN ({{}}) AND {EMPTY_SQL}", ids
            )
            if ids
            else []
        )
        if not empty:
            return 0
        with self._write() as db:
            now = self._now()
            kept = 0
            for (conversation_id,) in empty:
                kept += db.execute(
                    f"UPDATE conversations AS c SET updated_at = max(c.updated_at, ?)"
                    f" WHERE c.id = ? AND {EMPTY_SQL}",
                    (now, conversation_id),
                ).rowcount
        return kept

    def prune_empty_conversations(
        self, *, idle_s: float, after_id: int = 0, limit: int = 1000
    ) -> EmptySweep:
        cut = self._now() - idle_s
        # Read without the write lock: almost every conversation read was written in.
        rows = [
            (int(id_), bool(old), bool(used))
            for id_, old, used in self._db.execute(
                f"SELECT c.id, c.created_at < :cut, {WRITTEN_SQL}"
                " FROM conversations c WHERE c.id > :after ORDER BY c.id LIMIT :limit",
                {"cut": cut, "after": after_id, "limit": limit},
            ).fetchall()
        ]
        doomed = [id_ for id_, old, used in rows if old and not used]
        deleted: list[int] = []
        if doomed:
            with self._write() as db:
                # Again under the lock: written in or kept meanwhile, it stays. Never the newest,
                # whose id SQLite would give the next conversation.
                deleted = [
                    int(id_)
                    for (id_,) in db.execute(
                        f"SELECT c.id FROM conversations c WHERE c.id IN ({_marks(len(doomed))})"
                        f" AND c.updated_at < ? AND {EMPTY_SQL}"
                        " AND c.id < (SELECT max(id) FROM conversations)",
                        [*doomed, cut],
                    ).fetchall()
                ]
                if deleted:
                    marks = _marks(len(deleted))
                    for table, column in EMPTY_CHILDREN:
                        db.execute(f"DELETE FROM {table} WHERE {column} IN ({marks})", deleted)
        return swept(rows, deleted, after_id=after_id, limit=limit)

    def add_customer_message(
        self,
        conversation_id: int | None,
        text: str,
        *,
        expect: State,
        to: State,
        pending: bool,
        events: Sequence[EventData] = (),
        then: Sequence[EventData] = (),
        escalation: Escalation | None = None,
        as_question: bool = True,
    ) -> tuple[Conversation, ChatMessage]:
        with self._write() as db:
            if conversation_id is None:
                conversation_id = self._create(db, expect)
            else:
                self._require(db, conversation_id, expect)
            if to is not expect:
                clear = ", agent = NULL, claimed_at = NULL" if to is State.BOT else ""
                db.execute(
                    f"UPDATE conversations SET state = ?, waiting_since = NULL{clear} WHERE id = ?",
                    (to.value, conversation_id),
                )
            for event in events:
                self._append(db, conversation_id, event=event)
            entry = self._append(db, conversation_id, author=Author.CUSTOMER, text=text)
            for event in then:
                self._append(db, conversation_id, event=event)
            if pending:
                db.execute(
                    "INSERT INTO questions (entry_id, conversation_id) VALUES (?, ?)",
                    (entry, conversation_id),
                )
            elif to in (State.WAITING, State.CLAIMED):
                # Asked for a person before asking anything: this is the question they have.
                db.execute(
                    "UPDATE conversations SET question_entry = ?"
                    " WHERE id = ? AND question_entry IS NULL",
                    (entry, conversation_id),
                )
            if escalation is not None:
                if as_question:  # This message is the question the person takes.
                    escalation = escalation.model_copy(
                        update={"question_entry": entry, "question": text}
                    )
                self._escalate(db, conversation_id, escalation)
            return self._conversation(db, conversation_id), self._message(db, entry)

    def escalate(
        self, conversation_id: int | None, *, expect: State, escalation: Escalation
    ) -> Conversation:
        with self._write() as db:
            if conversation_id is None:
                conversation_id = self._create(db, expect)
            else:
                self._require(db, conversation_id, expect)
            self._escalate(db, conversation_id, escalation)
            return self._conversation(db, conversation_id)

    def record_feedback(
        self,
        conversation_id: int,
        *,
        entry_id: int,
        value: Feedback,
        expect: State,
        escalation: Escalation | None,
    ) -> tuple[Conversation, ChatMessage]:
        with self._write() as db:
            self._require(db, conversation_id, expect)
            latest = db.execute(
                "SELECT id, feedback FROM entries WHERE conversation_id = ? AND author = 'bot'"
                " ORDER BY id DESC LIMIT 1",
                (conversation_id,),
            ).fetchone()
            if latest is None or latest[0] != entry_id:
                raise NotTheLatestAnswer(
                    f"message {entry_id} is not the latest answer in conversation {conversation_id}"
                )
            if latest[1] is not None:
                raise NotTheLatestAnswer(f"the answer {entry_id} has feedback already")
            db.execute("UPDATE entries SET feedback = ? WHERE id = ?", (value.value, entry_id))
            self._append(db, conversation_id, event=FeedbackGiven(entry=entry_id, value=value))
            if escalation is not None:
                self._escalate(db, conversation_id, escalation)
            return self._conversation(db, conversation_id), self._message(db, entry_id)

    # -- the agent's side -------------------------------------------------------------------------

    def claim(self, conversation_id: int, *, agent: str, expect: State) -> ClaimResult:
        now = self._now()
        with self._write() as db:
            cursor = db.execute(
                "UPDATE conversations SET state = 'claimed', agent = ?, claimed_at = ?,"
                " updated_at = ? WHERE id = ? AND state = ?",
                (agent, now, now, conversation_id, expect.value),
            )
            won = cursor.rowcount == 1
            if won:
                self._append(db, conversation_id, event=Claimed(agent=agent))
            return ClaimResult(won=won, conversation=self._conversation(db, conversation_id))

    def reply(
        self,
        conversation_id: int,
        *,
        agent: str,
        expect: State,
        text: str,
        passage_id: str | None = None,
        passage_title: str | None = None,
    ) -> ChatMessage:
        with self._write() as db:
            self._require(db, conversation_id, expect, agent=agent)
            row = db.execute(
                f"{self._ENTRY} WHERE e.conversation_id = ? ORDER BY e.id DESC LIMIT 1",
                (conversation_id,),
            ).fetchone()
            latest = None if row is None else self._to_entry(row)
            now = self._now()
            said = same_reply(latest, agent=agent, text=text, passage_id=passage_id, now=now)
            if said is not None:  # Sent twice at once (two tabs): written once.
                return said
            entry = self._append(
                db,
                conversation_id,
                author=Author.AGENT,
                text=text,
                agent=agent,
                passage_id=passage_id,
                passage_title=passage_title,
            )
            return self._message(db, entry)

    def release(
        self,
        conversation_id: int,
        *,
        agent: str,
        expect: State,
        to: State,
        event: EventData,
        seen: bool = False,
        away_s: float | None = None,
        last_seen: datetime | None = None,
        question: BotQuestion | None = None,
    ) -> Conversation:
        assignments = {
            # Back in the queue at its old place: the customer has waited all along.
            State.WAITING: "agent = NULL, claimed_at = NULL,"
            " waiting_since = coalesce(waiting_since, updated_at)",
            State.BOT: "agent = NULL, claimed_at = NULL, waiting_since = NULL",
            State.RESOLVED: "waiting_since = NULL",
        }
        if to not in assignments:
            raise StoreError(f"cannot release a conversation to {to.value}")
        with self._write() as db:
            self._require(db, conversation_id, expect, agent=agent)
            if away_s is not None:
                self._require_away(
                    db, conversation_id, agent, self._now() - away_s, seen_until(last_seen)
                )
            if (
                seen
                and db.execute(
                    "SELECT 1 FROM entries e JOIN read_markers r"
                    " ON r.conversation_id = e.conversation_id AND r.agent = ?"
                    " WHERE e.conversation_id = ? AND e.author = 'customer' AND e.id > r.entry_id"
                    " LIMIT 1",
                    (agent, conversation_id),
                ).fetchone()
            ):
                raise UnseenMessage(
                    f"conversation {conversation_id} has a message {agent} has not read"
                )
            if (
                to is State.BOT
                and question is not None
                and db.execute(
                    "SELECT 1 FROM entries WHERE conversation_id = ? AND author = 'customer'"
                    " AND id > ? LIMIT 1",
                    (conversation_id, question.read_to),
                ).fetchone()
            ):
                # Written after the service read the log to choose: it was not considered.
                raise StaleState(f"the customer wrote again in conversation {conversation_id}")
            db.execute(
                f"UPDATE conversations SET state = ?, {assignments[to]} WHERE id = ?",
                (to.value, conversation_id),
            )
            self._append(db, conversation_id, event=event)
            if to is State.BOT and question is not None and question.entry is not None:
                # The question the service chose (the customer's latest since the last reply, a
                # real one), for the bot now: left to a person who handed back without replying,
                # it would wait for nobody. Judged already or not: a decision kept silent (a
                # person had it) was never said.
                db.execute(
                    "INSERT INTO questions (entry_id, conversation_id)"
                    " SELECT e.id, e.conversation_id FROM entries e"
                    " WHERE e.id = ? AND e.conversation_id = ? AND e.author = 'customer'"
                    " AND NOT EXISTS (SELECT 1 FROM questions q WHERE q.entry_id = e.id)",
                    (question.entry, conversation_id),
                )
            return self._conversation(db, conversation_id)

    def claimed_by(self, agent: str) -> list[int]:
        rows = self._db.execute(
            "SELECT id FROM conversations WHERE state = 'claimed' AND agent = ? ORDER BY id",
            (agent,),
        ).fetchall()
        return [row[0] for row in rows]

    def add_note(self, conversation_id: int, *, agent: str, text: str) -> ChatEvent:
        with self._write() as db:
            self._conversation(db, conversation_id)  # ConversationNotFound for an unknown id.
            entry = self._append(db, conversation_id, event=Note(agent=agent, text=text))
            row = db.execute(f"{self._ENTRY} WHERE e.id = ?", (entry,)).fetchone()
        event = self._to_entry(row)
        assert isinstance(event, ChatEvent)
        return event

    def add_event(self, conversation_id: int, event: EventData, *, expect: State) -> ChatEvent:
        with self._write() as db:
            self._require(db, conversation_id, expect)
            entry = self._append(db, conversation_id, event=event)
            row = db.execute(f"{self._ENTRY} WHERE e.id = ?", (entry,)).fetchone()
        added = self._to_entry(row)
        assert isinstance(added, ChatEvent)
        return added

    def agent_seen(
        self, agent: str, *, session: str | None = None, forget_s: float | None = None
    ) -> None:
        # A commit all the same, so every process's change feed (`PRAGMA data_version`) wakes:
        # SQLite tells a watcher that something changed, never what. Each wake costs a reader
        # one `changes` finding nothing, once per console every `PRESENCE_EVERY_S`.
        now = self._now()
        with self._write() as db:
            db.execute(
                "INSERT INTO presence (agent, last_seen) VALUES (?, ?)"
                " ON CONFLICT (agent) DO UPDATE SET last_seen = max(last_seen, excluded.last_seen)",
                (agent, now),
            )
            if session is not None:
                db.execute(
                    "INSERT INTO presence_sessions (agent, session, last_seen) VALUES (?, ?, ?)"
                    " ON CONFLICT (agent, session)"
                    " DO UPDATE SET last_seen = max(last_seen, excluded.last_seen)",
                    (agent, session, now),
                )
            if forget_s is not None:  # A few rows: one per console open lately.
                db.execute("DELETE FROM presence_sessions WHERE last_seen < ?", (now - forget_s,))

    def agents_seen(self) -> dict[str, datetime]:
        rows = self._db.execute("SELECT agent, last_seen FROM presence").fetchall()
        return {agent: _stamp(seen) for agent, seen in rows}

    def sessions_seen(self, agent: str) -> dict[str, datetime]:
        rows = self._db.execute(
            "SELECT session, last_seen FROM presence_sessions WHERE agent = ?", (agent,)
        ).fetchall()
        return {session: _stamp(seen) for session, seen in rows}

    def session_ended(self, agent: str, *, session: str) -> None:
        with self._write() as db:
            db.execute(
                "DELETE FROM presence_sessions WHERE agent = ? AND session = ?", (agent, session)
            )

    def away_claims(self, *, away_s: float) -> list[tuple[int, str]]:
        # One probe of conversations_claimed (agent, claimed_at) per agent ever seen: a handful.
        rows = self._db.execute(
            "SELECT c.id, c.agent FROM presence p JOIN conversations c"
            " ON c.agent = p.agent AND c.state = 'claimed'"
            " WHERE p.last_seen < :cut AND c.claimed_at < :cut ORDER BY c.id",
            {"cut": self._now() - away_s},
        ).fetchall()
        return [(int(id_), str(agent)) for id_, agent in rows]

    @staticmethod
    def _require_away(
        db: sqlite3.Connection, conversation_id: int, agent: str, cut: float, until: float | None
    ) -> None:
        """The conditional part of releasing for an agent who left: still away (and seen no later
        than `until`, the sighting the caller watched go stale), and the claim older than the
        time they count as away from."""
        seen_cut = cut if until is None else min(cut, until)
        row = db.execute(
            "SELECT 1 FROM presence p JOIN conversations c ON c.agent = p.agent"
            " WHERE c.id = ? AND p.agent = ? AND p.last_seen < ? AND c.claimed_at < ?",
            (conversation_id, agent, seen_cut, cut),
        ).fetchone()
        if row is None:
            raise StaleState(f"{agent} is back, or claimed conversation {conversation_id} since")

    def set_typing(self, conversation_id: int, *, author: Author, seconds: float | None) -> None:
        with self._write() as db:
            if (
                db.execute(
                    "SELECT 1 FROM conversations WHERE id = ?", (conversation_id,)
                ).fetchone()
                is None
            ):
                raise ConversationNotFound(f"conversation {conversation_id} not found")
            if seconds is None:
                db.execute(
                    "DELETE FROM typing WHERE conversation_id = ? AND author = ?",
                    (conversation_id, author.value),
                )
            else:
                db.execute(
                    "INSERT INTO typing (conversation_id, author, until) VALUES (?, ?, ?)"
                    " ON CONFLICT (conversation_id, author) DO UPDATE SET until = excluded.until",
                    (conversation_id, author.value, self._now() + seconds),
                )

    def typing(self, conversation_id: int) -> dict[Author, datetime]:
        rows = self._db.execute(
            "SELECT author, until FROM typing WHERE conversation_id = ? AND until > ?",
            (conversation_id, self._now()),
        ).fetchall()
        return {Author(author): datetime.fromtimestamp(until, UTC) for author, until in rows}

    def mark_read(self, conversation_id: int, *, agent: str, entry_id: int) -> None:
        with self._write() as db:
            self._conversation(db, conversation_id)
            db.execute(
                "INSERT INTO read_markers (conversation_id, agent, entry_id) VALUES (?, ?, ?)"
                " ON CONFLICT (conversation_id, agent)"
                " DO UPDATE SET entry_id = max(entry_id, excluded.entry_id)",
                (conversation_id, agent, entry_id),
            )

    # -- the bot's side ---------------------------------------------------------------------------

    def lease_questions(self, *, worker: str, limit: int, lease_s: float) -> list[PendingQuestion]:
        now = self._now()
        free = "lease_until IS NULL OR lease_until <= ?"
        # A read first: idle workers polling an empty queue never take the write lock.
        if self._db.execute(f"SELECT 1 FROM questions WHERE {free} LIMIT 1", (now,)).fetchone():
            with self._write() as db:
                taken = db.execute(
                    "UPDATE questions SET lease_owner = ?, lease_until = ?, attempts = attempts + 1"
                    f" WHERE entry_id IN (SELECT entry_id FROM questions WHERE {free}"
                    " ORDER BY entry_id LIMIT ?) RETURNING entry_id",
                    (worker, now + lease_s, now, limit),
                ).fetchall()
                return self._pending(db, [row[0] for row in taken])
        return []

    def _pending(self, db: sqlite3.Connection, ids: Sequence[int]) -> list[PendingQuestion]:
        rows = db.execute(
            "SELECT q.entry_id, q.conversation_id, e.text, e.created_at, q.attempts,"
            f" q.lease_owner, q.lease_until, ({_LOCALE.format(conversation='q.conversation_id')})"
            " FROM questions q JOIN entries e ON e.id = q.entry_id"
            f" WHERE q.entry_id IN ({_marks(len(ids))}) ORDER BY q.entry_id",
            list(ids),
        ).fetchall()
        return [
            PendingQuestion(
                id=id_,
                conversation_id=conversation,
                text=text,
                asked_at=_stamp(at),
                attempts=attempts,
                lease_owner=owner,
                lease_until=_time(until),
                locale=locale,
            )
            for id_, conversation, text, at, attempts, owner, until, locale in rows
        ]

    def extend_leases(
        self, *, worker: str, question_ids: Sequence[int], lease_s: float
    ) -> list[int]:
        if not question_ids:
            return []
        with self._write() as db:
            rows = db.execute(
                "UPDATE questions SET lease_until = ? WHERE lease_owner = ?"
                f" AND entry_id IN ({_marks(len(question_ids))}) RETURNING entry_id",
                [self._now() + lease_s, worker, *question_ids],
            ).fetchall()
        return sorted(row[0] for row in rows)

    def release_leases(self, *, worker: str, question_ids: Sequence[int]) -> int:
        if not question_ids:
            return 0
        with self._write() as db:
            cursor = db.execute(
                "UPDATE questions SET lease_owner = NULL, lease_until = NULL,"
                " attempts = max(attempts - 1, 0) WHERE lease_owner = ?"
                f" AND entry_id IN ({_marks(len(question_ids))})",
                [worker, *question_ids],
            )
            return cursor.rowcount

    def next_lease_expiry(self) -> float | None:
        (until,) = self._db.execute(
            "SELECT min(lease_until) FROM questions WHERE lease_until IS NOT NULL"
        ).fetchone()
        return None if until is None else max(0.0, until - self._now())

    def bot_holds(self) -> int:
        (count,) = self._db.execute(
            "SELECT count(*) FROM questions WHERE lease_until > ?", (self._now(),)
        ).fetchone()
        return int(count)

    def bot_backlog(self) -> tuple[int, float | None]:
        now = self._now()
        count, oldest = self._db.execute(
            "SELECT count(*), min(e.created_at)"
            " FROM questions q JOIN entries e ON e.id = q.entry_id"
            " WHERE q.lease_until IS NULL OR q.lease_until <= ?",
            (now,),
        ).fetchone()
        return int(count), None if oldest is None else max(0.0, now - oldest)

    def record_decision(
        self,
        question_id: int,
        *,
        worker: str,
        expect: State,
        decision: Decision | None,
        answer: bool,
        escalation: Escalation | None,
    ) -> DecisionResult:
        outcome: Outcome = (
            "answered" if answer else "escalated" if escalation is not None else "kept"
        )
        now = self._now()
        with self._write() as db:
            held = db.execute(
                "SELECT conversation_id, lease_owner FROM questions WHERE entry_id = ?",
                (question_id,),
            ).fetchone()
            if held is None or held[1] != worker:
                raise LeaseLost(f"question {question_id} is no longer leased to {worker}")
            conversation_id = held[0]
            self._require(db, conversation_id, expect)
            if (
                answer
                and expect is State.WAITING
                and db.execute(
                    "SELECT 1 FROM conversations WHERE id = ? AND question_entry = ?",
                    (conversation_id, question_id),
                ).fetchone()
            ):
                # Escalated again with this very question since the service read it: a person
                # takes that one up, the bot never answers it.
                raise StaleState(
                    f"conversation {conversation_id} waits with question {question_id}"
                )
            stored: StoredDecision | None = None
            if decision is not None:
                body, texts = codec.compact(decision)
                db.executemany("INSERT OR IGNORE INTO passage_texts VALUES (?, ?)", texts.items())
                (question,) = db.execute(
                    "SELECT text FROM entries WHERE id = ?", (question_id,)
                ).fetchone()
                numbers = self._revision_ids(db, codec.revisions(decision)[0])
                packed = codec.encode(decision, question, numbers)
                cursor = db.execute(
                    "INSERT INTO decisions (conversation_id, message_id, worker, answer_id,"
                    " reason, top_probability, latency_ms, body, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        conversation_id,
                        question_id,
                        worker,
                        None if decision.answer is None else decision.answer.id,
                        None if decision.reason is None else decision.reason.value,
                        decision.top_probability,
                        decision.latency_ms,
                        codec.pack(body) if packed is None else packed,
                        now,
                    ),
                )
                assert cursor.lastrowid is not None
                db.executemany(
                    "INSERT INTO judgment_errors (decision_id, kind, count, created_at)"
                    " VALUES (?, ?, ?, ?)",
                    [
                        (cursor.lastrowid, kind, count, now)
                        for kind, count in judgment_error_counts(body).items()
                    ],
                )
                stored = StoredDecision(
                    id=cursor.lastrowid,
                    conversation_id=conversation_id,
                    message_id=question_id,
                    created_at=_stamp(now),
                    worker=worker,
                    decision=decision,
                )
                self._append(
                    db,
                    conversation_id,
                    event=Decided(decision=stored.id, question_entry=question_id, outcome=outcome),
                )
            if answer:
                if decision is None or decision.answer is None:
                    raise StoreError(f"question {question_id}: an answer needs a decision")
                self._append(
                    db,
                    conversation_id,
                    author=Author.BOT,
                    text=decision.answer.text,
                    passage_id=decision.answer.id,
                    passage_title=decision.answer.title or None,
                    decision_id=None if stored is None else stored.id,
                    revision=self._answer_revision(db, decision.answer),
                )
            elif escalation is not None:
                self._escalate(db, conversation_id, escalation)
            db.execute("DELETE FROM questions WHERE entry_id = ?", (question_id,))
            return DecisionResult(
                outcome=outcome,
                conversation=self._conversation(db, conversation_id),
                decision=stored,
            )

    @staticmethod
    def _revision_ids(
        db: sqlite3.Connection, revisions: Sequence[codec.Revision]
    ) -> dict[codec.Revision, int]:
        """The number of each passage revision, numbering those seen for the first time."""
        numbers: dict[codec.Revision, int] = {}
        for revision in revisions:
            key = (revision.digest, revision.passage_id, revision.title)
            row = db.execute(
                "SELECT id FROM passage_revisions"
                " WHERE digest = ? AND passage_id = ? AND title = ?",
                key,
            ).fetchone()
            if row is None:
                row = db.execute(
                    "INSERT INTO passage_revisions (digest, passage_id, title) VALUES (?, ?, ?)"
                    " RETURNING id",
                    key,
                ).fetchone()
            numbers[revision] = row[0]
        return numbers

    def _answer_revision(self, db: sqlite3.Connection, answer: Answer) -> int:
        """The passage revision a bot answer quotes, its text stored once."""
        key = codec.digest(answer.text)
        db.execute("INSERT OR IGNORE INTO passage_texts VALUES (?, ?)", (key, answer.text))
        revision = codec.Revision(answer.id, answer.title, key)
        return self._revision_ids(db, [revision])[revision]

    # -- content gaps -----------------------------------------------------------------------------

    def content_gaps(self, *, include_handled: bool = True, limit: int = 200) -> list[ContentGap]:
        def run(sql: str, params: Any) -> list[Any]:
            return self._db.execute(sql, params).fetchall()

        self._db.execute("BEGIN")  # Its reads see one moment.
        try:
            return gaps_sql.content_gaps(
                run, SQLiteDialect(), include_handled=include_handled, limit=limit
            )
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: cannot read the content gaps: {error}") from None
        finally:
            self._rollback()

    def mark_gap_handled(self, gap_id: int, *, passage_id: str) -> None:
        key = SQLiteDialect().gap_key("escalations")
        with self._write() as db:
            row = db.execute(f"SELECT {key} FROM escalations WHERE id = ?", (gap_id,)).fetchone()
            if row is None:
                raise StoreError(f"content gap {gap_id} not found")
            # The gap is every open escalation of its question (`stats_sql.question_key`).
            db.execute(
                "UPDATE escalations SET handled_at = ?, passage_id = ? WHERE id = ?"
                " OR (handled_at IS NULL AND (question_key = ?"
                f" OR (question_key IS NULL AND {key} = ?)))",
                (self._now(), passage_id, gap_id, row[0], row[0]),
            )

    # -- reading ----------------------------------------------------------------------------------

    def conversation(self, conversation_id: int) -> Conversation:
        return self._conversation(self._db, conversation_id)

    def conversations(
        self,
        *,
        state: State | None = None,
        after_id: int = 0,
        limit: int = 100,
        include_empty: bool = True,
    ) -> list[Conversation]:
        where = "c.id > ?" if state is None else "c.id > ? AND c.state = ?"
        if not include_empty:
            where += f" AND {WRITTEN_SQL}"
        parameters: list[Any] = [after_id] if state is None else [after_id, state.value]
        rows = self._db.execute(
            f"{self._CONVERSATION} WHERE {where} ORDER BY c.id LIMIT ?", [*parameters, limit]
        ).fetchall()
        return [self._to_conversation(row) for row in rows]

    def entries(
        self,
        conversation_id: int,
        *,
        after_id: int = 0,
        before_id: int | None = None,
        limit: int | None = None,
    ) -> list[Entry]:
        if before_id is None and limit is None:
            rows = self._db.execute(
                f"{self._ENTRY} WHERE e.conversation_id = ? AND e.id > ? ORDER BY e.id",
                (conversation_id, after_id),
            ).fetchall()
        else:
            # The newest `limit` before `before_id`: read backwards along the index, then turn.
            rows = self._db.execute(
                f"{self._ENTRY} WHERE e.conversation_id = ? AND e.id > ? AND e.id < ?"
                " ORDER BY e.id DESC LIMIT ?",
                (conversation_id, after_id, before_id or 2**62, -1 if limit is None else limit),
            ).fetchall()
            rows.reverse()
        return [self._to_entry(row) for row in rows]

    def entries_of(self, conversation_ids: Sequence[int]) -> dict[int, list[Entry]]:
        logs: dict[int, list[Entry]] = {id_: [] for id_ in conversation_ids}
        # Ordered here, not in SQL, so the query plan is one index range per conversation.
        rows = self._in_chunks(f"{self._ENTRY} WHERE e.conversation_id IN ({{}})", list(logs))
        for row in sorted(rows, key=lambda row: row[0]):
            logs[row[1]].append(self._to_entry(row))
        return logs

    def count_entries(
        self, conversation_id: int, *, before_id: int, limit: int | None = None
    ) -> int:
        (count,) = self._db.execute(
            "SELECT count(*) FROM (SELECT 1 FROM entries WHERE conversation_id = ? AND id < ?"
            " AND (event IS NULL OR event NOT IN (?, ?)) ORDER BY id DESC LIMIT ?)",
            (
                conversation_id,
                before_id,
                EventType.DECIDED.value,
                EventType.LOCALE_SET.value,
                -1 if limit is None else limit,
            ),  # fmt: skip
        ).fetchone()
        return int(count)

    def latest_answer(self, conversation_id: int) -> ChatMessage | None:
        row = self._db.execute(
            f"{self._ENTRY} WHERE e.conversation_id = ? AND e.author = 'bot'"
            " ORDER BY e.id DESC LIMIT 1",
            (conversation_id,),
        ).fetchone()
        entry = None if row is None else self._to_entry(row)
        return entry if isinstance(entry, ChatMessage) else None

    def latest_question(self, conversation_id: int) -> tuple[ChatMessage, float | None] | None:
        row = self._db.execute(
            f"{self._ENTRY} WHERE e.conversation_id = ? AND e.author = 'customer'"
            " ORDER BY e.id DESC LIMIT 1",
            (conversation_id,),
        ).fetchone()
        entry = None if row is None else self._to_entry(row)
        if not isinstance(entry, ChatMessage):
            return None
        top = self._db.execute(
            "SELECT top_probability FROM decisions WHERE message_id = ? ORDER BY id DESC LIMIT 1",
            (entry.id,),
        ).fetchone()
        return entry, None if top is None else top[0]

    def latest_questions(
        self, conversation_id: int, *, before_id: int | None = None, limit: int
    ) -> list[tuple[ChatMessage, float | None]]:
        # Along `entries_by_author` backwards, then `decisions_by_message` for the page's
        # scores: a page costs the same however long the conversation is.
        rows = self._db.execute(
            f"{self._ENTRY} WHERE e.conversation_id = ? AND e.author = 'customer' AND e.id < ?"
            " ORDER BY e.id DESC LIMIT ?",
            (conversation_id, 2**62 if before_id is None else before_id, limit),
        ).fetchall()
        messages = [m for m in map(self._to_entry, rows) if isinstance(m, ChatMessage)]
        # A message's decisions are all in one chunk, oldest first: its latest one is kept.
        decided = "SELECT message_id, top_probability FROM decisions WHERE message_id IN ({})"
        tops: dict[int, float | None] = dict(
            self._in_chunks(f"{decided} ORDER BY id", [m.id for m in messages])
        )
        return [(message, tops.get(message.id)) for message in messages]

    _DECISION = (
        "SELECT id, conversation_id, message_id, worker, created_at, body,"
        " (SELECT e.text FROM entries e WHERE e.id = decisions.message_id), latency_ms"
        " FROM decisions"
    )

    _OF_CONVERSATION = (
        "message_id IN (SELECT q.id FROM entries q WHERE q.conversation_id = ?"
        " AND q.author = 'customer')"
    )
    """A conversation's decisions, found from its questions (migration 7 dropped their index)."""

    def _to_decisions(self, rows: Sequence[Any]) -> list[StoredDecision]:
        return codec.stored_decisions(
            [
                (
                    *row[:4],
                    _stamp(row[4]),
                    row[5] if codec.is_positional(row[5]) else codec.unpack(row[5]),
                    *row[6:],
                )
                for row in rows
            ],  # fmt: skip
            revisions_of=lambda numbers: self._in_chunks(
                "SELECT id, passage_id, title, digest FROM passage_revisions WHERE id IN ({})",
                numbers,
            ),
            texts_of=lambda wanted: self._in_chunks(
                "SELECT digest, text FROM passage_texts WHERE digest IN ({})", wanted
            ),
        )

    def _in_chunks(self, query: str, values: Sequence[object]) -> list[Any]:
        """`query`'s rows for every value, its `IN ({})` filled in chunks under SQLite's limit
        on bound parameters."""
        rows: list[Any] = []
        for start in range(0, len(values), 500):
            chunk = values[start : start + 500]
            rows += self._db.execute(query.format(_marks(len(chunk))), chunk).fetchall()
        return rows

    def decision(self, decision_id: int) -> StoredDecision:
        rows = self._db.execute(f"{self._DECISION} WHERE id = ?", (decision_id,)).fetchall()
        if not rows:
            raise StoreError(f"decision {decision_id} not found")
        return self._to_decisions(rows)[0]

    def decisions(self, conversation_id: int) -> list[StoredDecision]:
        rows = self._db.execute(
            f"{self._DECISION} WHERE {self._OF_CONVERSATION} ORDER BY id", (conversation_id,)
        ).fetchall()
        return self._to_decisions(rows)

    def decisions_of(self, conversation_ids: Sequence[int]) -> dict[int, list[StoredDecision]]:
        found: dict[int, list[StoredDecision]] = {id_: [] for id_ in conversation_ids}
        # As `decisions`: found from the conversations' questions, ordered here, not in SQL.
        rows = self._in_chunks(
            f"{self._DECISION} WHERE message_id IN (SELECT q.id FROM entries q"
            " WHERE q.conversation_id IN ({}) AND q.author = 'customer')",
            list(found),
        )
        for stored in self._to_decisions(sorted(rows, key=lambda row: row[0])):
            found[stored.conversation_id].append(stored)
        return found

    def latest_decision(self, conversation_id: int) -> StoredDecision | None:
        rows = self._db.execute(
            f"{self._DECISION} WHERE {self._OF_CONVERSATION} ORDER BY id DESC LIMIT 1",
            (conversation_id,),
        ).fetchall()
        return self._to_decisions(rows)[0] if rows else None

    def decisions_since(self, conversation_id: int, message_id: int) -> list[StoredDecision]:
        rows = self._db.execute(
            f"{self._DECISION} WHERE message_id IN (SELECT q.id FROM entries q"
            " WHERE q.conversation_id = ? AND q.author = 'customer' AND q.id >= ?) ORDER BY id",
            (conversation_id, message_id),
        ).fetchall()
        return self._to_decisions(rows)

    _QUEUE = (
        "SELECT c.id, c.state, coalesce(c.waiting_since, c.updated_at), c.reason,"
        " c.top_probability, c.agent, c.claimed_at, c.question_entry,"
        " (SELECT e.text FROM entries e WHERE e.id = c.question_entry),"
        " (SELECT coalesce(max(e.id), 0) FROM entries e"
        "  WHERE e.conversation_id = c.id AND e.author = 'customer'),"
        " coalesce((SELECT r.entry_id FROM read_markers r"
        "  WHERE r.conversation_id = c.id AND r.agent = :agent), 0)"
        " FROM conversations c"
    )

    @staticmethod
    def _to_items(rows: Sequence[Any]) -> list[QueueItem]:
        return [
            QueueItem(
                conversation_id=id_,
                state=State(state),
                waiting_since=_stamp(since),
                reason=None if reason is None else Reason(reason),
                top_probability=top,
                agent=owner,
                claimed_at=_time(claimed_at),
                question_entry=question_entry,
                question=question or "",
                last_customer_entry=last_customer,
                read_entry=read,
            )
            for (id_, state, since, reason, top, owner, claimed_at, question_entry, question,
                 last_customer, read) in rows
        ]  # fmt: skip

    def queue(self, *, agent: str | None = None) -> list[QueueItem]:
        """Other agents' claims are left out: they pile up, and every poll of the queue would read
        them all. Each part is one range of an index, so a poll costs what is waiting and what
        this agent has, not what everyone ever claimed."""
        rows = self._db.execute(
            f"{self._QUEUE} WHERE c.state = 'waiting' ORDER BY c.waiting_since, c.id",
            {"agent": agent},
        ).fetchall()
        if agent is not None:
            rows += self._db.execute(
                f"{self._QUEUE} WHERE c.state = 'claimed' AND c.agent = :agent"
                " ORDER BY c.waiting_since, c.id",
                {"agent": agent},
            ).fetchall()
        return self._to_items(rows)

    def waiting_ahead(self, conversation_id: int) -> int | None:
        # One statement, so one snapshot; the count is a range of the (state, waiting_since) index.
        row = self._db.execute(
            "SELECT (SELECT count(*) FROM conversations w WHERE w.state = 'waiting'"
            " AND w.waiting_since <= c.waiting_since"
            " AND (w.waiting_since < c.waiting_since OR w.id < c.id))"
            " FROM conversations c WHERE c.id = ? AND c.state = 'waiting'",
            (conversation_id,),
        ).fetchone()
        return None if row is None else int(row[0])

    def longest_waiting(self, limit: int) -> list[int]:
        rows = self._db.execute(
            "SELECT id FROM conversations WHERE state = 'waiting'"
            " ORDER BY waiting_since, id LIMIT ?",
            (limit,),
        ).fetchall()
        return [int(row[0]) for row in rows]

    def queue_items(self, conversation_ids: Sequence[int], *, agent: str | None) -> list[QueueItem]:
        rows: list[Any] = []
        ids = list(dict.fromkeys(conversation_ids))
        for start in range(0, len(ids), 500):  # Under SQLite's limit on bound parameters.
            chunk = ids[start : start + 500]
            marks = ", ".join(f":id{n}" for n in range(len(chunk)))
            rows += self._db.execute(
                f"{self._QUEUE} WHERE c.id IN ({marks}) AND (c.state = 'waiting'"
                " OR (c.state = 'claimed' AND c.agent = :agent))",
                {"agent": agent, **{f"id{n}": id_ for n, id_ in enumerate(chunk)}},
            ).fetchall()
        return self._to_items(rows)

    def claims(self) -> list[QueueItem]:
        rows = self._db.execute(
            f"{self._QUEUE} WHERE c.state = 'claimed' ORDER BY c.agent, c.claimed_at, c.id",
            {"agent": None},
        ).fetchall()
        return self._to_items(rows)

    def search(
        self, text: str, *, state: State | None = None, limit: int = 50, number: bool = False
    ) -> list[SearchHit]:
        # The customer's and agents' messages, and agents' internal notes (only agents search):
        # a note's text is in its event's JSON, read only for notes (CASE: never parsed for
        # another event, whose parameters need not be JSON).
        note = "CASE WHEN e.event = 'note' THEN json_extract(e.params, '$.text') END"
        if number:  # Digits have no case; `instr` first, as the cheap test.
            said = "instr(e.text, :text) > 0 AND has_number(e.text, :text)"
            noted = f"instr({note}, :text) > 0 AND has_number({note}, :text)"
        else:
            said = "instr(casefold(e.text), :text) > 0"
            noted = f"instr(casefold({note}), :text) > 0"
        rows = self._db.execute(
            "SELECT c.id, c.state, c.agent, c.updated_at, m.entry, e.text,"
            " CASE WHEN e.event = 'note' THEN e.params END FROM"
            " (SELECT e.conversation_id AS conversation, max(e.id) AS entry FROM entries e"
            "  JOIN conversations c ON c.id = e.conversation_id"
            "  WHERE (e.author IN ('customer', 'agent') AND e.text IS NOT NULL"
            f"   AND {said} OR e.event = 'note' AND {noted})"
            "  AND (:state IS NULL OR c.state = :state) GROUP BY e.conversation_id) m"
            " JOIN conversations c ON c.id = m.conversation JOIN entries e ON e.id = m.entry"
            " ORDER BY c.updated_at DESC, c.id DESC LIMIT :limit",
            {
                "state": None if state is None else state.value,
                "text": text.casefold(),
                "limit": limit,
            },
        ).fetchall()
        return [search_hit(row) for row in rows]

    def stats(
        self, since: datetime | None, *, thresholds: Sequence[float] = STAT_THRESHOLDS
    ) -> DeskStats:
        """Aggregate queries in one read transaction, so every figure sees the same moment."""

        def run(sql: str, params: Any) -> list[Any]:
            return self._db.execute(sql, params).fetchall()

        self._db.execute("BEGIN")
        try:
            return compute_stats(
                run, SQLiteDialect(), since=since, now=self._clock(), thresholds=thresholds
            )
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: cannot compute the figures: {error}") from None
        finally:
            self._rollback()

    def last_entry_id(self) -> int:
        (last,) = self._db.execute("SELECT coalesce(max(id), 0) FROM entries").fetchone()
        return int(last)

    def changes(self, *, after: int) -> Changes:
        (cursor,) = self._db.execute("SELECT coalesce(max(id), 0) FROM entries").fetchone()
        rows = self._db.execute(
            "SELECT DISTINCT conversation_id FROM entries WHERE id > ? AND id <= ?"
            " ORDER BY conversation_id",
            (after, cursor),
        ).fetchall()
        return Changes(cursor=max(cursor, after), conversation_ids=tuple(row[0] for row in rows))
