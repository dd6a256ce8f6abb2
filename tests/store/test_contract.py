"""The contract every conversation store keeps, whatever the backend (see `tests/backends.py`).

Only the `ConversationStore` interface is used here, so a new backend passes or fails these same
assertions. Another connection (`backend.open()`) stands for another process.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from chatbot.desk.models import (
    Author,
    ChatEvent,
    ChatMessage,
    Claimed,
    Decided,
    Escalated,
    Escalation,
    Feedback,
    FeedbackGiven,
    HandedBack,
    LocaleSet,
    Note,
    Released,
    Reopened,
    Resolved,
    State,
)
from chatbot.engine.models import Reason
from chatbot.store.interface import (
    SAME_REPLY_S,
    ConversationNotFound,
    ConversationStore,
    LeaseLost,
    NotTheLatestAnswer,
    StaleState,
    StoreError,
)
from tests.backends import Backend
from tests.store.conftest import START, FakeClock, answered, escalated
from tests.store.helpers import ask, claimed, waiting

W1, W2 = "worker-1", "worker-2"


def messages(store: ConversationStore, conversation_id: int) -> list[ChatMessage]:
    return [e for e in store.entries(conversation_id) if isinstance(e, ChatMessage)]


def events(store: ConversationStore, conversation_id: int) -> list[object]:
    return [e.event for e in store.entries(conversation_id) if isinstance(e, ChatEvent)]


# -- conversations and customer messages ----------------------------------------------------------


def test_a_new_conversation_belongs_to_the_bot(store: ConversationStore) -> None:
    conversation = store.create_conversation()
    assert (conversation.state, conversation.pending, conversation.last_entry) == (State.BOT, 0, 0)
    assert conversation.created_at == START
    assert store.conversation(conversation.id) == conversation


def test_a_question_is_committed_and_pending_before_anything_else(
    store: ConversationStore, backend: Backend
) -> None:
    message = ask(store, "I was charged twice")
    assert message.pending and message.author is Author.CUSTOMER
    other = backend.open()  # Another process sees it at once: nothing after this can lose it.
    try:
        [seen] = messages(other, message.conversation_id)
        assert (seen.text, seen.pending) == ("I was charged twice", True)
        assert other.conversation(message.conversation_id).pending == 1
    finally:
        other.close()


def test_a_message_for_a_person_is_not_pending(store: ConversationStore) -> None:
    conversation_id = waiting(store)
    conversation, message = store.add_customer_message(
        conversation_id, "Hello?", expect=State.WAITING, to=State.WAITING, pending=False
    )
    assert not message.pending and conversation.pending == 1  # Only the first question.


def test_writes_are_conditional_on_the_state_read(store: ConversationStore) -> None:
    conversation_id = waiting(store)
    with pytest.raises(StaleState):
        store.add_customer_message(
            conversation_id, "hi", expect=State.BOT, to=State.BOT, pending=True
        )
    with pytest.raises(StaleState):
        store.escalate(
            conversation_id, expect=State.BOT, escalation=Escalation(reason=Reason.CUSTOMER_ASKED)
        )
    assert len(messages(store, conversation_id)) == 1  # Nothing of the refused writes remains.


def test_unknown_conversation(store: ConversationStore) -> None:
    with pytest.raises(ConversationNotFound, match="conversation 42 not found"):
        store.conversation(42)
    with pytest.raises(ConversationNotFound):
        store.add_customer_message(42, "hi", expect=State.BOT, to=State.BOT, pending=True)


def test_a_conversations_language_is_its_latest_locale_event(store: ConversationStore) -> None:
    """Every store: `locale` (conversation and leased question alike) is the latest `locale-set`
    event, None without one; setting it leaves the state as it was."""
    message = ask(store, "I was charged twice")
    cid = message.conversation_id
    assert store.conversation(cid).locale is None
    [leased] = store.lease_questions(worker=W1, limit=1, lease_s=30)
    assert leased.locale is None
    store.add_event(cid, LocaleSet(locale="zh"), expect=State.BOT)
    assert store.conversation(cid).locale == "zh"
    stored = store.add_event(cid, LocaleSet(locale="en", chosen_by_customer=True), expect=State.BOT)
    assert stored.event == LocaleSet(locale="en", chosen_by_customer=True)
    conversation = store.conversation(cid)
    assert (conversation.locale, conversation.state) == ("en", State.BOT)
    assert conversation.last_entry == stored.id
    store.add_event(cid, LocaleSet(locale="zh"), expect=State.BOT)
    store.release_leases(worker=W1, question_ids=[message.id])
    [leased] = store.lease_questions(worker=W2, limit=1, lease_s=30)
    assert leased.locale == "zh"
    with pytest.raises(ConversationNotFound):
        store.add_event(42, LocaleSet(locale="zh"), expect=State.BOT)


def test_writing_after_resolve_reopens_with_its_event_first(store: ConversationStore) -> None:
    conversation_id = claimed(store)
    store.release(conversation_id, agent="ana", expect=State.CLAIMED, to=State.RESOLVED,
                  event=Resolved(agent="ana"))  # fmt: skip
    conversation, message = store.add_customer_message(
        conversation_id, "one more thing", expect=State.RESOLVED, to=State.BOT, pending=True,
        events=[Reopened()],
    )  # fmt: skip
    assert (conversation.state, conversation.agent) == (State.BOT, None)
    entries = store.entries(conversation_id)
    assert isinstance(entries[-2], ChatEvent) and entries[-2].event == Reopened()
    assert entries[-1] == message and message.pending


# -- escalation, the queue, content gaps ----------------------------------------------------------


def test_an_escalation_enters_the_queue_with_its_question(
    store: ConversationStore, clock: FakeClock
) -> None:
    first = ask(store, "first question")
    second = ask(store, "No free docks, will I pay a late fee?", first.conversation_id)
    clock.advance(3)
    conversation = store.escalate(
        first.conversation_id,
        expect=State.BOT,
        escalation=Escalation(reason=Reason.LOW_SCORE, top_probability=0.644,
                              question_entry=second.id, question=second.text),
    )  # fmt: skip
    assert (conversation.state, conversation.reason) == (State.WAITING, Reason.LOW_SCORE)
    assert conversation.question_entry == second.id
    [item] = store.queue()
    assert (item.conversation_id, item.state) == (first.conversation_id, State.WAITING)
    assert item.question == "No free docks, will I pay a late fee?"  # Not the first question.
    assert item.reason is Reason.LOW_SCORE and item.top_probability == pytest.approx(0.644)
    assert item.waiting_since.timestamp() == START.timestamp() + 3
    assert events(store, first.conversation_id) == [
        Escalated(reason=Reason.LOW_SCORE, top_probability=0.644, question_entry=second.id)
    ]


def test_asking_for_a_person_first_queues_the_next_message(store: ConversationStore) -> None:
    conversation_id = store.create_conversation().id
    store.escalate(conversation_id, expect=State.BOT,
                   escalation=Escalation(reason=Reason.CUSTOMER_ASKED))  # fmt: skip
    assert store.queue()[0].question == ""
    assert store.content_gaps() == []  # Nothing was asked: no gap.
    _, message = store.add_customer_message(
        conversation_id, "Where is my helmet?", expect=State.WAITING, to=State.WAITING,
        pending=False,
    )  # fmt: skip
    [item] = store.queue()
    assert (item.question, item.question_entry) == ("Where is my helmet?", message.id)


def test_the_queue_lists_waiting_then_the_agents_own_claims(
    store: ConversationStore, clock: FakeClock
) -> None:
    first, second, third, fourth = (waiting(store) for _ in range(4))
    clock.advance(60)
    store.claim(first, agent="bo", expect=State.WAITING)
    store.claim(third, agent="ana", expect=State.WAITING)
    assert [item.conversation_id for item in store.queue()] == [second, fourth]
    assert [(item.conversation_id, item.state) for item in store.queue(agent="ana")] == [
        (second, State.WAITING),
        (fourth, State.WAITING),
        (third, State.CLAIMED),
    ]
    mine = store.queue(agent="ana")[2]
    assert mine.agent == "ana" and mine.claimed_at == START.replace(minute=1)
    assert store.claimed_by("ana") == [third] and store.claimed_by("cy") == []


def test_a_waiting_customer_knows_how_many_wait_ahead(
    store: ConversationStore, clock: FakeClock
) -> None:
    """The queue's own order: longest wait first, the id breaking a tie in the same instant."""
    first = waiting(store)
    clock.advance(1)
    second, third = waiting(store), waiting(store)  # The same instant.
    bots = ask(store, "Is there a helmet?").conversation_id  # The bot has it: not in the queue.
    assert [store.waiting_ahead(c) for c in (first, second, third, bots)] == [0, 1, 2, None]
    store.claim(first, agent="ana", expect=State.WAITING)
    store.claim(third, agent="bo", expect=State.WAITING)
    clock.advance(1)
    fourth = waiting(store)
    assert [store.waiting_ahead(c) for c in (first, second, third, fourth)] == [None, 0, None, 1]
    assert store.waiting_ahead(fourth + 1000) is None  # No such conversation.


