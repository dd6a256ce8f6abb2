"""Decisions as every backend stores them since issue 13: positional bodies naming passage
revisions, no passage text or title in them; a body stored as JSON text before still reads."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from chatbot.desk.models import State
from chatbot.store import codec
from chatbot.store.interface import ConversationStore
from tests.backends import Backend
from tests.store.conftest import answered
from tests.store.test_contract import ask


def raw_sql(backend: Backend, query: str, params: tuple[Any, ...] = ()) -> list[Any]:
    """A statement on another connection, in the backend's own driver (`?` placeholders)."""
    if backend.name == "sqlite":
        with sqlite3.connect(backend.location) as db:
            return db.execute(query, params).fetchall()
    import psycopg

    with psycopg.connect(str(backend.location), autocommit=True) as conn:
        cursor = conn.execute(query.replace("?", "%s").encode(), params)
        return cursor.fetchall() if cursor.description else []


def test_a_decision_is_stored_positional_and_an_older_one_still_reads(
    store: ConversationStore, backend: Backend
) -> None:
    question = ask(store, answered().question)
    store.lease_questions(worker="w", limit=1, lease_s=30)
    store.record_decision(question.id, worker="w", expect=State.BOT, decision=answered(),
                          answer=True, escalation=None)  # fmt: skip
    column = "body" if backend.name == "sqlite" else "packed"
    [(body,)] = raw_sql(backend, f"SELECT {column} FROM decisions")
    body = bytes(body)
    assert codec.is_positional(body)
    for candidate in answered().candidates:
        assert candidate.text.encode() not in body
        assert not candidate.title or candidate.title.encode() not in body
    assert answered().question.encode() not in body  # The text of the message it is for.
    [stored] = store.decisions(question.conversation_id)
    assert stored.decision == answered()

    # As versions before stored it: the JSON text of the compact body.
    old, _ = codec.compact(answered())
    if backend.name == "sqlite":
        raw_sql(backend, "UPDATE decisions SET body = ?", (json.dumps(old),))
    else:
        raw_sql(backend, "UPDATE decisions SET body = ?, packed = NULL", (json.dumps(old),))
    [stored] = store.decisions(question.conversation_id)
    assert stored.decision == answered()
