"""The conversation store on PostgreSQL (`ConversationStore`), for help desks on many machines.

The same use cases as `chatbot.store.sqlite`, one transaction each, with the same conditional
writes: a write first locks the conversation's row (`FOR UPDATE`) and checks the state the
service read, a claim is one conditional `UPDATE`, and workers take questions with
`FOR UPDATE SKIP LOCKED`, so two agents or two workers never both win.

Log entries are appended under one transaction-scoped advisory lock, so their ids are committed
in order: `changes(after=cursor)` then never skips an entry that a slower transaction committed
below the cursor. (SQLite gets this for free: it has one writer at a time.)

Every write ends with `NOTIFY helpdesk` in its own transaction, so a change feed (`LISTEN`) in any
process on any host wakes when it commits, and only then.

Each store holds one connection and is used by one thread, as the interface says. A connection
lost (a server restart) is a `StoreError` for the call that met it, and the next call connects
again: a write is reported failed, never retried behind the caller's back, except when the
connection was found dead before anything was sent. Error messages never carry the password.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import psycopg

from chatbot.dburl import display, redact
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
from chatbot.engine.models import Decision, Reason
from chatbot.pgdeadline import DEFAULT_TIMEOUT_S, server_settings, watchdog
from chatbot.pgslots import full_reason, no_connection_to_spare
from chatbot.store import codec, gaps_sql
from chatbot.store.interface import (
    ConversationNotFound,
    DatabaseFull,
    EmptySweep,
    LeaseLost,
    NotTheLatestAnswer,
    StaleState,
    StoreError,
    UnseenMessage,
    same_reply,
    swept,
)
from chatbot.store.postgres_schema import COMPONENT, MIGRATIONS
from chatbot.store.schema import judgment_error_counts
from chatbot.store.sqlite import (
    EMPTY_CHILDREN,
    EMPTY_SQL,
    WRITTEN_SQL,
    search_hit,
    seen_until,
)
from chatbot.store.stats_sql import PostgresDialect, compute_stats, question_key

CHANNEL = "helpdesk"
"""The NOTIFY channel every write announces itself on."""
APPEND_LOCK = 0x68656C70  # "help": the advisory lock that orders log entries.
MIGRATE_LOCK = 0x68656C71
CONNECT_TIMEOUT_S = 5
BEGIN_APPENDING = f"BEGIN; SELECT pg_advisory_xact_lock({APPEND_LOCK})".encode()
NOTIFY_AND_COMMIT = f"NOTIFY {CHANNEL}; COMMIT".encode()
NO_FLUSH = b"; SET LOCAL synchronous_commit = off"
"""For a transaction whose loss in a server crash costs nothing (a console's presence, said again
every half minute): its commit returns without waiting for the write-ahead log to reach the disk
(1-100 ms on a busy test machine, more on a loaded disk), which the console's first queue waited
behind."""
SESSION_SETTINGS = {"jit": "off"}
"""Set on every connection, with the deadline's settings (no round trip of their own). No JIT:
the desk's queries run in milliseconds to a second, and their correlated subqueries cost
enough on paper for the server to compile them first: 0.3-0.8 s of compiling for each of the
figures' slower queries (`helpdesk stats`, F5), 30 ms for the queue, on every call."""
STATS_BEGIN = (
    b"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY; SET LOCAL work_mem = '32MB'"
)
"""The figures' snapshot, and memory enough to sort 100,000 escalations without spilling to
disk (the default 4 MB wrote 13 MB of temporary files for the content gaps at 60,000)."""
GAPS_BEGIN = b"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"
"""The content gaps' snapshot: the newest gaps, then every escalation of them."""


def _time(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, UTC)


def _stamp(value: float) -> datetime:
    return datetime.fromtimestamp(value, UTC)


_LOCALE = (
    "SELECT l.params::jsonb ->> 'locale' FROM entries l"
    " WHERE l.conversation_id = {conversation} AND l.event = 'locale-set'"
    " ORDER BY l.id DESC LIMIT 1"
)
"""A conversation's language: its latest `locale-set` event (one probe of
entries_by_conversation_event), as in the SQLite store."""


class Link:
    """One connection to the database at `url`, connected again on demand after it is lost."""

    def __init__(self, url: str, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.url = url
        self.where = display(url)
        self.timeout_s = timeout_s
        self._conn: psycopg.Connection[Any] | None = None
        self.timed_out = False
        """Whether the last watched call was cut at its deadline (see `chatbot.pgdeadline`)."""

    @contextmanager
    def watched(self, conn: psycopg.Connection[Any]) -> Iterator[psycopg.Connection[Any]]:
        """Run the block under this link's deadline: past it the connection is cut, and the call
        fails as on a lost connection."""
        self.timed_out = False
        with watchdog.guard(conn.fileno(), self.timeout_s) as deadline:
            try:
                yield conn
            finally:
                self.timed_out = deadline.expired

    def gave_up(self, error: BaseException) -> bool:
        """Whether `error` is a call given up at its deadline: cut here, or ended by the server
        at its `statement_timeout` (which leaves the connection usable)."""
        return self.timed_out or isinstance(error, psycopg.errors.QueryCanceled)

    def fail(self, error: BaseException, doing: str) -> StoreError:
        """A one-line error naming the database (without its password) and what went wrong."""
        reason = " ".join(str(error).split()) or type(error).__name__
        if self.gave_up(error):  # libpq would say the server closed the connection: it was us.
            reason = f"no answer in {self.timeout_s:g} s"
        return StoreError(redact(f"{self.where}: {doing}: {reason}", self.url))

    def connection(self) -> psycopg.Connection[Any]:
        conn = self._conn
        if conn is not None and not conn.closed and not conn.broken:
            return conn
        self.drop()
        self.timed_out = False  # A failure to connect is its own, whatever the last call met.
        try:
            conn = psycopg.connect(
                self.url,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_S,
                application_name="helpdesk",
            )
        except psycopg.Error as error:
            reason = " ".join(str(error).split())
            if no_connection_to_spare(reason):  # Said as such: not an outage, nor a bad setting.
                said = redact(f"{self.where}: {full_reason(reason)}", self.url)
                raise DatabaseFull(said) from None
            raise self.fail(error, "database unavailable") from None
        except ValueError as error:  # A URL libpq cannot parse: not the server's fault.
            raise self.fail(error, "bad database URL") from None
        settings: dict[str, object] = {
            **server_settings(self.timeout_s, server_version=conn.info.server_version),
            **SESSION_SETTINGS,
        }
        try:
            # The server ends a statement a little before the client would cut the connection,
            # and a backend whose client cut it (see `chatbot.pgdeadline`): cut alone, a call
            # left its backend waiting on, holding a connection slot, while a lock was held.
            with self.watched(conn):
                conn.execute("; ".join(f"SET {k} = {v}" for k, v in settings.items()).encode())
        except psycopg.Error as error:
            conn.close()
            raise self.fail(error, "database unavailable") from None
        self._conn = conn
        return conn

    def drop(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except psycopg.Error:
                pass
            self._conn = None

    def lost(self) -> bool:
        return self._conn is None or self._conn.closed or self._conn.broken


VERSIONS_SHAPE = """
SELECT c.relkind = 'r'
   AND (SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
         WHERE a.attrelid = c.oid AND a.attname = 'component' AND NOT a.attisdropped) = 'text'
   AND (SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
         WHERE a.attrelid = c.oid AND a.attname = 'version' AND NOT a.attisdropped) = 'integer'
   AND EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a
                 ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
                WHERE i.indrelid = c.oid AND i.indisunique AND i.indnatts = 1
                  AND a.attname = 'component')
  FROM pg_class c WHERE c.oid = to_regclass('schema_versions')
"""
"""Whether the `schema_versions` found is a table of the help desk's shape: `component` text,
unique (what its upsert needs), `version` integer."""


def _require_our_versions(link: Link, conn: psycopg.Connection[Any]) -> None:
    """Refuse a `schema_versions` of another shape (a common name: another application's table,
    or a view): read as ours, every command failed with a bare SQL error (`column "component"
    does not exist`, a type or an upsert error)."""
    (ours,) = conn.execute(VERSIONS_SHAPE.encode()).fetchone() or (False,)
    if not ours:
        raise StoreError(
            f"{link.where}: its schema_versions is not the help desk's table (a unique text"
            " component, an integer version): is it the right database (--db, HELPDESK_DB)?"
            " Nothing was changed there"
        )


def _require_no_clash(link: Link, conn: psycopg.Connection[Any]) -> None:
    """Refuse a database with no help-desk schema yet but a `conversations` table (another
    application's, of a common name): the first migration failed on it with `relation
    "conversations" already exists`."""
    (clash,) = conn.execute("SELECT to_regclass('conversations')").fetchone() or (None,)
    if clash is not None:
        raise StoreError(
            f"{link.where}: holds a conversations table that is not the help desk's: is it the"
            " right database (--db, HELPDESK_DB)? Nothing was changed there"
        )


def _up_to_date(link: Link) -> bool:
    """Whether the schema is already this code's, as it is at every start but a database's first
    and an upgrade's: read in two statements, with no transaction, lock or write. Every start
    (each console, bot and browser session) took the migration lock and wrote the version back,
    eight round trips and a commit waiting for the server's disk, before its first read."""
    conn = link.connection()
    try:
        with link.watched(conn):
            ours = conn.execute(VERSIONS_SHAPE.encode()).fetchone()
            if ours is None or not ours[0]:
                return False  # No table yet, or not ours: `migrate` says which, under its lock.
            row = conn.execute(
                "SELECT version FROM schema_versions WHERE component = %s", (COMPONENT,)
            ).fetchone()
    except psycopg.Error as error:
        if conn.broken or conn.closed:
            link.drop()
        raise link.fail(error, "cannot set up the database") from None
    return row is not None and int(row[0]) == len(MIGRATIONS)


def migrate(link: Link) -> int:
    """Create or bring the schema up to date; refuse one newer than this code. Its version."""
    if _up_to_date(link):
        return len(MIGRATIONS)
    conn = link.connection()
    try:
        with conn.transaction():
            # Unwatched, and not cut short by the server either: a migration of a large
            # database (an index over every entry) may take longer than one call's deadline.
            conn.execute("SET LOCAL statement_timeout = 0")
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATE_LOCK,))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_versions"
                " (component text PRIMARY KEY, version integer NOT NULL)"
            )
            _require_our_versions(link, conn)
            row = conn.execute(
                "SELECT version FROM schema_versions WHERE component = %s", (COMPONENT,)
            ).fetchone()
            version = 0 if row is None else int(row[0])
            if version == 0:
                _require_no_clash(link, conn)
            if version > len(MIGRATIONS):
                raise _newer(link, version)
            for migration in MIGRATIONS[version:]:
                for statement in migration:
                    conn.execute(statement.encode())
            conn.execute(
                "INSERT INTO schema_versions (component, version) VALUES (%s, %s)"
                " ON CONFLICT (component) DO UPDATE SET version = excluded.version",
                (COMPONENT, len(MIGRATIONS)),
            )
    except psycopg.Error as error:
        raise link.fail(error, "cannot set up the database") from None
    return len(MIGRATIONS)