def test_the_longest_waiting_in_the_queues_order(
    store: ConversationStore, clock: FakeClock
) -> None:
    """What an agent taking the next conversation tries, in turn: longest wait, then id."""
    assert store.longest_waiting(5) == []
    first = waiting(store)
    clock.advance(1)
    second, third = waiting(store), waiting(store)  # The same instant.
    ask(store, "Is there a helmet?")  # The bot has it: not in the queue.
    assert store.longest_waiting(5) == [first, second, third]
    assert store.longest_waiting(2) == [first, second]
    store.claim(first, agent="ana", expect=State.WAITING)
    assert store.longest_waiting(5) == [second, third]


def test_typing_lasts_its_seconds_and_stops_when_told(
    store: ConversationStore, clock: FakeClock
) -> None:
    conversation = claimed(store)
    other = waiting(store)
    assert store.typing(conversation) == {}
    store.set_typing(conversation, author=Author.CUSTOMER, seconds=6)
    clock.advance(2)
    store.set_typing(conversation, author=Author.AGENT, seconds=6)
    assert store.typing(conversation) == {
        Author.CUSTOMER: START + timedelta(seconds=6),
        Author.AGENT: START + timedelta(seconds=8),
    }
    assert store.typing(other) == {}  # Each conversation its own.
    clock.advance(4)  # The customer's signal has lapsed; the agent's holds.
    assert store.typing(conversation) == {Author.AGENT: START + timedelta(seconds=8)}
    store.set_typing(conversation, author=Author.CUSTOMER, seconds=6)  # Typing again.
    store.set_typing(conversation, author=Author.AGENT, seconds=None)  # Sent: stopped.
    assert store.typing(conversation) == {Author.CUSTOMER: START + timedelta(seconds=12)}
    store.set_typing(conversation, author=Author.AGENT, seconds=None)  # Stopping twice is fine.
    with pytest.raises(ConversationNotFound):
        store.set_typing(other + 1000, author=Author.CUSTOMER, seconds=6)


