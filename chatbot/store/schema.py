"""The SQLite schema as a list of migrations; `PRAGMA user_version` counts the ones applied.

Append a migration to change the schema; never edit one that has shipped, since databases in the
field already ran it. A migration is SQL statements, or a function for what SQL alone cannot do;
each runs inside the one transaction that also moves `user_version`, so it applies whole or not
at all.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

from chatbot.desk.models import (
    Claimed,
    Escalated,
    EventData,
    HandedBack,
    Resolved,
)
from chatbot.engine.models import Decision, Reason
from chatbot.store.codec import compact, digest, unjudged
from chatbot.store.stats_sql import question_key

Migration = tuple[str, ...] | Callable[[sqlite3.Connection], None]

MIGRATIONS: list[Migration] = [
    # 1: conversations, their transcript, the engine's decisions and the escalations that the
    # knowledge-base editor lists as content gaps.
    (
        """
        CREATE TABLE conversations (
            id              INTEGER PRIMARY KEY,
            state           TEXT NOT NULL DEFAULT 'bot'
                            CHECK (state IN ('bot', 'waiting', 'claimed', 'resolved')),
            agent           TEXT,
            reason          TEXT,
            top_probability REAL,
            waiting_since   REAL,
            created_at      REAL NOT NULL,
            updated_at      REAL NOT NULL
        )
        """,
        "CREATE INDEX conversations_by_state ON conversations (state, waiting_since)",
        """
        CREATE TABLE messages (
            id              INTEGER PRIMARY KEY,
            conversation_id INTEGER NOT NULL REFERENCES conversations (id),
            author          TEXT NOT NULL
                            CHECK (author IN ('customer', 'bot', 'agent', 'system')),
            text            TEXT NOT NULL,
            agent           TEXT,
            passage_id      TEXT,
            passage_title   TEXT,
            decision_id     INTEGER REFERENCES decisions (id),
            feedback        TEXT CHECK (feedback IN ('helpful', 'not-helpful')),
            created_at      REAL NOT NULL
        )
        """,
        "CREATE INDEX messages_by_conversation ON messages (conversation_id, id)",
        """
        CREATE TABLE decisions (
            id              INTEGER PRIMARY KEY,
            conversation_id INTEGER NOT NULL REFERENCES conversations (id),
            message_id      INTEGER NOT NULL REFERENCES messages (id),
            answer_id       TEXT,
            reason          TEXT,
            top_probability REAL,
            latency_ms      REAL NOT NULL,
            body            TEXT NOT NULL,
            created_at      REAL NOT NULL
        )
        """,
        "CREATE INDEX decisions_by_conversation ON decisions (conversation_id, id)",
        """
        CREATE TABLE escalations (
            id               INTEGER PRIMARY KEY,
            conversation_id  INTEGER NOT NULL REFERENCES conversations (id),
            question         TEXT NOT NULL,
            reason           TEXT NOT NULL,
            top_probability  REAL,
            after_message_id INTEGER NOT NULL,
            created_at       REAL NOT NULL,
            handled_at       REAL,
            passage_id       TEXT
        )
        """,
        "CREATE INDEX escalations_newest ON escalations (created_at DESC, id DESC)",
    ),
    # 2: each agent's claimed conversations, for `Store.queue(agent=...)`. Only claimed rows are
    # indexed, so the index stays as small as the claims still open.
    (
        "CREATE INDEX conversations_claimed_by_agent ON conversations (agent, waiting_since)"
        " WHERE state = 'claimed'",
    ),
]


# -- 3: one log of messages and typed events; pending questions and leases; compact decisions ----

# The sentences version 2 stored as system messages, turned into events by migration 3.
V2_ESCALATED_NOTICE = (
    "The bot could not answer this from the help center. A person will reply here."
)
V2_ASKED_NOTICE = "A person will reply here."
V2_JOINED = " joined the conversation."
V2_RESOLVED = " marked this resolved. Write again any time."
V2_HANDED_BACK = " handed the conversation back to the bot."

V3_TABLES = (
    # Each distinct passage text once: decisions and bot answers refer to it by digest.
    """
    CREATE TABLE passage_texts (
        digest TEXT PRIMARY KEY,
        text   TEXT NOT NULL
    ) WITHOUT ROWID
    """,
    # A conversation's log: messages (author set) and typed events (event set, params JSON), in
    # one total order by id. A message quoting a passage refers to its text by digest.
    """
    CREATE TABLE entries (
        id              INTEGER PRIMARY KEY,
        conversation_id INTEGER NOT NULL REFERENCES conversations (id),
        author          TEXT CHECK (author IN ('customer', 'bot', 'agent')),
        event           TEXT,
        text            TEXT,
        text_digest     TEXT REFERENCES passage_texts (digest),
        agent           TEXT,
        passage_id      TEXT,
        passage_title   TEXT,
        decision_id     INTEGER,
        feedback        TEXT CHECK (feedback IN ('helpful', 'not-helpful')),
        params          TEXT,
        created_at      REAL NOT NULL,
        CHECK ((author IS NULL) != (event IS NULL))
    )
    """,
    "CREATE INDEX entries_by_conversation ON entries (conversation_id, id)",
    "CREATE INDEX entries_by_author ON entries (conversation_id, author, id)"
    " WHERE author IS NOT NULL",
    # Customer questions the bot has still to decide on, with the lease of the worker judging
    # each; a row is deleted when the question is settled, so the table stays as small as the
    # work outstanding.
    """
    CREATE TABLE questions (
        entry_id        INTEGER PRIMARY KEY REFERENCES entries (id),
        conversation_id INTEGER NOT NULL REFERENCES conversations (id),
        lease_owner     TEXT,
        lease_until     REAL,
        attempts        INTEGER NOT NULL DEFAULT 0
    )
    """,
    "CREATE INDEX questions_by_conversation ON questions (conversation_id)",
    # The decision as the engine made it, minus the passage texts (see chatbot.store.codec).
    """
    CREATE TABLE decisions (
        id              INTEGER PRIMARY KEY,
        conversation_id INTEGER NOT NULL REFERENCES conversations (id),
        message_id      INTEGER NOT NULL REFERENCES entries (id),
        worker          TEXT,
        answer_id       TEXT,
        reason          TEXT,
        top_probability REAL,
        latency_ms      REAL NOT NULL,
        body            TEXT NOT NULL,
        created_at      REAL NOT NULL
    )
    """,
    "CREATE INDEX decisions_by_conversation ON decisions (conversation_id, id)",
    "CREATE INDEX decisions_by_message ON decisions (message_id, id)",
    "ALTER TABLE conversations ADD COLUMN claimed_at REAL",
    "ALTER TABLE conversations ADD COLUMN question_entry INTEGER",
)


def _v2_event(
    db: sqlite3.Connection, conversation_id: int, message_id: int, text: str
) -> EventData:
    """The typed event a version-2 system message stood for."""
    for suffix, kind in ((V2_JOINED, Claimed), (V2_RESOLVED, Resolved),
                         (V2_HANDED_BACK, HandedBack)):  # fmt: skip
        if text.endswith(suffix):
            return kind(agent=text[: -len(suffix)])
    if text not in (V2_ESCALATED_NOTICE, V2_ASKED_NOTICE):
        raise sqlite3.DatabaseError(f"message {message_id}: unrecognised system message {text!r}")
    # Version 2 recorded the escalation with the newest message id before its notice.
    (before,) = db.execute(
        "SELECT coalesce(max(id), 0) FROM messages WHERE conversation_id = ? AND id < ?",
        (conversation_id, message_id),
    ).fetchone()
    found = db.execute(
        "SELECT reason, top_probability FROM escalations"
        " WHERE conversation_id = ? AND after_message_id = ? ORDER BY id DESC LIMIT 1",
        (conversation_id, before),
    ).fetchone()
    (question,) = db.execute(
        "SELECT max(id) FROM messages WHERE conversation_id = ? AND id < ? AND author = 'customer'",
        (conversation_id, message_id),
    ).fetchone()
    if found is not None:
        reason, top = Reason(found[0]), found[1]
    else:  # No question was asked: a customer who asked for a person straight away.
        reason, top = Reason.CUSTOMER_ASKED, None
    return Escalated(reason=reason, top_probability=top, question_entry=question)


def _migrate_to_v3(db: sqlite3.Connection) -> None:
    # The old and new tables refer to each other while rows move; checked again at commit.
    db.execute("PRAGMA defer_foreign_keys = ON")
    db.execute("ALTER TABLE decisions RENAME TO decisions_v2")
    db.execute("DROP INDEX decisions_by_conversation")  # Its name is taken again below.
    for statement in V3_TABLES:
        db.execute(statement)

    rows = db.execute(
        "SELECT id, conversation_id, author, text, agent, passage_id, passage_title,"
        " decision_id, feedback, created_at FROM messages ORDER BY id"
    ).fetchall()
    for id_, conversation, author, text, agent, passage_id, title, decision, feedback, at in rows:
        if author == "system":
            event = _v2_event(db, conversation, id_, text)
            db.execute(
                "INSERT INTO entries (id, conversation_id, event, params, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (id_, conversation, event.type.value, event.model_dump_json(), at),
            )
            continue
        key = None
        if passage_id is not None and author != "customer":
            key = digest(text)
            db.execute("INSERT OR IGNORE INTO passage_texts VALUES (?, ?)", (key, text))
        db.execute(
            "INSERT INTO entries (id, conversation_id, author, text, text_digest, agent,"
            " passage_id, passage_title, decision_id, feedback, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (id_, conversation, author, None if key else text, key, agent, passage_id, title,
             decision, feedback, at),
        )  # fmt: skip

    old = db.execute(
        "SELECT id, conversation_id, message_id, answer_id, reason, top_probability, latency_ms,"
        " body, created_at FROM decisions_v2 ORDER BY id"
    ).fetchall()
    for id_, conversation, message, answer, reason, top, latency, body, at in old:
        stored, texts = compact(Decision.model_validate_json(body))
        db.executemany("INSERT OR IGNORE INTO passage_texts VALUES (?, ?)", texts.items())
        db.execute(
            "INSERT INTO decisions (id, conversation_id, message_id, answer_id, reason,"
            " top_probability, latency_ms, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (id_, conversation, message, answer, reason, top, latency, json.dumps(stored), at),
        )

    # Where each conversation stands: the question behind its last escalation, its claim time.
    for (conversation,) in db.execute("SELECT id FROM conversations").fetchall():
        escalated = db.execute(
            "SELECT params FROM entries WHERE conversation_id = ? AND event = 'escalated'"
            " ORDER BY id DESC LIMIT 1",
            (conversation,),
        ).fetchone()
        claimed = db.execute(
            "SELECT created_at FROM entries WHERE conversation_id = ? AND event = 'claimed'"
            " ORDER BY id DESC LIMIT 1",
            (conversation,),
        ).fetchone()
        question = None if escalated is None else json.loads(escalated[0])["question_entry"]
        db.execute(
            "UPDATE conversations SET question_entry = ?,"
            " claimed_at = CASE WHEN state IN ('claimed', 'resolved') THEN ? END WHERE id = ?",
            (question, None if claimed is None else claimed[0], conversation),
        )
    db.execute("DROP TABLE messages")
    db.execute("DROP TABLE decisions_v2")


MIGRATIONS.append(_migrate_to_v3)  # 3: defined after the list, being a function.

# 4: accounts for `helpdesk serve` (agents, editors, admins) and server-wide secrets by name (the
# key that signs web sessions), so every process sharing the database accepts the same cookies.
MIGRATIONS.append(
    (
        """
        CREATE TABLE accounts (
            name          TEXT PRIMARY KEY,
            display_name  TEXT NOT NULL,
            role          TEXT NOT NULL CHECK (role IN ('agent', 'editor', 'admin')),
            password_hash TEXT NOT NULL,
            session_epoch INTEGER NOT NULL DEFAULT 0,
            created_at    REAL NOT NULL,
            updated_at    REAL NOT NULL
        )
        """,
        """
        CREATE TABLE server_secrets (
            name  TEXT PRIMARY KEY,
            value BLOB NOT NULL
        )
        """,
    )
)

MIGRATIONS.append(
    # 5: how far each agent has read each conversation, for the queue's unread marks. One row per
    # (conversation, agent) who opened it; the customer's newest message is read off
    # entries_by_author, so nothing else needs to change when the customer writes.
    (
        """
        CREATE TABLE read_markers (
            conversation_id INTEGER NOT NULL REFERENCES conversations (id),
            agent           TEXT NOT NULL,
            entry_id        INTEGER NOT NULL,
            PRIMARY KEY (conversation_id, agent)
        ) WITHOUT ROWID
        """,
        # The team view: every claim, by agent.
        "CREATE INDEX conversations_claimed ON conversations (agent, claimed_at)"
        " WHERE state = 'claimed'",
    )
)


# -- 6: analytics (`helpdesk stats`): indexes for the aggregate queries, and Valen's errors -------

V6_STATEMENTS = (
    # Conversations started in a window (counts, per day, the bot's resolution rate).
    "CREATE INDEX conversations_by_created ON conversations (created_at)",
    # Customer and bot messages in a window (questions, answers, questions per hour).
    "CREATE INDEX entries_by_author_time ON entries (author, created_at) WHERE author IS NOT NULL",
    # One conversation's messages by author, now with their times: the first agent reply after
    # an escalation is read off the index alone. Same name, wider: it replaces migration 3's.
    "DROP INDEX entries_by_author",
    "CREATE INDEX entries_by_author ON entries (conversation_id, author, id, created_at)"
    " WHERE author IS NOT NULL",
    # Events in a window (escalations by reason, resolutions), with what those queries read ...
    "CREATE INDEX entries_by_event_time ON entries (event, created_at, conversation_id)"
    " WHERE event IS NOT NULL",
    # ... and one conversation's events of a kind around an entry (the escalation before a
    # resolution, the next escalation, any escalation after the bot's first answer).
    "CREATE INDEX entries_by_conversation_event ON entries (conversation_id, event, id, created_at)"
    " WHERE event IS NOT NULL",
    # Verdicts: per passage in a window, and "any not helpful" per conversation.
    "CREATE INDEX entries_feedback ON entries (conversation_id, feedback, created_at, passage_id)"
    " WHERE feedback IS NOT NULL",
    # Decisions in a window with what the histogram and percentiles read, without the bodies.
    "CREATE INDEX decisions_by_time ON decisions (created_at, top_probability, latency_ms)",
    # Escalations by reason in a window (from the content-gap rows), and the gaps still open.
    "CREATE INDEX escalations_by_time ON escalations (created_at, reason)",
    "CREATE INDEX escalations_open ON escalations (created_at) WHERE handled_at IS NULL",
    # Passages Valen did not judge, per decision and kind: what a decision's JSON body says, in
    # rows a GROUP BY can count (bodies are never parsed to count them).
    """
    CREATE TABLE judgment_errors (
        decision_id INTEGER NOT NULL REFERENCES decisions (id),
        kind        TEXT NOT NULL,
        count       INTEGER NOT NULL,
        created_at  REAL NOT NULL,
        PRIMARY KEY (decision_id, kind)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX judgment_errors_by_time ON judgment_errors (created_at, kind, count)",
)


