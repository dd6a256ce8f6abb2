"""`latest_questions`: the customer's messages newest first, a page at a time, each with the top
probability of its latest decision, on every backend. The desk walks back with it past "thanks!"
and "talk to a person" to the question a customer who asks for a person hands over; it read only
the newest customer message, and such a customer reached the queue with no question."""

from __future__ import annotations

import pytest

from chatbot.desk.models import BotQuestion, ChatMessage, Escalation, HandedBack, State
from chatbot.engine.models import Reason
from chatbot.store.interface import ConversationStore
from tests.store.conftest import answered, escalated
from tests.store.helpers import ask

WORKER = "worker-1"


def said(store: ConversationStore, conversation_id: int, text: str) -> ChatMessage:
    """A customer message the bot does not judge ("thanks!", "talk to a person")."""
    _, message = store.add_customer_message(
        conversation_id, text, expect=State.BOT, to=State.BOT, pending=False
    )
    return message


def decided_twice(store: ConversationStore) -> ChatMessage:
    """A question escalated at 0.644, handed back by ana after her reply, then answered at 0.899:
    two decisions on one message, an agent's reply and the bot's answer after it."""
    question = ask(store, "I was charged twice, can I get my money back?")
    cid = question.conversation_id
    [leased] = store.lease_questions(worker=WORKER, limit=1, lease_s=30)
    store.record_decision(leased.id, worker=WORKER, expect=State.BOT,
                          decision=escalated(question.text), answer=False,
                          escalation=Escalation(reason=Reason.LOW_SCORE, top_probability=0.644,
                                                question_entry=question.id,
                                                question=question.text))  # fmt: skip
    assert store.claim(cid, agent="ana", expect=State.WAITING).won
    store.reply(cid, agent="ana", expect=State.CLAIMED, text="Let me check with the bot.")
    store.release(cid, agent="ana", expect=State.CLAIMED, to=State.BOT,
                  event=HandedBack(agent="ana"),
                  question=BotQuestion(entry=question.id, read_to=question.id))  # fmt: skip
    [again] = store.lease_questions(worker=WORKER, limit=1, lease_s=30)
    assert again.id == question.id
    store.record_decision(again.id, worker=WORKER, expect=State.BOT,
                          decision=answered(question.text), answer=True,
                          escalation=None)  # fmt: skip
    return question


def ids(found: list[tuple[ChatMessage, float | None]]) -> list[tuple[int, float | None]]:
    return [(message.id, top) for message, top in found]


def test_newest_first_a_page_at_a_time_with_each_latest_score(store: ConversationStore) -> None:
    question = decided_twice(store)
    cid = question.conversation_id
    thanks = said(store, cid, "thanks!")
    person = said(store, cid, "talk to a person")
    ask(store, "And my helmet?")  # Another conversation's, newer than all of them.
    assert ids(store.latest_questions(cid, limit=2)) == [(person.id, None), (thanks.id, None)]
    # Before "thanks!": past the bot's answer, the agent's reply and the events, to the question
    # with its latest decision's score (0.899, not the 0.644 that escalated it).
    rest = store.latest_questions(cid, before_id=thanks.id, limit=2)
    [(found, top)] = rest
    assert found.id == question.id
    assert top == pytest.approx(0.899)
    assert found.text == question.text
    assert store.latest_questions(cid, before_id=question.id, limit=2) == []
    # The newest is what `latest_question` gives.
    [newest] = store.latest_questions(cid, limit=1)
    assert newest == store.latest_question(cid)


def test_a_conversation_with_no_customer_message_has_none(store: ConversationStore) -> None:
    cid = store.create_conversation().id
    assert store.latest_questions(cid, limit=5) == []
    assert store.latest_questions(cid + 1, limit=5) == []  # No such conversation.