def test_content_gaps_newest_first_with_the_agents_reply(
    store: ConversationStore, clock: FakeClock
) -> None:
    first = claimed(store)
    store.reply(first, agent="ana", expect=State.CLAIMED, text="We waive the fee.")
    clock.advance(60)
    second = waiting(store, "Where do I find a helmet?")

    newest, oldest = store.content_gaps()
    assert (newest.conversation_id, newest.question, newest.agent_reply) == (
        second, "Where do I find a helmet?", None,
    )  # fmt: skip
    assert (oldest.conversation_id, oldest.reason) == (first, Reason.LOW_SCORE)
    assert oldest.top_probability == pytest.approx(0.644)
    assert oldest.agent_reply == "We waive the fee." and not oldest.handled

    store.mark_gap_handled(oldest.id, passage_id="station-full-late-fee")
    [open_gap] = store.content_gaps(include_handled=False)
    assert open_gap.id == newest.id
    handled = store.content_gaps()[1]
    assert handled.handled and handled.passage_id == "station-full-late-fee"
    with pytest.raises(StoreError, match="not found"):
        store.mark_gap_handled(99, passage_id="x")


# -- feedback -------------------------------------------------------------------------------------


def bot_answer(store: ConversationStore, conversation_id: int | None = None) -> ChatMessage:
    """A question the bot answers (through a lease, as a worker would)."""
    question = ask(store, "charged twice?", conversation_id)
    [leased] = store.lease_questions(worker=W1, limit=1, lease_s=30)
    store.record_decision(leased.id, worker=W1, expect=State.BOT, decision=answered(),
                          answer=True, escalation=None)  # fmt: skip
    answer = messages(store, question.conversation_id)[-1]
    assert answer.author is Author.BOT
    return answer


def test_feedback_on_the_latest_answer_once(store: ConversationStore) -> None:
    first = bot_answer(store)
    second = bot_answer(store, first.conversation_id)
    cid = first.conversation_id
    with pytest.raises(NotTheLatestAnswer):
        store.record_feedback(cid, entry_id=first.id, value=Feedback.HELPFUL, expect=State.BOT,
                              escalation=None)  # fmt: skip
    conversation, judged = store.record_feedback(
        cid, entry_id=second.id, value=Feedback.HELPFUL, expect=State.BOT, escalation=None
    )
    assert judged.feedback is Feedback.HELPFUL and conversation.state is State.BOT
    with pytest.raises(NotTheLatestAnswer, match="feedback already"):
        store.record_feedback(cid, entry_id=second.id, value=Feedback.NOT_HELPFUL,
                              expect=State.BOT, escalation=None)  # fmt: skip
    assert events(store, cid)[-1] == FeedbackGiven(entry=second.id, value=Feedback.HELPFUL)
    assert [m.feedback for m in messages(store, cid) if m.author is Author.BOT] == [
        None, Feedback.HELPFUL,
    ]  # fmt: skip