def judgment_error_counts(body: dict[str, object]) -> dict[str, int]:
    """Unjudged passages by error kind, from a decision's stored body (or its JSON dump)."""
    counts: dict[str, int] = {}
    candidates = body.get("candidates")
    for candidate in candidates if isinstance(candidates, list) else []:
        if isinstance(candidate, dict) and candidate.get("probability") is None:
            kind = str(candidate.get("error_kind") or "unknown")
            counts[kind] = counts.get(kind, 0) + 1
    return counts


def _migrate_to_v6(db: sqlite3.Connection) -> None:
    for statement in V6_STATEMENTS:
        db.execute(statement)
    # Decisions made before this version: their errors, read once from the bodies.
    for id_, body, at in db.execute("SELECT id, body, created_at FROM decisions").fetchall():
        counts = unjudged(body)
        db.executemany(
            "INSERT INTO judgment_errors (decision_id, kind, count, created_at)"
            " VALUES (?, ?, ?, ?)",
            [(id_, kind, count, at) for kind, count in counts.items()],
        )


MIGRATIONS.append(_migrate_to_v6)


# 7: smaller rows for what the bot writes on every question (issue 13). Decisions' bodies are
# positional (`chatbot.store.codec.encode`): each candidate names a passage revision, a row here,
# by its number instead of repeating its id, title and text digest. A bot answer refers to its
# passage revision (`revision`) instead of the 64-character digest. A `decided` event keeps its
# decision in `decision_id` and its outcome alone in `params` (its question is the decision's
# message); an `escalated` event's parameters are a JSON array (reason, top probability,
# question). A bot answer's title is its revision's. Rows written before stay as they are and
# are read as before.
MIGRATIONS.append(
    (
        """
        CREATE TABLE passage_revisions (
            id         INTEGER PRIMARY KEY,
            passage_id TEXT NOT NULL,
            title      TEXT NOT NULL,
            digest     TEXT NOT NULL REFERENCES passage_texts (digest),
            UNIQUE (digest, passage_id, title)
        )
        """,
        "ALTER TABLE entries ADD COLUMN revision INTEGER REFERENCES passage_revisions (id)",
        # Migration 6's indexes of events without the `decided` ones, three in four of all
        # events, which no query looks up by kind (the log reads them by conversation and id).
        # Their queries say `event <> 'decided'` so that SQLite sees the index covers them.
        "DROP INDEX entries_by_event_time",
        "CREATE INDEX entries_by_event_time ON entries (event, created_at, conversation_id)"
        " WHERE event <> 'decided'",
        "DROP INDEX entries_by_conversation_event",
        "CREATE INDEX entries_by_conversation_event ON entries"
        " (conversation_id, event, id, created_at) WHERE event <> 'decided'",
        # A conversation's decisions are found from its questions (entries_by_author, then
        # decisions_by_message), so they need no index of their own.
        "DROP INDEX decisions_by_conversation",
        # A content gap refers to the message it copied (`question_entry`), its `question` kept
        # only when it differs. Newest first is read off escalations_by_time, backwards.
        """
        CREATE TABLE escalations_v7 (
            id               INTEGER PRIMARY KEY,
            conversation_id  INTEGER NOT NULL REFERENCES conversations (id),
            question         TEXT,
            question_entry   INTEGER REFERENCES entries (id),
            reason           TEXT NOT NULL,
            top_probability  REAL,
            after_message_id INTEGER NOT NULL,
            created_at       REAL NOT NULL,
            handled_at       REAL,
            passage_id       TEXT,
            CHECK (question IS NOT NULL OR question_entry IS NOT NULL)
        )
        """,
        "INSERT INTO escalations_v7 (id, conversation_id, question, reason, top_probability,"
        " after_message_id, created_at, handled_at, passage_id)"
        " SELECT id, conversation_id, question, reason, top_probability, after_message_id,"
        " created_at, handled_at, passage_id FROM escalations",
        "DROP TABLE escalations",
        "ALTER TABLE escalations_v7 RENAME TO escalations",
        "CREATE INDEX escalations_by_time ON escalations (created_at, reason)",
        "CREATE INDEX escalations_open ON escalations (created_at) WHERE handled_at IS NULL",
        # Valen's errors kept in time order (what the one query over them reads), so the table
        # is its own index: judgment_errors_by_time goes with the old table.
        """
        CREATE TABLE judgment_errors_v7 (
            decision_id INTEGER NOT NULL REFERENCES decisions (id),
            kind        TEXT NOT NULL,
            count       INTEGER NOT NULL,
            created_at  REAL NOT NULL,
            PRIMARY KEY (created_at, decision_id, kind)
        ) WITHOUT ROWID
        """,
        "INSERT INTO judgment_errors_v7 SELECT decision_id, kind, count, created_at"
        " FROM judgment_errors",
        "DROP TABLE judgment_errors",
        "ALTER TABLE judgment_errors_v7 RENAME TO judgment_errors",
    )
)

