"""`decisions_since`: the decisions on a conversation's questions from one question on, on every
backend. The agent's side pane shows the one behind the conversation's escalation (its
`question_entry`) and the latest kept since that considered passages: with "hello? anyone?"
(no passages) decided last, `latest_decision` named only that one, and a kept decision that would
have answered from damage-fee was nowhere."""

from __future__ import annotations

from pathlib import Path

from chatbot.desk.models import Escalation, State
from chatbot.engine.models import Decision, Reason
from chatbot.store.interface import ConversationStore
from chatbot.store.sqlite import SQLiteStore
from tests.backends import Backend
from tests.store.conftest import answered, escalated
from tests.store.helpers import ask

WORKER = "worker-1"


def nothing_found(question: str) -> Decision:
    return Decision(
        question=question, answer=None, reason=Reason.NO_PASSAGES, candidates=(), threshold=0.7
    )


def test_the_escalated_questions_decision_and_those_after_it_oldest_first(
    store: ConversationStore,
) -> None:
    earlier = ask(store, "charged twice?")
    conversation = earlier.conversation_id
    (first,) = store.lease_questions(worker=WORKER, limit=1, lease_s=30)
    store.record_decision(first.id, worker=WORKER, expect=State.BOT,
                          decision=answered(earlier.text), answer=True,
                          escalation=None)  # fmt: skip
    refund = ask(store, "how long does a refund take?", conversation)
    damage = ask(store, "will I pay for the damage?", conversation)
    hello = ask(store, "hello? anyone?", conversation)
    elsewhere = ask(store, "and my helmet?")  # Another conversation's, decided too.
    on = store.lease_questions(worker=WORKER, limit=4, lease_s=30)
    assert [q.id for q in on] == [refund.id, damage.id, hello.id, elsewhere.id]
    store.record_decision(
        on[0].id, worker=WORKER, expect=State.BOT, decision=escalated(refund.text), answer=False,
        escalation=Escalation(reason=Reason.LOW_SCORE, question_entry=refund.id,
                              question=refund.text),
    )  # fmt: skip
    # A person has it by now: the bot's decisions on the later two are kept silent.
    for question, decision in ((on[1], answered(damage.text)), (on[2], nothing_found(hello.text))):
        kept = store.record_decision(question.id, worker=WORKER, expect=State.WAITING,
                                     decision=decision, answer=False,
                                     escalation=None)  # fmt: skip
        assert kept.outcome == "kept"
    store.record_decision(on[3].id, worker=WORKER, expect=State.BOT,
                          decision=answered(elsewhere.text), answer=True,
                          escalation=None)  # fmt: skip
    _, undecided = store.add_customer_message(  # Written to the person: never the bot's.
        conversation, "still there?", expect=State.WAITING, to=State.WAITING, pending=False
    )

    assert store.conversation(conversation).question_entry == refund.id
    everything = store.decisions(conversation)
    assert [d.message_id for d in everything] == [earlier.id, refund.id, damage.id, hello.id]
    since = store.decisions_since(conversation, refund.id)
    assert [d.message_id for d in since] == [refund.id, damage.id, hello.id]
    assert since == everything[1:]  # As `decisions` reads them: the earlier question's left out.
    assert since[1].decision == answered(damage.text)
    assert store.decisions_since(conversation, hello.id) == everything[-1:]
    assert store.decisions_since(conversation, undecided.id) == []
    assert store.decisions_since(conversation, earlier.id) == everything
    assert [d.message_id for d in store.decisions_since(elsewhere.conversation_id, 0)] == [
        elsewhere.id
    ]


def test_sqlite_finds_them_from_the_questions_by_index(backend: Backend) -> None:
    """Read on every change to a conversation a person has: its questions' range, then each one's
    decisions, by index, never a scan of the decisions table. The statement is the one the store
    runs, as SQLite saw it."""
    if backend.name != "sqlite":
        return
    store = SQLiteStore.open(Path(backend.location))
    ran: list[str] = []
    try:
        store._db.set_trace_callback(ran.append)
        store.decisions_since(1, 1)
        store._db.set_trace_callback(None)
        (statement,) = [sql for sql in ran if "FROM decisions" in sql]
        plan = "\n".join(row[-1] for row in store._db.execute(f"EXPLAIN QUERY PLAN {statement}"))
    finally:
        store.close()
    assert "USING INDEX decisions_by_message" in plan, plan
    assert "USING COVERING INDEX entries_by_author" in plan, plan
    assert "SCAN decisions" not in plan, plan