def test_not_helpful_escalates_in_the_same_write(store: ConversationStore) -> None:
    answer = bot_answer(store)
    conversation, _ = store.record_feedback(
        answer.conversation_id,
        entry_id=answer.id,
        value=Feedback.NOT_HELPFUL,
        expect=State.BOT,
        escalation=Escalation(reason=Reason.NOT_HELPFUL, top_probability=0.899),
    )
    assert (conversation.state, conversation.reason) == (State.WAITING, Reason.NOT_HELPFUL)
    assert [type(e) for e in events(store, answer.conversation_id)][-2:] == [
        FeedbackGiven, Escalated,
    ]  # fmt: skip


# -- claims and the agent's moves -----------------------------------------------------------------


def test_claim_reply_resolve(store: ConversationStore) -> None:
    conversation_id = waiting(store)
    result = store.claim(conversation_id, agent="ana", expect=State.WAITING)
    assert result.won and result.conversation.state is State.CLAIMED
    second = store.claim(conversation_id, agent="ben", expect=State.WAITING)
    assert not second.won and second.conversation.agent == "ana"
    reply = store.reply(conversation_id, agent="ana", expect=State.CLAIMED, text="No fee.")
    assert (reply.author, reply.agent, reply.text) == (Author.AGENT, "ana", "No fee.")
    resolved = store.release(conversation_id, agent="ana", expect=State.CLAIMED,
                             to=State.RESOLVED, event=Resolved(agent="ana"))  # fmt: skip
    assert (resolved.state, resolved.agent) == (State.RESOLVED, "ana")
    assert store.queue(agent="ana") == []
    assert events(store, conversation_id)[1:] == [Claimed(agent="ana"), Resolved(agent="ana")]


def test_the_same_reply_twice_at_once_is_written_once(
    store: ConversationStore, clock: FakeClock
) -> None:
    """Two browser tabs of one agent held the same kept reply and both pressed Enter: the
    customer got it twice. Identical, from the same agent, with nothing between and within
    `SAME_REPLY_S`, it is the one reply; later, or after anything else, it is a new one."""
    conversation_id = claimed(store, "ana")

    def reply(text: str = "Refunded today.") -> ChatMessage:
        return store.reply(conversation_id, agent="ana", expect=State.CLAIMED, text=text)

    first = reply()
    clock.advance(SAME_REPLY_S - 1)
    assert reply().id == first.id
    assert reply("Refunded today!").id != first.id  # Other words: another reply.
    assert reply().id != first.id  # Not the latest one any more.
    clock.advance(SAME_REPLY_S + 1)
    last = messages(store, conversation_id)[-1]
    assert reply().id != last.id  # The same words later: said again on purpose.
    sent = [m.text for m in messages(store, conversation_id) if m.author is Author.AGENT]
    assert sent == ["Refunded today.", "Refunded today!", "Refunded today.", "Refunded today."]


def test_only_the_owner_writes(store: ConversationStore) -> None:
    conversation_id = claimed(store, "ana")
    with pytest.raises(StaleState, match="claimed by ana"):
        store.reply(conversation_id, agent="ben", expect=State.CLAIMED, text="hi")
    with pytest.raises(StaleState):
        store.release(conversation_id, agent="ben", expect=State.CLAIMED, to=State.BOT,
                      event=HandedBack(agent="ben"))  # fmt: skip
    assert store.conversation(conversation_id).agent == "ana"


def test_a_sent_passage_keeps_its_source_and_text(store: ConversationStore) -> None:
    conversation_id = claimed(store)
    text = "If the station is full, dock at the nearest one; no late fee applies."
    for _ in range(2):
        store.reply(conversation_id, agent="ana", expect=State.CLAIMED, text=text,
                    passage_id="late-return", passage_title="Late returns")  # fmt: skip
    sent = messages(store, conversation_id)[-1]
    assert (sent.text, sent.source) == (text, "Late returns (late-return)")