# 8: who is typing in a conversation (the customer, or the agent who holds it), until when. Not an
# entry of the log: only the newest value counts, and it means nothing a few seconds later.
MIGRATIONS.append(
    (
        """
        CREATE TABLE typing (
            conversation_id INTEGER NOT NULL REFERENCES conversations (id),
            author          TEXT NOT NULL CHECK (author IN ('customer', 'agent')),
            until           REAL NOT NULL,
            PRIMARY KEY (conversation_id, author)
        ) WITHOUT ROWID
        """,
    )
)

# 9: when each agent's console was last seen open (`agent_seen`, about every 30 s while it is).
# Not an entry of the log: only the newest time counts. An agent never seen (a claim made from the
# command line, or before this version) has no row, and their claims are never released for them.
MIGRATIONS.append(
    (
        """
        CREATE TABLE presence (
            agent     TEXT PRIMARY KEY,
            last_seen REAL NOT NULL
        ) WITHOUT ROWID
        """,
    )
)

# 10: failed sign-ins of the last minute, so every `helpdesk serve` on one database enforces one
# per-account limit together (`AccountService.sign_in`). A row names the account by a keyed hash
# of the name typed, never the text itself (a password typed into the name field must not be
# kept), whether or not an account has it (counting only real accounts would tell a guesser which
# exist). Rows older than the window are deleted as failures are added.
MIGRATIONS.append(
    (
        """
        CREATE TABLE sign_in_failures (
            name_key TEXT NOT NULL,
            at       REAL NOT NULL
        )
        """,
        "CREATE INDEX sign_in_failures_by_name ON sign_in_failures (name_key, at)",
        "CREATE INDEX sign_in_failures_by_time ON sign_in_failures (at)",
    )
)

