"""Conversations put in a store as the desk would: a question, one waiting for a person, one
claimed, many of every kind; and SQL on another connection in the backend's own driver."""

from __future__ import annotations

import sqlite3
from typing import Any

from chatbot.desk.models import ChatMessage, Escalation, Feedback, State
from chatbot.desk.service import DeskService
from chatbot.engine.models import Reason
from chatbot.store.interface import ConversationStore
from tests.backends import Backend
from tests.store.conftest import FakeClock, answered, escalated


def ask(store: ConversationStore, question: str, conversation_id: int | None = None) -> ChatMessage:
    """A customer question for the bot, in a new conversation unless one is given."""
    if conversation_id is None:
        conversation_id = store.create_conversation().id
    _, message = store.add_customer_message(
        conversation_id, question, expect=State.BOT, to=State.BOT, pending=True
    )
    return message


def waiting(store: ConversationStore, question: str = "No free docks, late fee?") -> int:
    message = ask(store, question)
    store.escalate(
        message.conversation_id,
        expect=State.BOT,
        escalation=Escalation(
            reason=Reason.LOW_SCORE, top_probability=0.644, question_entry=message.id,
            question=question,
        ),
    )  # fmt: skip
    return message.conversation_id


def claimed(store: ConversationStore, agent: str = "ana") -> int:
    conversation_id = waiting(store)
    assert store.claim(conversation_id, agent=agent, expect=State.WAITING).won
    return conversation_id


def raw_sql(backend: Backend, query: str, params: tuple[Any, ...] = ()) -> list[Any]:
    """A statement on another connection, in the backend's own driver (`?` placeholders)."""
    if backend.name == "sqlite":
        with sqlite3.connect(backend.location) as db:
            return db.execute(query, params).fetchall()
    import psycopg

    with psycopg.connect(str(backend.location), autocommit=True) as conn:
        cursor = conn.execute(query.replace("?", "%s").encode(), params)
        return cursor.fetchall() if cursor.description else []


AGENTS = ("ana", "李娜", "bartholomew-the-night-shift-lead")


def fill(desk: DeskService, count: int, clock: FakeClock | None = None) -> None:
    """`count` conversations of five kinds in turn, through the desk as the app writes them:
    answered and judged helpful; escalated by the bot; handed to a person, claimed (three agents,
    one with a Chinese name, one with a long one), replied to, noted, some resolved and rated;
    answered then asked again in Chinese; and one nobody wrote in (listed nowhere)."""
    for n in range(count):
        if clock is not None:
            clock.advance(37 * 60 + n % 7)  # Minutes apart, so days change too.
        kind = n % 5
        if kind == 4:
            desk.start_conversation()
            continue
        if kind == 2:
            conversation = desk.start_conversation().id
            desk.talk_to_person(conversation)
            desk.ask(conversation, f"Where is my refund? ({n})")
            agent = AGENTS[n % 3]
            desk.claim(conversation, agent=agent)
            desk.reply(conversation, agent=agent, text="Let me look.\nOne moment.")
            desk.add_note(conversation, agent="bo", text=f"Refund approved by [b]finance[/b] {n}")
            if n % 3 == 1:
                desk.resolve(conversation, agent=agent)
                desk.rate(conversation, rating=1 + n % 5)
            continue
        asked = desk.ask(None, f"I was charged twice ({n}), can I get my money back?")
        conversation = asked.conversation.id
        [question] = desk.lease("worker-1", limit=1, lease_s=30)
        desk.record_decision("worker-1", question, escalated() if kind == 1 else answered())
        if kind == 0:
            answer = desk.messages(conversation)[-1]
            desk.feedback(conversation, entry_id=answer.id, value=Feedback.HELPFUL)
        elif kind == 3:
            desk.ask(conversation, "我的押金什么时候退还？")
            [question] = desk.lease("worker-1", limit=1, lease_s=30)
            desk.record_decision("worker-1", question, escalated())