def test_hand_back_and_release(store: ConversationStore, clock: FakeClock) -> None:
    back = claimed(store)
    conversation = store.release(back, agent="ana", expect=State.CLAIMED, to=State.BOT,
                                 event=HandedBack(agent="ana"))  # fmt: skip
    assert (conversation.state, conversation.agent, conversation.waiting_since) == (
        State.BOT, None, None,
    )  # fmt: skip
    released = claimed(store)
    since = store.conversation(released).waiting_since
    clock.advance(600)
    conversation = store.release(released, agent="ana", expect=State.CLAIMED, to=State.WAITING,
                                 event=Released(agent="ana"))  # fmt: skip
    assert (conversation.state, conversation.agent) == (State.WAITING, None)
    assert conversation.waiting_since == since  # Back at its old place in the queue.
    assert [item.conversation_id for item in store.queue()] == [released]


# -- pending questions and leases -----------------------------------------------------------------


def test_leases_take_the_oldest_first_and_one_worker_at_a_time(
    store: ConversationStore, clock: FakeClock
) -> None:
    questions = [ask(store, f"question {n}") for n in range(5)]
    taken = store.lease_questions(worker=W1, limit=3, lease_s=30)
    assert [q.id for q in taken] == [q.id for q in questions[:3]]
    assert [q.text for q in taken] == ["question 0", "question 1", "question 2"]
    assert all(q.attempts == 1 and q.lease_owner == W1 for q in taken)
    assert taken[0].lease_until == START.replace(second=30)
    rest = store.lease_questions(worker=W2, limit=10, lease_s=30)
    assert [q.id for q in rest] == [q.id for q in questions[3:]]
    assert store.lease_questions(worker=W2, limit=10, lease_s=30) == []
    assert store.next_lease_expiry() == 30.0


def test_an_expired_lease_passes_to_another_worker_who_alone_may_decide(
    store: ConversationStore, clock: FakeClock
) -> None:
    question = ask(store, "charged twice?")
    [mine] = store.lease_questions(worker=W1, limit=1, lease_s=30)
    clock.advance(29)
    assert store.lease_questions(worker=W2, limit=1, lease_s=30) == []
    clock.advance(1)
    [theirs] = store.lease_questions(worker=W2, limit=1, lease_s=30)
    assert (theirs.id, theirs.attempts, theirs.lease_owner) == (question.id, 2, W2)
    with pytest.raises(LeaseLost):
        store.record_decision(mine.id, worker=W1, expect=State.BOT, decision=answered(),
                              answer=True, escalation=None)  # fmt: skip
    result = store.record_decision(theirs.id, worker=W2, expect=State.BOT, decision=answered(),
                                   answer=True, escalation=None)  # fmt: skip
    assert result.outcome == "answered"
    with pytest.raises(LeaseLost):  # Settled: nobody decides it again.
        store.record_decision(theirs.id, worker=W2, expect=State.BOT, decision=answered(),
                              answer=True, escalation=None)  # fmt: skip
    bots = [m for m in messages(store, question.conversation_id) if m.author is Author.BOT]
    assert len(bots) == 1 and len(store.decisions(question.conversation_id)) == 1


def test_the_bot_backlog_counts_what_no_bot_holds_and_its_oldest_wait(
    store: ConversationStore, clock: FakeClock
) -> None:
    """What `helpdesk doctor` reports: questions no bot has taken (or whose lease ran out)."""
    assert store.bot_backlog() == (0, None)
    first = ask(store, "first?")
    clock.advance(40)
    ask(store, "second?")
    clock.advance(5)
    assert store.bot_backlog() == (2, 45.0)
    [taken] = store.lease_questions(worker=W1, limit=1, lease_s=30)
    assert taken.id == first.id
    assert store.bot_backlog() == (1, 5.0)  # The first is held: the second is the oldest left.
    clock.advance(30)  # The lease runs out: nobody holds the first any more.
    assert store.bot_backlog() == (2, 75.0)
    [again] = store.lease_questions(worker=W2, limit=1, lease_s=30)
    store.record_decision(again.id, worker=W2, expect=State.BOT, decision=answered(),
                          answer=True, escalation=None)  # fmt: skip
    assert store.bot_backlog() == (1, 35.0)


def test_a_heartbeat_keeps_the_lease(store: ConversationStore, clock: FakeClock) -> None:
    question = ask(store, "charged twice?")
    store.lease_questions(worker=W1, limit=1, lease_s=30)
    clock.advance(20)
    assert store.extend_leases(worker=W1, question_ids=[question.id], lease_s=30) == [question.id]
    assert store.extend_leases(worker=W2, question_ids=[question.id], lease_s=30) == []
    clock.advance(20)
    assert store.lease_questions(worker=W2, limit=1, lease_s=30) == []