# 11: each open console's own sighting, beside its agent's (`agent_seen` with a session: a random
# id the console makes as it opens). A console quitting tells by it whether another console of the
# same agent is still open, whose claims are then kept unless the agent says otherwise. Rows not
# seen for a while are deleted as consoles write theirs, and a console deletes its own as it ends.
MIGRATIONS.append(
    (
        """
        CREATE TABLE presence_sessions (
            agent     TEXT NOT NULL,
            session   TEXT NOT NULL,
            last_seen REAL NOT NULL,
            PRIMARY KEY (agent, session)
        ) WITHOUT ROWID
        """,
    )
)

# 12: sign-in cookies signed out before they run out (`UserStore.revoke_session`), so every
# `helpdesk serve` on one database refuses a cookie signed out on another, and closes its consoles.
# A row holds a digest of the cookie, never the cookie, and when the cookie runs out anyway: rows
# past that are deleted as others are added.
MIGRATIONS.append(
    (
        """
        CREATE TABLE revoked_sessions (
            digest     TEXT PRIMARY KEY,
            expires_at REAL NOT NULL
        ) WITHOUT ROWID
        """,
        "CREATE INDEX revoked_sessions_by_expiry ON revoked_sessions (expires_at)",
    )
)

# 13: the customers' ratings for `helpdesk stats`: the rating and the agent who resolved are in a
# `rated` event's parameters alone, and an index of the rated events that holds them lets the
# figures read them (and each rating's conversation, for its resolution) without a row of the
# table: 0.1 s at 33,000 ratings read the table instead.
MIGRATIONS.append(
    (
        "CREATE INDEX entries_ratings ON entries (event, created_at, conversation_id, params)"
        " WHERE event = 'rated'",
    )
)