_migrate = migrate  # For `PostgresStore.open`, whose `migrate` flag hides the name.


def _newer(link: Link, version: int) -> StoreError:
    return StoreError(
        f"{link.where}: database schema version {version} is newer than this helpdesk "
        f"understands ({len(MIGRATIONS)}); upgrade helpdesk"
    )


def _read_version(link: Link) -> int | None:
    """The schema version on `link`'s database, or None when it has no help-desk tables; reads
    only, so nothing is created or changed."""
    conn = link.connection()
    try:
        with link.watched(conn):
            (table,) = conn.execute("SELECT to_regclass('schema_versions')").fetchone() or (None,)
            row = None
            if table is not None:
                _require_our_versions(link, conn)
                row = conn.execute(
                    "SELECT version FROM schema_versions WHERE component = %s", (COMPONENT,)
                ).fetchone()
            if row is None:
                _require_no_clash(link, conn)
    except psycopg.Error as error:
        raise link.fail(error, "cannot read the database") from None
    return None if row is None else int(row[0])


def stored_version(url: str) -> int | None:
    """The help desk's schema version in the database at `url`, or None when it has no help-desk
    tables; nothing is created (for the commands that only read)."""
    link = Link(url)
    try:
        return _read_version(link)
    finally:
        link.drop()