def test_released_leases_go_back_uncounted(store: ConversationStore) -> None:
    question = ask(store, "charged twice?")
    store.lease_questions(worker=W1, limit=1, lease_s=30)
    assert store.release_leases(worker=W2, question_ids=[question.id]) == 0
    assert store.release_leases(worker=W1, question_ids=[question.id]) == 1
    [again] = store.lease_questions(worker=W2, limit=1, lease_s=30)
    assert again.attempts == 1


def test_a_decision_answers_and_is_kept_whole(store: ConversationStore) -> None:
    question = ask(store, "charged twice?")
    [leased] = store.lease_questions(worker=W1, limit=1, lease_s=30)
    decision = answered()
    result = store.record_decision(leased.id, worker=W1, expect=State.BOT, decision=decision,
                                   answer=True, escalation=None)  # fmt: skip
    assert result.outcome == "answered" and result.conversation is not None
    assert result.conversation.pending == 0
    [stored] = store.decisions(question.conversation_id)
    assert stored.decision == decision  # Candidate texts and all, exactly as judged.
    assert (stored.message_id, stored.worker) == (question.id, W1)
    assert store.decision(stored.id) == stored == store.latest_decision(question.conversation_id)
    entries = store.entries(question.conversation_id)
    assert [type(e) for e in entries] == [ChatMessage, ChatEvent, ChatMessage]
    assert isinstance(entries[1], ChatEvent)
    assert entries[1].event == Decided(decision=stored.id, question_entry=question.id,
                                       outcome="answered")  # fmt: skip
    bot = entries[2]
    assert isinstance(bot, ChatMessage) and bot.decision_id == stored.id
    assert decision.answer is not None and bot.text == decision.answer.text
    assert bot.source == "Charged twice for one ride (card-charged-twice)"
    assert not store.entries(question.conversation_id)[0].pending  # type: ignore[union-attr]


def test_a_decision_escalates(store: ConversationStore) -> None:
    question = ask(store, "No free docks, will I pay a late fee?")
    [leased] = store.lease_questions(worker=W1, limit=1, lease_s=30)
    decision = escalated()
    result = store.record_decision(
        leased.id, worker=W1, expect=State.BOT, decision=decision, answer=False,
        escalation=Escalation(reason=Reason.LOW_SCORE, top_probability=decision.top_probability,
                              question_entry=question.id, question=question.text),
    )  # fmt: skip
    assert result.outcome == "escalated"
    [item] = store.queue()
    assert (item.question, item.reason) == (question.text, Reason.LOW_SCORE)
    assert [g.question for g in store.content_gaps()] == [question.text]


def test_a_decision_for_a_person_is_kept_unsaid(store: ConversationStore) -> None:
    question = ask(store, "charged twice?")
    [leased] = store.lease_questions(worker=W1, limit=1, lease_s=30)
    store.escalate(question.conversation_id, expect=State.BOT,
                   escalation=Escalation(reason=Reason.CUSTOMER_ASKED))  # fmt: skip
    with pytest.raises(StaleState):  # The worker read `bot`; the customer moved first.
        store.record_decision(leased.id, worker=W1, expect=State.BOT, decision=answered(),
                              answer=True, escalation=None)  # fmt: skip
    result = store.record_decision(leased.id, worker=W1, expect=State.WAITING,
                                   decision=answered(), answer=False, escalation=None)  # fmt: skip
    assert result.outcome == "kept"
    assert [m.author for m in messages(store, question.conversation_id)] == [Author.CUSTOMER]
    assert len(store.decisions(question.conversation_id)) == 1


def test_a_question_settled_without_a_decision(store: ConversationStore) -> None:
    question = ask(store, "charged twice?")
    [leased] = store.lease_questions(worker=W1, limit=1, lease_s=30)
    result = store.record_decision(
        leased.id, worker=W1, expect=State.BOT, decision=None, answer=False,
        escalation=Escalation(reason=Reason.BOT_FAILED, question_entry=question.id,
                              question=question.text),
    )  # fmt: skip
    assert result.outcome == "escalated" and result.decision is None
    assert store.decisions(question.conversation_id) == []
    assert store.conversation(question.conversation_id).reason is Reason.BOT_FAILED


# -- reading --------------------------------------------------------------------------------------


def test_pages_of_a_long_log_and_what_lies_before(store: ConversationStore) -> None:
    conversation_id = claimed(store)
    for number in range(20):
        store.reply(conversation_id, agent="ana", expect=State.CLAIMED, text=f"reply {number}")
    everything = store.entries(conversation_id)
    assert len(everything) == 23  # Question, escalated, claimed, 20 replies.
    newest = store.entries(conversation_id, limit=5)
    assert newest == everything[-5:]
    before = store.entries(conversation_id, before_id=newest[0].id, limit=5)
    assert before == everything[-10:-5]
    assert store.count_entries(conversation_id, before_id=newest[0].id) == 18
    assert store.entries(conversation_id, after_id=everything[-3].id) == everything[-2:]


