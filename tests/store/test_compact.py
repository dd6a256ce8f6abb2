"""Decisions as every backend stores them since issue 13: positional bodies naming passage
revisions, no passage text or title in them; a body stored as JSON text before still reads."""

from __future__ import annotations

import json

import pytest

from chatbot.desk.models import Author, State
from chatbot.store import codec
from chatbot.store.interface import ConversationStore
from tests.backends import Backend
from tests.store.conftest import answered
from tests.store.helpers import ask, raw_sql


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


# PostgreSQL only: SQLite's migration 7 is tested in tests/store/test_sqlite.py.
@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_a_postgres_database_of_version_2_keeps_its_decisions_through_migration_3(
    backend: Backend,
) -> None:
    assert backend.name == "postgresql"
    from chatbot.store.postgres import PostgresStore
    from chatbot.store.postgres_schema import COMPONENT, MIGRATIONS

    store = PostgresStore.open(str(backend.location))
    try:
        question = ask(store, answered().question)
        store.lease_questions(worker="w", limit=1, lease_s=30)
        store.record_decision(question.id, worker="w", expect=State.BOT, decision=answered(),
                              answer=True, escalation=None)  # fmt: skip
    finally:
        store.close()
    old, _ = codec.compact(answered())
    for statement in (  # Back to version 2: the body as JSON text, migrations 3 to 11 undone.
        "ALTER TABLE accounts DROP COLUMN incarnation",
        "DROP INDEX escalations_open_by_key",
        "ALTER TABLE escalations DROP COLUMN question_key",
        "DROP INDEX entries_ratings",
        "DROP TABLE revoked_sessions",
        "DROP TABLE presence_sessions",
        "DROP TABLE sign_in_failures",
        "DROP TABLE presence",
        "DROP TABLE typing",
        "UPDATE decisions SET body = ?, packed = NULL",
        "ALTER TABLE decisions DROP CONSTRAINT decisions_have_a_body",
        "ALTER TABLE decisions DROP COLUMN packed",
        "ALTER TABLE decisions ALTER COLUMN body SET NOT NULL",
        "DROP TABLE passage_revisions",
        "UPDATE schema_versions SET version = 2 WHERE component = ?",
    ):
        params = {"UPDATE d": (json.dumps(old),), "UPDATE s": (COMPONENT,)}.get(statement[:8], ())
        raw_sql(backend, statement, params)
    store = PostgresStore.open(str(backend.location))
    try:
        [(version,)] = raw_sql(
            backend, "SELECT version FROM schema_versions WHERE component = ?", (COMPONENT,)
        )
        assert version == len(MIGRATIONS) == 11
        [stored] = store.decisions(question.conversation_id)
        assert stored.decision == answered()
        store.set_typing(question.conversation_id, author=Author.CUSTOMER, seconds=6)  # 4's table.
        assert list(store.typing(question.conversation_id)) == [Author.CUSTOMER]
        again = ask(store, answered().question)
        store.lease_questions(worker="w", limit=1, lease_s=30)
        store.record_decision(again.id, worker="w", expect=State.BOT, decision=answered(),
                              answer=True, escalation=None)  # fmt: skip
        assert [d.decision for d in store.decisions(again.conversation_id)] == [answered()]
        assert raw_sql(backend, "SELECT count(*) FROM decisions WHERE packed IS NULL") == [(1,)]
    finally:
        store.close()