class PostgresChangeFeed:
    """Wakes on any process's commit: `LISTEN helpdesk` on a connection of its own. After its
    connection is lost and made again it reports a change, since some may have been missed."""

    def __init__(self, url: str, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self._link = Link(url, timeout_s=timeout_s)
        self._listen()
        self._missed = False

    def _listen(self) -> None:
        conn = self._link.connection()
        try:
            with self._link.watched(conn):
                conn.execute(f"LISTEN {CHANNEL}")
        except psycopg.Error as error:
            self._link.drop()
            raise self._link.fail(error, "cannot watch the database") from None

    def _drain(self, conn: psycopg.Connection[Any], timeout: float) -> bool:
        seen = False
        for _ in conn.notifies(timeout=timeout, stop_after=1):
            seen = True
        if seen:  # Report a burst of commits once: take what else has arrived already.
            while any(True for _ in conn.notifies(timeout=0, stop_after=1)):
                pass
        return seen

    def wait(self, timeout: float) -> bool:
        if self._link.lost():
            self._listen()  # StoreError while the server is away; the watcher tries again.
            self._missed = True
        if self._missed:
            self._missed = False
            return True
        conn = self._link.connection()
        try:
            return self._drain(conn, max(timeout, 0.0))
        except (psycopg.Error, OSError) as error:
            self._link.drop()
            raise self._link.fail(error, "lost the database while watching") from None

    def close(self) -> None:
        self._link.drop()


class PostgresStore:
    """The conversation store over one PostgreSQL database. One instance per thread."""

    def __init__(self, link: Link, *, clock: Clock, schema_version: int) -> None:
        self._link = link
        self.url = link.url
        self.where = link.where
        self._clock = clock
        self.schema_version = schema_version

    # -- opening ----------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        url: str,
        *,
        clock: Clock = utc_now,
        migrate: bool = True,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> PostgresStore:
        """Connect and migrate; a server that refuses is one `StoreError` line.

        `migrate=False` is for the commands that only read: nothing is created or changed, and
        the store has the schema version it found (0: no help-desk tables; one newer than this
        code is still refused). Upgrading is for the processes that write: a newer host's
        `doctor` migrating the shared database would lock out the hosts not yet upgraded.
        `timeout_s` is how long a call may go unanswered (`chatbot.pgdeadline`)."""
        link = Link(url, timeout_s=timeout_s)
        if migrate:
            return cls(link, clock=clock, schema_version=_migrate(link))
        try:
            version = _read_version(link) or 0
            if version > len(MIGRATIONS):
                raise _newer(link, version)
        except StoreError:
            link.drop()
            raise
        return cls(link, clock=clock, schema_version=version)

    def close(self) -> None:
        self._link.drop()

    def now(self) -> datetime:
        return self._clock()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open_feed(self) -> PostgresChangeFeed:
        return PostgresChangeFeed(self.url, timeout_s=self._link.timeout_s)

    def server_version(self) -> str:
        """The server's version, as `SHOW server_version` says it."""
        return str(self._rows("SHOW server_version")[0][0])

    # -- plumbing ---------------------------------------------------------------------------------

    @contextmanager
    def _write(
        self, *, append: bool = True, notify: bool = True, flush: bool = True
    ) -> Iterator[psycopg.Connection[Any]]:
        """One transaction that announces itself on commit (unless not `notify`: a write nobody
        needs waking for). With `append` it first takes the lock that keeps log ids in commit
        order (first, so it never waits while holding a row). Without `flush`, its commit does
        not wait for the server's disk (a write the next one soon makes again, as presence)."""
        link = self._link
        # One round trip each to begin (and lock) and to announce and commit: several statements
        # in one simple query.
        begin = BEGIN_APPENDING if append else b"BEGIN"
        if not flush:
            begin += NO_FLUSH
        conn = link.connection()
        try:
            with link.watched(conn):
                conn.execute(begin)
        except psycopg.OperationalError as error:
            if link.gave_up(error):  # Not a stale connection: the server is not answering.
                self._rollback(conn)
                raise link.fail(error, "cannot write") from None
            link.drop()
            # Found dead before anything was sent (a server restarted while we were idle): one
            # more try on a new connection cannot write anything twice.
            conn = link.connection()
            try:
                with link.watched(conn):
                    conn.execute(begin)
            except psycopg.Error as error:
                link.drop()
                raise link.fail(error, "cannot write") from None
        try:
            with link.watched(conn):
                yield conn
                conn.execute(NOTIFY_AND_COMMIT if notify else b"COMMIT")
        except psycopg.Error as error:
            self._rollback(conn)
            raise link.fail(error, "cannot write") from None
        except BaseException:
            self._rollback(conn)
            raise

    def _rollback(self, conn: psycopg.Connection[Any]) -> None:
        try:
            if not conn.broken and not conn.closed:
                conn.execute("ROLLBACK")
        except psycopg.Error:
            self._link.drop()
        if conn.broken or conn.closed:
            self._link.drop()

    def _rows(self, query: str, params: Any = None) -> list[Any]:
        """A read outside any transaction: tried once more on a new connection if the old one
        turned out dead (a read is safe to repeat)."""
        for attempt in (1, 2):
            conn = self._link.connection()
            try:
                with self._link.watched(conn):
                    return conn.execute(query.encode(), params).fetchall()
            except psycopg.OperationalError as error:
                if not (conn.broken or conn.closed) or attempt == 2 or self._link.gave_up(error):
                    if conn.broken or conn.closed:
                        self._link.drop()
                    raise self._link.fail(error, "cannot read") from None
                self._link.drop()
            except psycopg.Error as error:
                raise self._link.fail(error, "cannot read") from None
        raise AssertionError("unreachable")

    @staticmethod
    def _q(conn: psycopg.Connection[Any], query: str, params: Any = None) -> list[Any]:
        cursor = conn.execute(query.encode(), params)
        return cursor.fetchall() if cursor.description is not None else []

    @staticmethod
    def _one(conn: psycopg.Connection[Any], query: str, params: Any = None) -> Any:
        return conn.execute(query.encode(), params).fetchone()

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

    def _conversation(self, conn: psycopg.Connection[Any], conversation_id: int) -> Conversation:
        row = self._one(conn, f"{self._CONVERSATION} WHERE c.id = %s", (conversation_id,))
        if row is None:
            raise ConversationNotFound(f"conversation {conversation_id} not found")
        return self._to_conversation(row)

    def _lock(self, conn: psycopg.Connection[Any], conversation_id: int) -> tuple[State, Any]:
        """Lock the conversation's row for the rest of the transaction; its state and owner."""
        row = self._one(
            conn, "SELECT state, agent FROM conversations WHERE id = %s FOR UPDATE",
            (conversation_id,),
        )  # fmt: skip
        if row is None:
            raise ConversationNotFound(f"conversation {conversation_id} not found")
        return State(row[0]), row[1]

    def _require(
        self,
        conn: psycopg.Connection[Any],
        conversation_id: int,
        expect: State,
        *,
        agent: str | None = None,
    ) -> None:
        """The conditional part of a write: the state (and owner) the service decided on."""
        state, owner = self._lock(conn, conversation_id)
        if state is not expect:
            raise StaleState(f"conversation {conversation_id} is {state.value} now")
        if agent is not None and owner != agent:
            raise StaleState(f"conversation {conversation_id} is claimed by {owner} now")

    _ENTRY = (
        "SELECT e.id, e.conversation_id, e.author, e.event, coalesce(e.text, t.text), e.agent,"
        " e.passage_id, e.passage_title, e.decision_id, e.feedback, e.params, e.created_at,"
        " q.entry_id IS NOT NULL"
        " FROM entries e LEFT JOIN passage_texts t ON t.digest = e.text_digest"
        " LEFT JOIN questions q ON q.entry_id = e.id"
    )

    @staticmethod
    def _to_entry(row: Any) -> ChatMessage | ChatEvent:
        (id_, conversation_id, author, event, text, agent, passage_id, title, decision_id,
         feedback, params, at, pending) = row  # fmt: skip
        if event is not None:
            return ChatEvent(
                id=id_,
                conversation_id=conversation_id,
                created_at=_stamp(at),
                event=EVENT_DATA.validate_json(params),
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

    def _entry(self, conn: psycopg.Connection[Any], entry_id: int) -> ChatMessage | ChatEvent:
        row = self._one(conn, f"{self._ENTRY} WHERE e.id = %s", (entry_id,))
        if row is None:
            raise StoreError(f"entry {entry_id} not found")
        return self._to_entry(row)

    def _message(self, conn: psycopg.Connection[Any], entry_id: int) -> ChatMessage:
        entry = self._entry(conn, entry_id)
        if not isinstance(entry, ChatMessage):
            raise StoreError(f"message {entry_id} not found")
        return entry

    def _append(
        self,
        conn: psycopg.Connection[Any],
        conversation_id: int,
        *,
        author: Author | None = None,
        event: EventData | None = None,
        text: str | None = None,
        agent: str | None = None,
        passage_id: str | None = None,
        passage_title: str | None = None,
        decision_id: int | None = None,
    ) -> int:
        """Append a message or an event to the log (inside `_write()`, which holds the append
        lock); a quoted passage's text is kept once."""
        now = self._now()
        key = None
        if passage_id is not None and text is not None:
            key = codec.digest(text)
            conn.execute(
                "INSERT INTO passage_texts VALUES (%s, %s) ON CONFLICT DO NOTHING", (key, text)
            )
            text = None
        searchable = author in (Author.CUSTOMER, Author.AGENT) and text is not None
        row = self._one(
            conn,
            "INSERT INTO entries (conversation_id, author, event, text, folded, text_digest,"
            " agent, passage_id, passage_title, decision_id, params, created_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (
                conversation_id,
                None if author is None else author.value,
                None if event is None else event.type.value,
                text,
                text.casefold() if searchable and text is not None else None,
                key,
                agent,
                passage_id,
                passage_title,
                decision_id,
                None if event is None else event.model_dump_json(),
                now,
            ),
        )
        conn.execute(
            "UPDATE conversations SET updated_at = %s WHERE id = %s", (now, conversation_id)
        )
        return int(row[0])

    def _escalate(
        self, conn: psycopg.Connection[Any], conversation_id: int, escalation: Escalation
    ) -> None:
        """Into the queue, with its event, and the question as a content gap."""
        now = self._now()
        (last_entry,) = self._one(
            conn,
            "SELECT coalesce(max(id), 0) FROM entries WHERE conversation_id = %s",
            (conversation_id,),
        )
        conn.execute(
            "UPDATE conversations SET state = 'waiting', agent = NULL, claimed_at = NULL,"
            " reason = %s, top_probability = %s, waiting_since = %s, question_entry = %s,"
            " updated_at = %s WHERE id = %s",
            (escalation.reason.value, escalation.top_probability, now,
             escalation.question_entry, now, conversation_id),
        )  # fmt: skip
        if escalation.question:
            conn.execute(
                "INSERT INTO escalations (conversation_id, question, reason, top_probability,"
                " after_message_id, created_at, question_key)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (conversation_id, escalation.question, escalation.reason.value,
                 escalation.top_probability, last_entry, now, question_key(escalation.question)),
            )  # fmt: skip
        self._append(conn, conversation_id, event=escalation.event())

    # -- the customer's side ----------------------------------------------------------------------

    def create_conversation(self) -> Conversation:
        with self._write(append=False) as conn:
            return self._conversation(conn, self._create(conn, State.BOT))

    def _create(self, conn: psycopg.Connection[Any], expect: State) -> int:
        """A new conversation, with the bot: what a write on a conversation not yet made expects.
        Nobody else sees it before the commit, so it needs no lock."""
        if expect is not State.BOT:
            raise StaleState(f"a new conversation is with the bot, not {expect.value}")
        now = self._now()
        (id_,) = self._one(
            conn,
            "INSERT INTO conversations (state, created_at, updated_at)"
            " VALUES ('bot', %s, %s) RETURNING id",
            (now, now),
        )
        return int(id_)

    def keep_conversations(self, conversation_ids: Sequence[int]) -> int:
        # Read first, as SQLite does: almost always none is empty, and nothing need be written.
        ids = list(dict.fromkeys(conversation_ids))
        if not ids:
            return 0
        empty = self._rows(
            f"SELECT c.id FROM conversations c WHERE c.id = ANY(%s) AND {EMPTY_SQL}", (ids,)
        )
        if not empty:
            return 0
        with self._write(append=False, notify=False) as conn:
            return conn.execute(
                "UPDATE conversations c SET updated_at = greatest(c.updated_at, %s)"
                f" WHERE c.id = ANY(%s) AND {EMPTY_SQL}",
                (self._now(), [id_ for (id_,) in empty]),
            ).rowcount

    def prune_empty_conversations(
        self, *, idle_s: float, after_id: int = 0, limit: int = 1000
    ) -> EmptySweep:
        cut = self._now() - idle_s
        rows = [
            (int(id_), bool(old), bool(used))
            for id_, old, used in self._rows(
                f"SELECT c.id, c.created_at < %(cut)s, {WRITTEN_SQL}"
                " FROM conversations c WHERE c.id > %(after)s ORDER BY c.id LIMIT %(limit)s",
                {"cut": cut, "after": after_id, "limit": limit},
            )
        ]
        doomed = [id_ for id_, old, used in rows if old and not used]
        deleted: list[int] = []
        if doomed:
            # Nobody is told: nobody saw them.
            with self._write(append=False, notify=False) as conn:
                (newest,) = self._one(conn, "SELECT coalesce(max(id), 0) FROM conversations")
                # Locked first (one being written or kept now is skipped, for the next sweep):
                # an entry needs its conversation's row (the foreign key's share lock), so none
                # is added until this commits, and the next statement sees every one before.
                locked = [
                    id_
                    for (id_,) in self._q(
                        conn,
                        "SELECT c.id FROM conversations c WHERE c.id = ANY(%(ids)s)"
                        " AND c.updated_at < %(cut)s AND c.id < %(newest)s"
                        " ORDER BY c.id FOR UPDATE SKIP LOCKED",
                        {"ids": doomed, "cut": cut, "newest": newest},
                    )
                ]
                if locked:
                    deleted = [
                        int(id_)
                        for (id_,) in self._q(
                            conn,
                            "SELECT c.id FROM conversations c"
                            f" WHERE c.id = ANY(%s) AND {EMPTY_SQL}",
                            (locked,),
                        )
                    ]
                if deleted:
                    for table, column in EMPTY_CHILDREN:
                        conn.execute(
                            f"DELETE FROM {table} WHERE {column} = ANY(%s)".encode(), (deleted,)
                        )
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
        with self._write() as conn:
            if conversation_id is None:
                conversation_id = self._create(conn, expect)
            else:
                self._require(conn, conversation_id, expect)
            if to is not expect:
                clear = ", agent = NULL, claimed_at = NULL" if to is State.BOT else ""
                conn.execute(
                    f"UPDATE conversations SET state = %s, waiting_since = NULL{clear}"
                    " WHERE id = %s".encode(),
                    (to.value, conversation_id),
                )
            for event in events:
                self._append(conn, conversation_id, event=event)
            entry = self._append(conn, conversation_id, author=Author.CUSTOMER, text=text)
            for event in then:
                self._append(conn, conversation_id, event=event)
            if pending:
                conn.execute(
                    "INSERT INTO questions (entry_id, conversation_id) VALUES (%s, %s)",
                    (entry, conversation_id),
                )
            elif to in (State.WAITING, State.CLAIMED):
                # Asked for a person before asking anything: this is the question they have.
                conn.execute(
                    "UPDATE conversations SET question_entry = %s"
                    " WHERE id = %s AND question_entry IS NULL",
                    (entry, conversation_id),
                )
            if escalation is not None:
                if as_question:  # This message is the question the person takes.
                    escalation = escalation.model_copy(
                        update={"question_entry": entry, "question": text}
                    )
                self._escalate(conn, conversation_id, escalation)
            return self._conversation(conn, conversation_id), self._message(conn, entry)

    def escalate(
        self, conversation_id: int | None, *, expect: State, escalation: Escalation
    ) -> Conversation:
        with self._write() as conn:
            if conversation_id is None:
                conversation_id = self._create(conn, expect)
            else:
                self._require(conn, conversation_id, expect)
            self._escalate(conn, conversation_id, escalation)
            return self._conversation(conn, conversation_id)

    def record_feedback(
        self,
        conversation_id: int,
        *,
        entry_id: int,
        value: Feedback,
        expect: State,
        escalation: Escalation | None,
    ) -> tuple[Conversation, ChatMessage]:
        with self._write() as conn:
            self._require(conn, conversation_id, expect)
            latest = self._one(
                conn,
                "SELECT id, feedback FROM entries WHERE conversation_id = %s AND author = 'bot'"
                " ORDER BY id DESC LIMIT 1",
                (conversation_id,),
            )
            if latest is None or latest[0] != entry_id:
                raise NotTheLatestAnswer(
                    f"message {entry_id} is not the latest answer in conversation {conversation_id}"
                )
            if latest[1] is not None:
                raise NotTheLatestAnswer(f"the answer {entry_id} has feedback already")
            conn.execute("UPDATE entries SET feedback = %s WHERE id = %s", (value.value, entry_id))
            self._append(conn, conversation_id, event=FeedbackGiven(entry=entry_id, value=value))
            if escalation is not None:
                self._escalate(conn, conversation_id, escalation)
            return self._conversation(conn, conversation_id), self._message(conn, entry_id)

    # -- the agent's side -------------------------------------------------------------------------

    def claim(self, conversation_id: int, *, agent: str, expect: State) -> ClaimResult:
        # A claim that cannot win (someone got there first) loses without a write: no wait for
        # the append lock behind other agents' commits. One that may win is decided below.
        current = self.conversation(conversation_id)
        if current.state is not expect:
            return ClaimResult(won=False, conversation=current)
        now = self._now()
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE conversations SET state = 'claimed', agent = %s, claimed_at = %s,"
                " updated_at = %s WHERE id = %s AND state = %s",
                (agent, now, now, conversation_id, expect.value),
            )
            won = cursor.rowcount == 1
            if won:
                self._append(conn, conversation_id, event=Claimed(agent=agent))
            return ClaimResult(won=won, conversation=self._conversation(conn, conversation_id))

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
        with self._write() as conn:
            self._require(conn, conversation_id, expect, agent=agent)
            row = conn.execute(
                f"{self._ENTRY} WHERE e.conversation_id = %s ORDER BY e.id DESC LIMIT 1",
                (conversation_id,),
            ).fetchone()
            latest = None if row is None else self._to_entry(row)
            now = self._now()
            said = same_reply(latest, agent=agent, text=text, passage_id=passage_id, now=now)
            if said is not None:  # Sent twice at once (two tabs): written once.
                return said
            entry = self._append(
                conn,
                conversation_id,
                author=Author.AGENT,
                text=text,
                agent=agent,
                passage_id=passage_id,
                passage_title=passage_title,
            )
            return self._message(conn, entry)

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
        with self._write() as conn:
            self._require(conn, conversation_id, expect, agent=agent)
            if away_s is not None:
                self._require_away(
                    conn, conversation_id, agent, self._now() - away_s, seen_until(last_seen)
                )
            if (
                seen
                and conn.execute(
                    "SELECT 1 FROM entries e JOIN read_markers r"
                    " ON r.conversation_id = e.conversation_id AND r.agent = %s"
                    " WHERE e.conversation_id = %s AND e.author = 'customer' AND e.id > r.entry_id"
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
                and conn.execute(
                    "SELECT 1 FROM entries WHERE conversation_id = %s AND author = 'customer'"
                    " AND id > %s LIMIT 1",
                    (conversation_id, question.read_to),
                ).fetchone()
            ):
                # Written after the service read the log to choose: it was not considered.
                raise StaleState(f"the customer wrote again in conversation {conversation_id}")
            conn.execute(
                f"UPDATE conversations SET state = %s, {assignments[to]} WHERE id = %s".encode(),
                (to.value, conversation_id),
            )
            self._append(conn, conversation_id, event=event)
            if to is State.BOT and question is not None and question.entry is not None:
                # The question the service chose (the customer's latest since the last reply, a
                # real one), for the bot now: left to a person who handed back without replying,
                # it would wait for nobody. Judged already or not: a decision kept silent (a
                # person had it) was never said.
                conn.execute(
                    "INSERT INTO questions (entry_id, conversation_id)"
                    " SELECT e.id, e.conversation_id FROM entries e"
                    " WHERE e.id = %s AND e.conversation_id = %s AND e.author = 'customer'"
                    " AND NOT EXISTS (SELECT 1 FROM questions q WHERE q.entry_id = e.id)",
                    (question.entry, conversation_id),
                )
            return self._conversation(conn, conversation_id)

    def claimed_by(self, agent: str) -> list[int]:
        rows = self._rows(
            "SELECT id FROM conversations WHERE state = 'claimed' AND agent = %s ORDER BY id",
            (agent,),
        )
        return [row[0] for row in rows]

    def add_note(self, conversation_id: int, *, agent: str, text: str) -> ChatEvent:
        with self._write() as conn:
            self._lock(conn, conversation_id)  # ConversationNotFound for an unknown id.
            entry = self._append(conn, conversation_id, event=Note(agent=agent, text=text))
            event = self._entry(conn, entry)
        assert isinstance(event, ChatEvent)
        return event

    def add_event(self, conversation_id: int, event: EventData, *, expect: State) -> ChatEvent:
        with self._write() as conn:
            self._require(conn, conversation_id, expect)
            entry = self._append(conn, conversation_id, event=event)
            added = self._entry(conn, entry)
        assert isinstance(added, ChatEvent)
        return added

    def agent_seen(
        self, agent: str, *, session: str | None = None, forget_s: float | None = None
    ) -> None:
        # No NOTIFY: presence is read on the consoles' own timer, and announcing each console's
        # tick woke every listener on every host to read `changes` and find nothing.
        now = self._now()
        with self._write(append=False, notify=False, flush=False) as conn:
            conn.execute(
                "INSERT INTO presence (agent, last_seen) VALUES (%s, %s)"
                " ON CONFLICT (agent)"
                " DO UPDATE SET last_seen = greatest(presence.last_seen, excluded.last_seen)",
                (agent, now),
            )
            if session is not None:
                conn.execute(
                    "INSERT INTO presence_sessions (agent, session, last_seen) VALUES (%s, %s, %s)"
                    " ON CONFLICT (agent, session) DO UPDATE"
                    " SET last_seen = greatest(presence_sessions.last_seen, excluded.last_seen)",
                    (agent, session, now),
                )
            if forget_s is not None:
                # After its own row, and passing over rows another console's transaction holds:
                # two consoles forgetting at once never wait on each other (nor deadlock, each
                # holding its own row and wanting the other's).
                conn.execute(
                    "DELETE FROM presence_sessions WHERE (agent, session) IN"
                    " (SELECT agent, session FROM presence_sessions WHERE last_seen < %s"
                    " FOR UPDATE SKIP LOCKED)",
                    (now - forget_s,),
                )

    def agents_seen(self) -> dict[str, datetime]:
        rows = self._rows("SELECT agent, last_seen FROM presence")
        return {agent: _stamp(seen) for agent, seen in rows}

    def sessions_seen(self, agent: str) -> dict[str, datetime]:
        rows = self._rows(
            "SELECT session, last_seen FROM presence_sessions WHERE agent = %s", (agent,)
        )
        return {session: _stamp(seen) for session, seen in rows}

    def session_ended(self, agent: str, *, session: str) -> None:
        with self._write(append=False, notify=False) as conn:
            conn.execute(
                "DELETE FROM presence_sessions WHERE agent = %s AND session = %s",
                (agent, session),
            )

    def away_claims(self, *, away_s: float) -> list[tuple[int, str]]:
        cut = self._now() - away_s
        rows = self._rows(
            "SELECT c.id, c.agent FROM presence p JOIN conversations c"
            " ON c.agent = p.agent AND c.state = 'claimed'"
            " WHERE p.last_seen < %(cut)s AND c.claimed_at < %(cut)s ORDER BY c.id",
            {"cut": cut},
        )
        return [(int(id_), str(agent)) for id_, agent in rows]

    def _require_away(
        self,
        conn: psycopg.Connection[Any],
        conversation_id: int,
        agent: str,
        cut: float,
        until: float | None,
    ) -> None:
        """The conditional part of releasing for an agent who left: still away (the presence
        row locked, so a console of theirs touching it waits for this release, or this sees
        its time), and the claim older than the time they count as away from."""
        seen = self._one(
            conn, "SELECT last_seen FROM presence WHERE agent = %s FOR UPDATE", (agent,)
        )
        claimed = self._one(
            conn, "SELECT claimed_at FROM conversations WHERE id = %s", (conversation_id,)
        )
        seen_cut = cut if until is None else min(cut, until)
        if seen is None or seen[0] >= seen_cut or claimed is None or (claimed[0] or cut) >= cut:
            raise StaleState(f"{agent} is back, or claimed conversation {conversation_id} since")

    def set_typing(self, conversation_id: int, *, author: Author, seconds: float | None) -> None:
        with self._write(append=False) as conn:
            if (
                self._one(conn, "SELECT 1 FROM conversations WHERE id = %s", (conversation_id,))
                is None
            ):
                raise ConversationNotFound(f"conversation {conversation_id} not found")
            if seconds is None:
                conn.execute(
                    "DELETE FROM typing WHERE conversation_id = %s AND author = %s",
                    (conversation_id, author.value),
                )
            else:
                conn.execute(
                    "INSERT INTO typing (conversation_id, author, until) VALUES (%s, %s, %s)"
                    " ON CONFLICT (conversation_id, author) DO UPDATE SET until = excluded.until",
                    (conversation_id, author.value, self._now() + seconds),
                )

    def typing(self, conversation_id: int) -> dict[Author, datetime]:
        rows = self._rows(
            "SELECT author, until FROM typing WHERE conversation_id = %s AND until > %s",
            (conversation_id, self._now()),
        )
        return {Author(author): datetime.fromtimestamp(until, UTC) for author, until in rows}

    def mark_read(self, conversation_id: int, *, agent: str, entry_id: int) -> None:
        with self._write(append=False) as conn:
            self._lock(conn, conversation_id)
            conn.execute(
                "INSERT INTO read_markers (conversation_id, agent, entry_id) VALUES (%s, %s, %s)"
                " ON CONFLICT (conversation_id, agent)"
                " DO UPDATE SET entry_id = greatest(read_markers.entry_id, excluded.entry_id)",
                (conversation_id, agent, entry_id),
            )

    # -- the bot's side ---------------------------------------------------------------------------

    def lease_questions(self, *, worker: str, limit: int, lease_s: float) -> list[PendingQuestion]:
        now = self._now()
        free = "lease_until IS NULL OR lease_until <= %s"
        # A read first: idle workers polling an empty queue never write (nor wake anyone).
        if not self._rows(f"SELECT 1 FROM questions WHERE {free} LIMIT 1", (now,)):
            return []
        with self._write(append=False) as conn:
            # Rows another worker is taking right now are skipped, not waited for; a row taken
            # and committed meanwhile is checked again against `free` when it is locked.
            taken = self._q(
                conn,
                "UPDATE questions SET lease_owner = %s, lease_until = %s,"
                " attempts = attempts + 1 WHERE entry_id IN (SELECT entry_id FROM questions"
                f" WHERE {free} ORDER BY entry_id LIMIT %s FOR UPDATE SKIP LOCKED)"
                " RETURNING entry_id",
                (worker, now + lease_s, now, limit),
            )
            return self._pending(conn, [row[0] for row in taken])

    def _pending(self, conn: psycopg.Connection[Any], ids: Sequence[int]) -> list[PendingQuestion]:
        rows = self._q(
            conn,
            "SELECT q.entry_id, q.conversation_id, e.text, e.created_at, q.attempts,"
            f" q.lease_owner, q.lease_until, ({_LOCALE.format(conversation='q.conversation_id')})"
            " FROM questions q JOIN entries e ON e.id = q.entry_id"
            " WHERE q.entry_id = ANY(%s) ORDER BY q.entry_id",
            (list(ids),),
        )
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
        with self._write(append=False) as conn:
            rows = self._q(
                conn,
                "UPDATE questions SET lease_until = %s WHERE lease_owner = %s"
                " AND entry_id = ANY(%s) RETURNING entry_id",
                (self._now() + lease_s, worker, list(question_ids)),
            )
        return sorted(row[0] for row in rows)

    def release_leases(self, *, worker: str, question_ids: Sequence[int]) -> int:
        if not question_ids:
            return 0
        with self._write(append=False) as conn:
            cursor = conn.execute(
                "UPDATE questions SET lease_owner = NULL, lease_until = NULL,"
                " attempts = greatest(attempts - 1, 0) WHERE lease_owner = %s"
                " AND entry_id = ANY(%s)",
                (worker, list(question_ids)),
            )
            return cursor.rowcount

    def next_lease_expiry(self) -> float | None:
        [(until,)] = self._rows(
            "SELECT min(lease_until) FROM questions WHERE lease_until IS NOT NULL"
        )
        return None if until is None else max(0.0, until - self._now())

    def bot_holds(self) -> int:
        [(count,)] = self._rows(
            "SELECT count(*) FROM questions WHERE lease_until > %s", (self._now(),)
        )
        return int(count)

    def bot_backlog(self) -> tuple[int, float | None]:
        now = self._now()
        [(count, oldest)] = self._rows(
            "SELECT count(*), min(e.created_at)"
            " FROM questions q JOIN entries e ON e.id = q.entry_id"
            " WHERE q.lease_until IS NULL OR q.lease_until <= %s",
            (now,),
        )
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
        with self._write() as conn:
            held = self._one(
                conn,
                "SELECT conversation_id, lease_owner FROM questions WHERE entry_id = %s FOR UPDATE",
                (question_id,),
            )
            if held is None or held[1] != worker:
                raise LeaseLost(f"question {question_id} is no longer leased to {worker}")
            conversation_id = held[0]
            self._require(conn, conversation_id, expect)
            if (
                answer
                and expect is State.WAITING
                and self._one(
                    conn,
                    "SELECT 1 FROM conversations WHERE id = %s AND question_entry = %s",
                    (conversation_id, question_id),
                )
            ):
                # Escalated again with this very question since the service read it: a person
                # takes that one up, the bot never answers it.
                raise StaleState(
                    f"conversation {conversation_id} waits with question {question_id}"
                )
            stored: StoredDecision | None = None
            if decision is not None:
                body, texts = codec.compact(decision)
                with conn.cursor() as cursor:
                    cursor.executemany(
                        "INSERT INTO passage_texts VALUES (%s, %s) ON CONFLICT DO NOTHING",
                        list(texts.items()),
                    )
                (question,) = self._one(
                    conn, "SELECT text FROM entries WHERE id = %s", (question_id,)
                )
                numbers = self._revision_ids(conn, codec.revisions(decision)[0])
                packed = codec.encode(decision, question, numbers)
                (decision_id,) = self._one(
                    conn,
                    "INSERT INTO decisions (conversation_id, message_id, worker, answer_id,"
                    " reason, top_probability, latency_ms, body, packed, created_at)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
                    (
                        conversation_id,
                        question_id,
                        worker,
                        None if decision.answer is None else decision.answer.id,
                        None if decision.reason is None else decision.reason.value,
                        decision.top_probability,
                        decision.latency_ms,
                        json.dumps(body) if packed is None else None,
                        packed,
                        now,
                    ),
                )
                with conn.cursor() as cursor:
                    cursor.executemany(
                        "INSERT INTO judgment_errors (decision_id, kind, count, created_at)"
                        " VALUES (%s, %s, %s, %s)",
                        [
                            (decision_id, kind, count, now)
                            for kind, count in judgment_error_counts(body).items()
                        ],
                    )
                stored = StoredDecision(
                    id=decision_id,
                    conversation_id=conversation_id,
                    message_id=question_id,
                    created_at=_stamp(now),
                    worker=worker,
                    decision=decision,
                )
                self._append(
                    conn,
                    conversation_id,
                    event=Decided(decision=stored.id, question_entry=question_id, outcome=outcome),
                )
            if answer:
                if decision is None or decision.answer is None:
                    raise StoreError(f"question {question_id}: an answer needs a decision")
                self._append(
                    conn,
                    conversation_id,
                    author=Author.BOT,
                    text=decision.answer.text,
                    passage_id=decision.answer.id,
                    passage_title=decision.answer.title or None,
                    decision_id=None if stored is None else stored.id,
                )
            elif escalation is not None:
                self._escalate(conn, conversation_id, escalation)
            conn.execute("DELETE FROM questions WHERE entry_id = %s", (question_id,))
            return DecisionResult(
                outcome=outcome,
                conversation=self._conversation(conn, conversation_id),
                decision=stored,
            )

    def _revision_ids(
        self, conn: psycopg.Connection[Any], revisions: Sequence[codec.Revision]
    ) -> dict[codec.Revision, int]:
        """The number of each passage revision, numbering those seen for the first time (a
        revision another transaction is adding meanwhile is waited for, then read)."""
        find = (
            "SELECT id FROM passage_revisions WHERE digest = %s AND passage_id = %s AND title = %s"
        )
        numbers: dict[codec.Revision, int] = {}
        for revision in revisions:
            key = (revision.digest, revision.passage_id, revision.title)
            row = self._one(conn, find, key) or self._one(
                conn,
                "INSERT INTO passage_revisions (digest, passage_id, title) VALUES (%s, %s, %s)"
                " ON CONFLICT DO NOTHING RETURNING id",
                key,
            )
            row = row or self._one(conn, find, key)
            numbers[revision] = int(row[0])
        return numbers

    # -- content gaps -----------------------------------------------------------------------------

    def content_gaps(self, *, include_handled: bool = True, limit: int = 200) -> list[ContentGap]:
        conn = self._link.connection()

        def run(sql: str, params: Any) -> list[Any]:
            return conn.execute(sql.encode(), params).fetchall()

        try:
            with self._link.watched(conn), conn.transaction():
                conn.execute(GAPS_BEGIN)  # Its reads see one moment.
                return gaps_sql.content_gaps(
                    run, PostgresDialect(), include_handled=include_handled, limit=limit
                )
        except psycopg.Error as error:
            if conn.broken or conn.closed:
                self._link.drop()
            raise self._link.fail(error, "cannot read the content gaps") from None

    def mark_gap_handled(self, gap_id: int, *, passage_id: str) -> None:
        key = PostgresDialect().gap_key("escalations")
        with self._write(append=False) as conn:
            row = self._one(conn, f"SELECT {key} FROM escalations WHERE id = %s", (gap_id,))
            if row is None:
                raise StoreError(f"content gap {gap_id} not found")
            # The gap is every open escalation of its question (`stats_sql.question_key`).
            conn.execute(
                "UPDATE escalations SET handled_at = %s, passage_id = %s WHERE id = %s"
                " OR (handled_at IS NULL AND (question_key = %s"
                f" OR (question_key IS NULL AND {key} = %s)))",
                (self._now(), passage_id, gap_id, row[0], row[0]),
            )

    # -- reading ----------------------------------------------------------------------------------

    def conversation(self, conversation_id: int) -> Conversation:
        rows = self._rows(f"{self._CONVERSATION} WHERE c.id = %s", (conversation_id,))
        if not rows:
            raise ConversationNotFound(f"conversation {conversation_id} not found")
        return self._to_conversation(rows[0])

    def conversations(
        self,
        *,
        state: State | None = None,
        after_id: int = 0,
        limit: int = 100,
        include_empty: bool = True,
    ) -> list[Conversation]:
        written = "" if include_empty else f" AND {WRITTEN_SQL}"
        rows = self._rows(
            f"{self._CONVERSATION} WHERE c.id > %s AND (%s::text IS NULL OR c.state = %s)"
            f"{written} ORDER BY c.id LIMIT %s",
            (after_id, None if state is None else state.value,
             None if state is None else state.value, limit),
        )  # fmt: skip
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
            rows = self._rows(
                f"{self._ENTRY} WHERE e.conversation_id = %s AND e.id > %s ORDER BY e.id",
                (conversation_id, after_id),
            )
        else:
            # The newest `limit` before `before_id`: read backwards along the index, then turn.
            rows = self._rows(
                f"{self._ENTRY} WHERE e.conversation_id = %s AND e.id > %s AND e.id < %s"
                " ORDER BY e.id DESC LIMIT %s",
                (conversation_id, after_id, before_id or 2**62, limit),
            )
            rows.reverse()
        return [self._to_entry(row) for row in rows]

    def entries_of(self, conversation_ids: Sequence[int]) -> dict[int, list[Entry]]:
        logs: dict[int, list[Entry]] = {id_: [] for id_ in conversation_ids}
        rows = self._rows(
            f"{self._ENTRY} WHERE e.conversation_id = ANY(%s) ORDER BY e.id", (list(logs),)
        )
        for row in rows:
            logs[row[1]].append(self._to_entry(row))
        return logs

    def count_entries(
        self, conversation_id: int, *, before_id: int, limit: int | None = None
    ) -> int:
        [(count,)] = self._rows(
            "SELECT count(*) FROM (SELECT 1 FROM entries WHERE conversation_id = %s AND id < %s"
            " AND (event IS NULL OR event != %s) ORDER BY id DESC LIMIT %s) AS counted",
            (conversation_id, before_id, EventType.DECIDED.value, limit),
        )
        return int(count)

    def latest_answer(self, conversation_id: int) -> ChatMessage | None:
        rows = self._rows(
            f"{self._ENTRY} WHERE e.conversation_id = %s AND e.author = 'bot'"
            " ORDER BY e.id DESC LIMIT 1",
            (conversation_id,),
        )
        entry = self._to_entry(rows[0]) if rows else None
        return entry if isinstance(entry, ChatMessage) else None

    def latest_question(self, conversation_id: int) -> tuple[ChatMessage, float | None] | None:
        rows = self._rows(
            f"{self._ENTRY} WHERE e.conversation_id = %s AND e.author = 'customer'"
            " ORDER BY e.id DESC LIMIT 1",
            (conversation_id,),
        )
        entry = self._to_entry(rows[0]) if rows else None
        if not isinstance(entry, ChatMessage):
            return None
        top = self._rows(
            "SELECT top_probability FROM decisions WHERE message_id = %s ORDER BY id DESC LIMIT 1",
            (entry.id,),
        )
        return entry, top[0][0] if top else None

    def latest_questions(
        self, conversation_id: int, *, before_id: int | None = None, limit: int
    ) -> list[tuple[ChatMessage, float | None]]:
        # Along `entries_by_author` backwards, then `decisions_by_message` for the page's
        # scores: a page costs the same however long the conversation is.
        rows = self._rows(
            f"{self._ENTRY} WHERE e.conversation_id = %s AND e.author = 'customer' AND e.id < %s"
            " ORDER BY e.id DESC LIMIT %s",
            (conversation_id, 2**62 if before_id is None else before_id, limit),
        )
        messages = [m for m in map(self._to_entry, rows) if isinstance(m, ChatMessage)]
        if not messages:
            return []
        # Oldest first: each message's latest decision is the one kept.
        tops: dict[int, float | None] = dict(
            self._rows(
                "SELECT message_id, top_probability FROM decisions WHERE message_id = ANY(%s)"
                " ORDER BY id",
                ([m.id for m in messages],),
            )
        )
        return [(message, tops.get(message.id)) for message in messages]

    _DECISION = (
        "SELECT id, conversation_id, message_id, worker, created_at, body, packed,"
        " (SELECT e.text FROM entries e WHERE e.id = decisions.message_id), latency_ms"
        " FROM decisions"
    )

    def _to_decisions(self, rows: Sequence[Any]) -> list[StoredDecision]:
        # Each row has the compact body (JSON) or the positional one (bytes), never both.
        return codec.stored_decisions(
            [
                (
                    *row[:4],
                    _stamp(row[4]),
                    bytes(row[6]) if row[6] is not None else json.loads(row[5]),
                    *row[7:],
                )
                for row in rows
            ],  # fmt: skip
            revisions_of=lambda numbers: self._rows(
                "SELECT id, passage_id, title, digest FROM passage_revisions WHERE id = ANY(%s)",
                (numbers,),
            ),
            texts_of=lambda wanted: self._rows(
                "SELECT digest, text FROM passage_texts WHERE digest = ANY(%s)", (wanted,)
            ),
        )

    def decision(self, decision_id: int) -> StoredDecision:
        rows = self._rows(f"{self._DECISION} WHERE id = %s", (decision_id,))
        if not rows:
            raise StoreError(f"decision {decision_id} not found")
        return self._to_decisions(rows)[0]

    def decisions(self, conversation_id: int) -> list[StoredDecision]:
        rows = self._rows(
            f"{self._DECISION} WHERE conversation_id = %s ORDER BY id", (conversation_id,)
        )
        return self._to_decisions(rows)

    def decisions_of(self, conversation_ids: Sequence[int]) -> dict[int, list[StoredDecision]]:
        found: dict[int, list[StoredDecision]] = {id_: [] for id_ in conversation_ids}
        rows = self._rows(
            f"{self._DECISION} WHERE conversation_id = ANY(%s) ORDER BY id", (list(found),)
        )
        for stored in self._to_decisions(rows):
            found[stored.conversation_id].append(stored)
        return found

    def latest_decision(self, conversation_id: int) -> StoredDecision | None:
        rows = self._rows(
            f"{self._DECISION} WHERE conversation_id = %s ORDER BY id DESC LIMIT 1",
            (conversation_id,),
        )
        return self._to_decisions(rows)[0] if rows else None

    def decisions_since(self, conversation_id: int, message_id: int) -> list[StoredDecision]:
        # From the questions (entries_by_author's range, then decisions_by_message), not from
        # every decision of a long conversation.
        rows = self._rows(
            f"{self._DECISION} WHERE message_id IN (SELECT q.id FROM entries q"
            " WHERE q.conversation_id = %s AND q.author = 'customer' AND q.id >= %s) ORDER BY id",
            (conversation_id, message_id),
        )
        return self._to_decisions(rows)

    _QUEUE = (
        "SELECT c.id, c.state, coalesce(c.waiting_since, c.updated_at), c.reason,"
        " c.top_probability, c.agent, c.claimed_at, c.question_entry,"
        " (SELECT e.text FROM entries e WHERE e.id = c.question_entry),"
        " (SELECT coalesce(max(e.id), 0) FROM entries e"
        "  WHERE e.conversation_id = c.id AND e.author = 'customer'),"
        " coalesce((SELECT r.entry_id FROM read_markers r"
        "  WHERE r.conversation_id = c.id AND r.agent = %(agent)s), 0)"
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
        """Waiting conversations, then this agent's claims: two index ranges, as in SQLite."""
        rows = self._rows(
            f"{self._QUEUE} WHERE c.state = 'waiting' ORDER BY c.waiting_since, c.id",
            {"agent": agent},
        )
        if agent is not None:
            rows += self._rows(
                f"{self._QUEUE} WHERE c.state = 'claimed' AND c.agent = %(agent)s"
                " ORDER BY c.waiting_since, c.id",
                {"agent": agent},
            )
        return self._to_items(rows)

    def waiting_ahead(self, conversation_id: int) -> int | None:
        rows = self._rows(
            "SELECT (SELECT count(*) FROM conversations w WHERE w.state = 'waiting'"
            " AND w.waiting_since <= c.waiting_since"
            " AND (w.waiting_since < c.waiting_since OR w.id < c.id))"
            " FROM conversations c WHERE c.id = %s AND c.state = 'waiting'",
            (conversation_id,),
        )
        return None if not rows else int(rows[0][0])

    def longest_waiting(self, limit: int) -> list[int]:
        rows = self._rows(
            "SELECT id FROM conversations WHERE state = 'waiting'"
            " ORDER BY waiting_since, id LIMIT %s",
            (limit,),
        )
        return [int(row[0]) for row in rows]

    def queue_items(self, conversation_ids: Sequence[int], *, agent: str | None) -> list[QueueItem]:
        ids = list(dict.fromkeys(conversation_ids))
        if not ids:
            return []
        rows = self._rows(
            f"{self._QUEUE} WHERE c.id = ANY(%(ids)s) AND (c.state = 'waiting'"
            " OR (c.state = 'claimed' AND c.agent = %(agent)s))",
            {"agent": agent, "ids": ids},
        )
        return self._to_items(rows)

    def claims(self) -> list[QueueItem]:
        rows = self._rows(
            f"{self._QUEUE} WHERE c.state = 'claimed' ORDER BY c.agent, c.claimed_at, c.id",
            {"agent": None},
        )
        return self._to_items(rows)

    def search(
        self, text: str, *, state: State | None = None, limit: int = 50, number: bool = False
    ) -> list[SearchHit]:
        # The customer's and agents' messages (`folded`), and agents' internal notes (only
        # agents search), whose text is in the event's JSON, read only for notes (CASE). A note
        # has no `folded` text: it is lowered here, and matched against the words both case-folded
        # and lowered, so "straße" finds "Straße" in a note, though "strasse" does not.
        note = "lower(CASE WHEN e.event = 'note' THEN e.params::json ->> 'text' END)"
        if number:  # Digits with no digit either side (`chatbot.text.number_pattern`).
            said = "strpos(e.folded, %(text)s) > 0 AND e.folded ~ %(alone)s"
            noted = f"strpos({note}, %(text)s) > 0 AND {note} ~ %(alone)s"
        else:
            said = "strpos(e.folded, %(text)s) > 0"
            noted = f"(strpos({note}, %(text)s) > 0 OR strpos({note}, %(lowered)s) > 0)"
        rows = self._rows(
            "SELECT c.id, c.state, c.agent, c.updated_at, m.entry, e.text,"
            " CASE WHEN e.event = 'note' THEN e.params END FROM"
            " (SELECT e.conversation_id AS conversation, max(e.id) AS entry FROM entries e"
            "  JOIN conversations c ON c.id = e.conversation_id"
            f"  WHERE (e.folded IS NOT NULL AND {said} OR e.event = 'note' AND {noted})"
            "  AND (%(state)s::text IS NULL OR c.state = %(state)s)"
            "  GROUP BY e.conversation_id) m"
            " JOIN conversations c ON c.id = m.conversation JOIN entries e ON e.id = m.entry"
            " ORDER BY c.updated_at DESC, c.id DESC LIMIT %(limit)s",
            {
                "state": None if state is None else state.value,
                "text": text.casefold(),
                "lowered": text.lower(),
                # Digits, nothing to escape; as `number_pattern` (PostgreSQL's lookbehinds).
                "alone": f"(?<![[:digit:]])(?<![[:digit:]][.,]){text}"
                "(?![[:digit:]])(?![.,][[:digit:]])",
                "limit": limit,
            },
        )
        return [search_hit(row) for row in rows]

    def stats(
        self, since: datetime | None, *, thresholds: Sequence[float] = STAT_THRESHOLDS
    ) -> DeskStats:
        """The shared aggregate SQL in one read-only snapshot, so every figure sees one moment."""
        conn = self._link.connection()

        def run(sql: str, params: Any) -> list[Any]:
            return conn.execute(sql.encode(), params).fetchall()

        try:
            with self._link.watched(conn), conn.transaction():
                conn.execute(STATS_BEGIN)
                return compute_stats(
                    run, PostgresDialect(), since=since, now=self._clock(), thresholds=thresholds
                )
        except psycopg.Error as error:
            if conn.broken or conn.closed:
                self._link.drop()
            raise self._link.fail(error, "cannot compute the figures") from None

    def last_entry_id(self) -> int:
        [(last,)] = self._rows("SELECT coalesce(max(id), 0) FROM entries")
        return int(last)

    def changes(self, *, after: int) -> Changes:
        # Entries are committed in id order (the append lock), so everything up to the cursor
        # read here is already visible to the next statement.
        [(cursor,)] = self._rows("SELECT coalesce(max(id), 0) FROM entries")
        rows = self._rows(
            "SELECT DISTINCT conversation_id FROM entries WHERE id > %s AND id <= %s"
            " ORDER BY conversation_id",
            (after, cursor),
        )
        return Changes(cursor=max(cursor, after), conversation_ids=tuple(row[0] for row in rows))