def test_pages_do_not_count_bookkeeping(store: ConversationStore) -> None:
    answer = bot_answer(store)
    assert store.count_entries(answer.conversation_id, before_id=answer.id + 1) == 2


def test_changes_since_a_cursor(store: ConversationStore) -> None:
    first = ask(store, "one")
    cursor = store.changes(after=0).cursor
    second = ask(store, "two")
    ask(store, "three", first.conversation_id)
    changes = store.changes(after=cursor)
    assert changes.conversation_ids == (first.conversation_id, second.conversation_id)
    assert store.changes(after=changes.cursor).conversation_ids == ()


def test_conversations_in_keyset_pages_and_by_state(store: ConversationStore) -> None:
    ids = [store.create_conversation().id for _ in range(5)]
    waiting_id = waiting(store)
    assert [c.id for c in store.conversations(limit=3)] == ids[:3]
    assert [c.id for c in store.conversations(after_id=ids[2], limit=3)] == [*ids[3:], waiting_id]
    assert [c.id for c in store.conversations(state=State.WAITING)] == [waiting_id]


def test_the_change_feed_sees_other_connections_commits(
    store: ConversationStore, backend: Backend
) -> None:
    feed = store.open_feed()
    try:
        assert feed.wait(0.0) is False
        other = backend.open()
        try:
            other.create_conversation()
        finally:
            other.close()
        assert feed.wait(5.0) is True
        assert feed.wait(0.0) is False  # Reported once.
    finally:
        feed.close()


# -- the agent console: notes, read markers, the queue in parts, the team, search -----------------


def test_a_note_is_a_typed_event_that_leaves_the_state_alone(store: ConversationStore) -> None:
    conversation_id = claimed(store)
    before = store.conversation(conversation_id)
    note = store.add_note(conversation_id, agent="bo", text="VIP: refund without asking [b]x[/b]")
    assert note.event == Note(agent="bo", text="VIP: refund without asking [b]x[/b]")
    after = store.conversation(conversation_id)
    assert (after.state, after.agent) == (State.CLAIMED, "ana")  # Any agent, any owner.
    assert after.last_entry == note.id > before.last_entry
    assert store.entries(conversation_id)[-1] == note
    assert all(message.id != note.id for message in messages(store, conversation_id))
    with pytest.raises(ConversationNotFound):
        store.add_note(42, agent="bo", text="hello")


def test_read_markers_only_move_forward_one_per_agent(
    store: ConversationStore, backend: Backend
) -> None:
    conversation_id = claimed(store)
    [item] = store.queue(agent="ana")
    first_question = item.last_customer_entry
    assert first_question > 0 and item.read_entry == 0 and item.unread
    store.mark_read(conversation_id, agent="ana", entry_id=store.last_entry_id())
    [item] = store.queue(agent="ana")
    assert not item.unread and item.read_entry == store.last_entry_id()

    # A late write from another host of the same agent never moves the marker back.
    other = backend.open()
    try:
        other.mark_read(conversation_id, agent="ana", entry_id=first_question - 1)
    finally:
        other.close()
    assert store.queue(agent="ana")[0].read_entry == store.last_entry_id()

    _, again = store.add_customer_message(
        conversation_id, "Still there?", expect=State.CLAIMED, to=State.CLAIMED, pending=False
    )
    [item] = store.queue(agent="ana")
    assert (item.last_customer_entry, item.unread) == (again.id, True)
    # An agent's reply or a note is not the customer writing again.
    store.mark_read(conversation_id, agent="ana", entry_id=again.id)
    store.reply(conversation_id, agent="ana", expect=State.CLAIMED, text="Yes!")
    store.add_note(conversation_id, agent="bo", text="checking")
    assert not store.queue(agent="ana")[0].unread
    # Markers are per agent: bo has read nothing.
    released = store.release(conversation_id, agent="ana", expect=State.CLAIMED,
                             to=State.WAITING, event=Released(agent="ana"))  # fmt: skip
    assert released.state is State.WAITING
    assert store.queue(agent="bo")[0].unread and not store.queue(agent="ana")[0].unread
    with pytest.raises(ConversationNotFound):
        store.mark_read(42, agent="ana", entry_id=1)