# 14: content gaps by their question's key. The escalations of one question (`question_key` of
# `chatbot.store.stats_sql`: case, spaces and punctuation aside) are one content gap, which the
# figures count, the editor lists once and a passage written from it marks handled whole; each
# row keeps its key, written with it, so that grouping them keys nothing, and those still open
# are found by key off an index. The rows so far are keyed here, in Python (the store's SQL
# function of the same name is not there for whoever else migrates the file); a row written
# without its key, by an older helpdesk or a tool, is keyed where it is read. Changing
# `question_key` means keying the rows again.
def _migrate_to_v14(db: sqlite3.Connection) -> None:
    db.execute("ALTER TABLE escalations ADD COLUMN question_key TEXT")
    rows = db.execute(
        "SELECT g.id, coalesce(g.question, (SELECT e.text FROM entries e"
        " WHERE e.id = g.question_entry)) FROM escalations g"
    ).fetchall()
    db.executemany(
        "UPDATE escalations SET question_key = ? WHERE id = ?",
        [(question_key(question), id_) for id_, question in rows],
    )
    db.execute(
        "CREATE INDEX escalations_open_by_key ON escalations (question_key)"
        " WHERE handled_at IS NULL"
    )


MIGRATIONS.append(_migrate_to_v14)

# 15: sign-ins that cannot outlive their account, and failures counted per address too.
# Each account's `incarnation` (`Account.incarnation`): made at random as it is added, never made
# again, and signed into its sign-in cookies, which are refused unless it still matches. Counting
# sessions by `session_epoch` alone, an account removed and added again under its name started at
# 0 again, and the earlier account's cookies signed in to it (its new role and all). The accounts
# so far get one here: their browsers sign in once more. And each failed sign-in keeps a keyed
# hash of the address it came from (`AccountService.sign_in`): a name is locked for one address
# after a few failures from it, and for every address only after many more, so that nobody can
# keep a person out of their account from the person's own address with a few wrong passwords.
MIGRATIONS.append(
    (
        "ALTER TABLE accounts ADD COLUMN incarnation TEXT NOT NULL DEFAULT ''",
        "UPDATE accounts SET incarnation = lower(hex(randomblob(16)))",
        "ALTER TABLE sign_in_failures ADD COLUMN address_key TEXT",
        "CREATE INDEX sign_in_failures_by_pair ON sign_in_failures (name_key, address_key, at)",
    )
)
