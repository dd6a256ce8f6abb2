"""How many questions a bot holds now (its lease not run out), on each backend: with others
waiting long, `helpdesk doctor` and the queue say the bots are busy rather than asking whether
one runs (a tester's finding: a live bot, every slot waiting on a hanging Valen, was taken for
none)."""

from __future__ import annotations

from chatbot.desk.models import State
from chatbot.store.interface import ConversationStore
from tests.store.conftest import FakeClock, answered
from tests.store.helpers import ask

W1, W2 = "worker-1", "worker-2"


def test_held_questions_are_those_whose_lease_has_not_run_out(
    store: ConversationStore, clock: FakeClock
) -> None:
    assert store.bot_holds() == 0
    first, second, _third = (ask(store, f"question {n}?") for n in range(3))
    [taken] = store.lease_questions(worker=W1, limit=1, lease_s=30)
    assert taken.id == first.id
    assert store.bot_holds() == 1
    assert store.bot_backlog()[0] == 2  # The others wait, and are not counted as held.
    clock.advance(20)  # A live worker's heartbeat renews its lease: still held past 30 s.
    assert store.extend_leases(worker=W1, question_ids=[first.id], lease_s=30) == [first.id]
    clock.advance(20)
    assert store.bot_holds() == 1
    [also] = store.lease_questions(worker=W2, limit=1, lease_s=30)
    assert also.id == second.id and store.bot_holds() == 2
    clock.advance(30)  # W1's lease ran out (no heartbeat): a bot that died holds nothing.
    assert store.bot_holds() == 0
    [again] = store.lease_questions(worker=W2, limit=1, lease_s=30)
    assert again.id == first.id and store.bot_holds() == 1
    store.record_decision(again.id, worker=W2, expect=State.BOT, decision=answered(),
                          answer=True, escalation=None)  # fmt: skip
    assert store.bot_holds() == 0  # Settled: nobody holds it any more.
    store.lease_questions(worker=W1, limit=1, lease_s=30)
    assert store.bot_holds() == 1
    assert store.release_leases(worker=W1, question_ids=[second.id]) == 1
    assert store.bot_holds() == 0  # Given back on shutdown: held by none.
