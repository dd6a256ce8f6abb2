"""The SQLite schema as a list of migrations; `PRAGMA user_version` counts the ones applied.

Append a migration to change the schema; never edit one that has shipped, since databases in the
field already ran it.
"""

from __future__ import annotations

Migration = tuple[str, ...]

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