def test_queue_items_are_the_queue_s_rows_among_some_ids(
    store: ConversationStore, clock: FakeClock
) -> None:
    first, second, third, fourth = (waiting(store) for _ in range(4))
    store.claim(second, agent="ana", expect=State.WAITING)
    store.claim(third, agent="bo", expect=State.WAITING)
    unknown = 999
    items = store.queue_items([first, second, third, fourth, unknown], agent="ana")
    whole = {item.conversation_id: item for item in store.queue(agent="ana")}
    assert {item.conversation_id for item in items} == {first, second, fourth}
    assert all(item == whole[item.conversation_id] for item in items)
    assert {i.conversation_id for i in store.queue_items([second, third], agent=None)} == set()
    assert store.queue_items([], agent="ana") == []
    many = store.queue_items([first] * 1200 + list(range(1000, 2200)), agent="ana")
    assert [item.conversation_id for item in many] == [first]


def test_claims_lists_every_agents_claims_by_agent(
    store: ConversationStore, clock: FakeClock
) -> None:
    first, second, third, _ = (waiting(store) for _ in range(4))
    store.claim(third, agent="bo", expect=State.WAITING)
    clock.advance(60)
    store.claim(first, agent="ana", expect=State.WAITING)
    clock.advance(60)
    store.claim(second, agent="ana", expect=State.WAITING)
    assert [(c.agent, c.conversation_id) for c in store.claims()] == [
        ("ana", first), ("ana", second), ("bo", third),
    ]  # fmt: skip
    assert store.claims()[1].claimed_at == START.replace(minute=2)
    store.release(first, agent="ana", expect=State.CLAIMED, to=State.RESOLVED,
                  event=Resolved(agent="ana"))  # fmt: skip
    assert [c.conversation_id for c in store.claims()] == [second, third]


def test_search_finds_messages_literally_ignoring_case(
    store: ConversationStore, clock: FakeClock
) -> None:
    helmet = ask(store, "Where is my HELMET? 100% lost_it").conversation_id
    clock.advance(1)
    straße = ask(store, "Die STRASSE ist gesperrt").conversation_id
    clock.advance(1)
    later = ask(store, "a helmet question too").conversation_id
    clock.advance(1)
    reply_only = claimed(store)
    store.reply(reply_only, agent="ana", expect=State.CLAIMED, text="Your helmet is at dock 4")
    assert [h.conversation_id for h in store.search("helmet")] == [reply_only, later, helmet]
    hit = store.search("helmet")[0]
    assert (hit.text, hit.state, hit.agent) == ("Your helmet is at dock 4", State.CLAIMED, "ana")
    assert [h.conversation_id for h in store.search("straße")] == [straße]  # Full case folding.
    assert [h.conversation_id for h in store.search("100%")] == [helmet]
    assert store.search("1%0") == [] and store.search("lost_") != []  # No wildcards.
    assert store.search("lost%") == [] and store.search("hel_et") == []
    assert [h.conversation_id for h in store.search("lost_it")] == [helmet]
    assert [h.conversation_id for h in store.search("helmet", limit=1)] == [reply_only]
    assert [h.conversation_id for h in store.search("helmet", state=State.BOT)] == [later, helmet]
    assert len(store.search("")) == 4  # Every conversation with a message, newest first.

    # The newest matching message stands for its conversation; agents' notes are searched too
    # (`tests/store/test_search_notes.py`), events are not.
    clock.advance(1)
    _, newer = store.add_customer_message(helmet, "helmet found, thanks", expect=State.BOT,
                                          to=State.BOT, pending=True)  # fmt: skip
    hits = {h.conversation_id: h.entry_id for h in store.search("helmet")}
    assert hits[helmet] == newer.id


def test_last_entry_id_is_where_changes_start(store: ConversationStore) -> None:
    assert store.last_entry_id() == 0
    first = ask(store, "one")
    assert store.last_entry_id() == first.id
    cursor = store.last_entry_id()
    second = ask(store, "two")
    assert store.changes(after=cursor).conversation_ids == (second.conversation_id,)


def test_counting_earlier_entries_can_stop_at_a_limit(store: ConversationStore) -> None:
    conversation_id = claimed(store)
    for n in range(30):
        store.reply(conversation_id, agent="ana", expect=State.CLAIMED, text=f"reply {n}")
    last = store.last_entry_id()
    total = store.count_entries(conversation_id, before_id=last + 1)
    assert total == 33  # Question, escalation, claim, 30 replies.
    assert store.count_entries(conversation_id, before_id=last + 1, limit=10) == 10
    assert store.count_entries(conversation_id, before_id=last + 1, limit=100) == 33
