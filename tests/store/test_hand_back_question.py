"""Back to the bot, the store makes the question the desk chose the bot's, never one of its own
choosing (it took the customer's last message, whatever it was), and refuses a choice made before
the customer's newest message (on every backend)."""

from __future__ import annotations

import pytest

from chatbot.desk.models import BotQuestion, Escalation, HandedBack, State
from chatbot.engine.models import Reason
from chatbot.store.interface import ConversationStore, StaleState
from tests.store.helpers import ask

W1 = "worker-1"


def claimed(store: ConversationStore) -> int:
    """Claimed by ana after the customer asked for a person first: no question pending."""
    conversation_id = store.create_conversation().id
    store.escalate(
        conversation_id, expect=State.BOT, escalation=Escalation(reason=Reason.CUSTOMER_ASKED)
    )
    assert store.claim(conversation_id, agent="ana", expect=State.WAITING).won
    return conversation_id


def say(store: ConversationStore, conversation_id: int, text: str) -> int:
    """A customer message for the person who has the conversation."""
    _, message = store.add_customer_message(
        conversation_id, text, expect=State.CLAIMED, to=State.CLAIMED, pending=False
    )
    return message.id


def hand_back(store: ConversationStore, conversation_id: int, question: BotQuestion) -> None:
    store.release(conversation_id, agent="ana", expect=State.CLAIMED, to=State.BOT,
                  event=HandedBack(agent="ana"), question=question)  # fmt: skip


def test_the_question_chosen_becomes_the_bots(store: ConversationStore) -> None:
    conversation_id = claimed(store)
    chosen = say(store, conversation_id, "Are there helmets for kids?")
    last = say(store, conversation_id, "talk to a person")
    hand_back(store, conversation_id, BotQuestion(entry=chosen, read_to=last + 1))
    [question] = store.lease_questions(worker=W1, limit=5, lease_s=30)
    assert (question.id, question.text) == (chosen, "Are there helmets for kids?")
    assert store.conversation(conversation_id).pending == 1


def test_no_question_chosen_leaves_the_bot_nothing(store: ConversationStore) -> None:
    conversation_id = claimed(store)
    last = say(store, conversation_id, "thanks Wendy 👍")
    hand_back(store, conversation_id, BotQuestion(entry=None, read_to=last))
    assert store.conversation(conversation_id).state is State.BOT
    assert store.lease_questions(worker=W1, limit=5, lease_s=30) == []


def test_a_customer_message_after_the_choice_refuses_it(store: ConversationStore) -> None:
    conversation_id = claimed(store)
    read = say(store, conversation_id, "thanks!")
    say(store, conversation_id, "How long does a refund take?")  # After the log was read.
    with pytest.raises(StaleState):
        hand_back(store, conversation_id, BotQuestion(entry=None, read_to=read))
    conversation = store.conversation(conversation_id)
    assert (conversation.state, conversation.agent) == (State.CLAIMED, "ana")
    assert store.lease_questions(worker=W1, limit=5, lease_s=30) == []


def test_another_conversations_message_never_becomes_its_question(store: ConversationStore) -> None:
    conversation_id = claimed(store)
    pending = ask(store, "charged twice?", conversation_id=store.create_conversation().id)
    # Another conversation's question named by mistake is no question of this one.
    last = say(store, conversation_id, "ok")
    hand_back(store, conversation_id, BotQuestion(entry=pending.id, read_to=last))
    [question] = store.lease_questions(worker=W1, limit=5, lease_s=30)
    assert question.conversation_id == pending.conversation_id
