"""Two consoles of one agent send the same kept reply at the same moment (two browser tabs, Enter
pressed in both): the customer gets it once. Each reply reads the conversation's newest entry
only once it holds the conversation's row, so the second one, held behind the first, sees it."""

from __future__ import annotations

import threading
import time
from typing import Any

import psycopg

from chatbot.desk.models import Author, ChatMessage, Escalation, State
from chatbot.engine.models import Reason
from chatbot.store.postgres import PostgresStore
from tests.backends import postgres_server

REPLY = "Your refund is on its way."


def test_the_same_reply_sent_at_once_from_two_connections_is_written_once() -> None:
    server = postgres_server()
    url = server.create()
    stores = [PostgresStore.open(url), PostgresStore.open(url)]
    locker = psycopg.connect(url)  # Not autocommit: the row stays locked until rollback.
    try:
        first = stores[0]
        conversation = first.create_conversation().id
        _, message = first.add_customer_message(
            conversation, "Where is my refund?", expect=State.BOT, to=State.BOT, pending=True
        )
        first.escalate(conversation, expect=State.BOT, escalation=Escalation(
            reason=Reason.LOW_SCORE, question_entry=message.id, question=message.text,
        ))  # fmt: skip
        assert first.claim(conversation, agent="ana", expect=State.WAITING).won
        locker.execute("SELECT 1 FROM conversations WHERE id = %s FOR UPDATE", (conversation,))
        sent: list[ChatMessage] = []

        def send(store: PostgresStore) -> None:
            sent.append(store.reply(conversation, agent="ana", expect=State.CLAIMED, text=REPLY))

        threads = [threading.Thread(target=send, args=(store,)) for store in stores]
        for thread in threads:
            thread.start()
        # Both replies wait on the held row at once: they overlap.
        waiting: Any = None
        give_up = time.monotonic() + 30
        while waiting != 2:
            assert time.monotonic() < give_up, f"{waiting} replies waiting on the lock"
            row = locker.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock'"
            ).fetchone()
            waiting = None if row is None else row[0]
            time.sleep(0.01)
        locker.rollback()
        for thread in threads:
            thread.join(timeout=30)
        assert len(sent) == 2 and sent[0].id == sent[1].id
        replies = [
            e for e in first.entries(conversation)
            if isinstance(e, ChatMessage) and e.author is Author.AGENT
        ]  # fmt: skip
        assert [r.text for r in replies] == [REPLY]
    finally:
        locker.close()
        for store in stores:
            store.close()
        server.drop(url)
