"""`question_decision`: the decision on one customer question, on every backend. The agent's
conversation view shows the one behind the conversation's escalation (its `question_entry`),
which a decision kept silent on a later message is newer than: `latest_decision` alone named
that later one."""

from __future__ import annotations

from chatbot.desk.models import Escalation, State
from chatbot.engine.models import Reason
from chatbot.store.interface import ConversationStore
from tests.store.conftest import answered, escalated
from tests.store.helpers import ask

WORKER = "worker-1"


def test_each_questions_own_decision_is_read_and_none_for_one_undecided(
    store: ConversationStore,
) -> None:
    refund = ask(store, "how long does a refund take?")
    conversation = refund.conversation_id
    hello = ask(store, "hello? anyone?", conversation)
    elsewhere = ask(store, "charged twice?")  # Another conversation's, decided too.
    first, second, third = store.lease_questions(worker=WORKER, limit=3, lease_s=30)
    assert [first.id, second.id, third.id] == [refund.id, hello.id, elsewhere.id]
    store.record_decision(
        first.id, worker=WORKER, expect=State.BOT, decision=escalated(refund.text), answer=False,
        escalation=Escalation(reason=Reason.LOW_SCORE, question_entry=refund.id,
                              question=refund.text),
    )  # fmt: skip
    # A person has it by now: the bot's decision on "hello?" is kept silent.
    kept = store.record_decision(second.id, worker=WORKER, expect=State.WAITING,
                                 decision=answered(hello.text), answer=False,
                                 escalation=None)  # fmt: skip
    assert kept.outcome == "kept"
    store.record_decision(third.id, worker=WORKER, expect=State.BOT,
                          decision=answered(elsewhere.text), answer=True,
                          escalation=None)  # fmt: skip
    undecided = ask(store, "and my helmet?", elsewhere.conversation_id)

    assert store.conversation(conversation).question_entry == refund.id
    on_refund, on_hello = store.decisions(conversation)
    assert store.latest_decision(conversation) == on_hello
    assert store.question_decision(refund.id) == on_refund
    assert on_refund.decision == escalated(refund.text) and on_refund.message_id == refund.id
    assert store.question_decision(hello.id) == on_hello
    assert store.question_decision(elsewhere.id) == store.latest_decision(elsewhere.conversation_id)
    assert store.question_decision(undecided.id) is None
    assert store.question_decision(10_000) is None
