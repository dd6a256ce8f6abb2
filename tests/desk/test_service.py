"""The desk service on every backend: each move from each state, allowed or refused; feedback on
the latest answer only; pending questions, leases, poison questions and lost leases."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from chatbot.desk.models import Author, ChatEvent, Escalated, Feedback, Released, Reopened, State
from chatbot.desk.service import DeskService, FeedbackRefused
from chatbot.desk.states import Refused
from chatbot.engine.models import Reason
from chatbot.errors import HelpdeskError
from tests.backends import Backend
from tests.desk.helpers import Q1, Q2, WORKER, answer_next, in_state, take
from tests.store.conftest import FakeClock, answered


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def desk(backend: Backend, clock: FakeClock) -> Iterator[DeskService]:
    service = backend.service(clock, max_attempts=2)
    yield service
    service.close()


# -- every move through the service ---------------------------------------------------------------

Move = Callable[[DeskService, int], object]

MOVES: dict[str, Move] = {
    "ask": lambda d, c: d.ask(c, "one more thing"),
    "talk to a person": lambda d, c: d.talk_to_person(c),
    "claim": lambda d, c: d.claim(c, agent="ben"),
    "reply": lambda d, c: d.reply(c, agent="ana", text="Hello, I am here."),
    "resolve": lambda d, c: d.resolve(c, agent="ana"),
    "hand back": lambda d, c: d.hand_back(c, agent="ana"),
    "release": lambda d, c: d.release(c, agent="ana"),
}
# (state, move) -> the state after it, or "refused", or "no change" (a typed "not done" result).
EXPECTED: dict[tuple[State, str], State | str] = {
    (State.BOT, "ask"): State.BOT,
    (State.WAITING, "ask"): State.WAITING,
    (State.CLAIMED, "ask"): State.CLAIMED,
    (State.RESOLVED, "ask"): State.BOT,
    (State.BOT, "talk to a person"): State.WAITING,
    (State.WAITING, "talk to a person"): "no change",
    (State.CLAIMED, "talk to a person"): "no change",
    (State.RESOLVED, "talk to a person"): State.WAITING,
    (State.BOT, "claim"): "no change",
    (State.WAITING, "claim"): State.CLAIMED,
    (State.CLAIMED, "claim"): "no change",
    (State.RESOLVED, "claim"): "no change",
    **{
        (s, m): "refused"
        for s in (State.BOT, State.WAITING, State.RESOLVED)
        for m in ("reply", "resolve", "hand back", "release")
    },  # fmt: skip
    (State.CLAIMED, "reply"): State.CLAIMED,
    (State.CLAIMED, "resolve"): State.RESOLVED,
    (State.CLAIMED, "hand back"): State.BOT,
    (State.CLAIMED, "release"): State.WAITING,
}


@pytest.mark.parametrize(("state", "move"), sorted(EXPECTED, key=str))
def test_every_move_from_every_state(desk: DeskService, state: State, move: str) -> None:
    conversation_id = in_state(desk, state)
    before = desk.entries(conversation_id)
    expected = EXPECTED[(state, move)]
    if expected == "refused":
        with pytest.raises(Refused):
            MOVES[move](desk, conversation_id)
        assert desk.entries(conversation_id) == before  # Nothing written.
    elif expected == "no change":
        result = MOVES[move](desk, conversation_id)
        assert getattr(result, "won", getattr(result, "escalated", None)) is False
        assert desk.entries(conversation_id) == before
    else:
        MOVES[move](desk, conversation_id)
        assert desk.conversation(conversation_id).state is expected
        assert len(desk.entries(conversation_id)) > len(before)


@pytest.mark.parametrize("move", ["reply", "resolve", "hand back", "release"])
def test_another_agent_cannot_move_a_claimed_conversation(desk: DeskService, move: str) -> None:
    conversation_id = in_state(desk, State.CLAIMED)
    by_ben: dict[str, Callable[[], object]] = {
        "reply": lambda: desk.reply(conversation_id, agent="ben", text="hi"),
        "resolve": lambda: desk.resolve(conversation_id, agent="ben"),
        "hand back": lambda: desk.hand_back(conversation_id, agent="ben"),
        "release": lambda: desk.release(conversation_id, agent="ben"),
    }
    with pytest.raises(Refused, match=f"conversation {conversation_id} is claimed by ana"):
        by_ben[move]()
    assert desk.conversation(conversation_id).agent == "ana"


@pytest.mark.parametrize("state", list(State))
def test_a_decision_speaks_only_while_the_bot_has_the_conversation(
    desk: DeskService, state: State
) -> None:
    conversation_id = in_state(desk, State.BOT)
    desk.ask(conversation_id, Q2)
    leased = take(desk)
    # The conversation moves on while the worker judges.
    if state is not State.BOT:
        desk.talk_to_person(conversation_id)
    if state in (State.CLAIMED, State.RESOLVED):
        desk.claim(conversation_id, agent="ana")
    if state is State.RESOLVED:
        desk.resolve(conversation_id, agent="ana")
    result = desk.record_decision(WORKER, leased, answered(Q2))
    assert result.outcome == ("answered" if state is State.BOT else "kept")
    assert desk.conversation(conversation_id).state is state
    assert len(desk.decisions(conversation_id)) == 2  # Kept for the agent all the same.
    bots = [m for m in desk.messages(conversation_id) if m.author is Author.BOT]
    assert len(bots) == (2 if state is State.BOT else 1)


# -- the customer's side --------------------------------------------------------------------------


def test_ask_stores_a_pending_question_first(desk: DeskService) -> None:
    result = desk.ask(None, Q1)
    assert result.message.pending and result.conversation.pending == 1
    assert result.conversation.state is State.BOT


def test_a_bad_question_is_refused_with_one_line(desk: DeskService) -> None:
    with pytest.raises(HelpdeskError, match="question is empty"):
        desk.ask(None, "   ")
    with pytest.raises(HelpdeskError, match="question has 2,001 characters; the limit is 2,000"):
        desk.ask(None, "x" * 2001)
    assert desk.conversations() == []


def test_writing_after_resolve_reopens_for_the_bot(desk: DeskService) -> None:
    conversation_id = in_state(desk, State.RESOLVED)
    result = desk.ask(conversation_id, Q2)
    assert result.conversation.state is State.BOT and result.message.pending
    entries = desk.entries(conversation_id)
    assert isinstance(entries[-2], ChatEvent) and entries[-2].event == Reopened()


def test_talk_to_a_person_queues_the_latest_question_with_its_score(desk: DeskService) -> None:
    conversation_id = in_state(desk, State.BOT)
    asked = desk.ask(conversation_id, Q2)
    desk.record_decision(WORKER, take(desk), answered(Q2))
    result = desk.talk_to_person(conversation_id)
    assert result.escalated and result.conversation.reason is Reason.CUSTOMER_ASKED
    [item] = desk.queue()
    assert (item.question, item.question_entry) == (Q2, asked.message.id)
    assert item.top_probability == pytest.approx(0.899)


def test_talk_to_a_person_while_the_bot_judges_keeps_its_decision_for_the_agent(
    desk: DeskService,
) -> None:
    asked = desk.ask(None, Q1)
    leased = take(desk)
    assert desk.talk_to_person(asked.conversation.id).escalated
    assert desk.record_decision(WORKER, leased, answered()).outcome == "kept"
    conversation = desk.conversation(asked.conversation.id)
    assert (conversation.state, conversation.pending) == (State.WAITING, 0)
    assert [m.author for m in desk.messages(asked.conversation.id)] == [Author.CUSTOMER]


# -- feedback (issue 14) --------------------------------------------------------------------------


def test_feedback_applies_to_the_latest_answer_only_and_once(desk: DeskService) -> None:
    first_asked = desk.ask(None, Q1)
    conversation_id = first_asked.conversation.id
    first = answer_next(desk)
    desk.ask(conversation_id, Q2)
    second = answer_next(desk, Q2)
    with pytest.raises(FeedbackRefused, match="latest answer only"):
        desk.feedback(conversation_id, entry_id=first.id, value=Feedback.HELPFUL)
    result = desk.feedback(conversation_id, entry_id=second.id, value=Feedback.HELPFUL)
    assert result.message.feedback is Feedback.HELPFUL and not result.escalated
    with pytest.raises(FeedbackRefused, match="feedback already"):
        desk.feedback(conversation_id, entry_id=second.id, value=Feedback.NOT_HELPFUL)
    judged = [m.feedback for m in desk.messages(conversation_id) if m.author is Author.BOT]
    assert judged == [None, Feedback.HELPFUL]
    assert desk.conversation(conversation_id).state is State.BOT


def test_not_helpful_escalates_with_its_own_reason_and_the_answers_question(
    desk: DeskService,
) -> None:
    conversation_id = desk.ask(None, Q1).conversation.id
    answer_next(desk)
    asked = desk.ask(conversation_id, Q2)
    second = answer_next(desk, Q2)
    result = desk.feedback(conversation_id, entry_id=second.id, value=Feedback.NOT_HELPFUL)
    assert result.escalated
    assert (result.conversation.state, result.conversation.reason) == (
        State.WAITING, Reason.NOT_HELPFUL,
    )  # fmt: skip
    [item] = desk.queue()
    assert (item.question, item.question_entry) == (Q2, asked.message.id)
    assert item.top_probability == pytest.approx(0.899)
    assert [g.reason for g in desk.content_gaps()] == [Reason.NOT_HELPFUL]


def test_not_helpful_when_a_person_has_it_only_records_the_verdict(desk: DeskService) -> None:
    conversation_id = desk.ask(None, Q1).conversation.id
    answer = answer_next(desk)
    desk.talk_to_person(conversation_id)
    result = desk.feedback(conversation_id, entry_id=answer.id, value=Feedback.NOT_HELPFUL)
    assert not result.escalated and result.message.feedback is Feedback.NOT_HELPFUL
    escalations = [e for e in desk.entries(conversation_id)
                   if isinstance(e, ChatEvent) and isinstance(e.event, Escalated)]  # fmt: skip
    assert len(escalations) == 1


# -- the agent's side -----------------------------------------------------------------------------


def test_a_reply_needs_text_and_at_most_a_passages_length(desk: DeskService) -> None:
    conversation_id = in_state(desk, State.CLAIMED)
    with pytest.raises(HelpdeskError, match="needs some text"):
        desk.reply(conversation_id, agent="ana", text="  ")
    before = len(desk.entries(conversation_id))
    with pytest.raises(HelpdeskError, match="a reply is longer than 4000 characters"):
        desk.reply(conversation_id, agent="ana", text="x" * 4001)
    assert len(desk.entries(conversation_id)) == before
    assert desk.reply(conversation_id, agent="ana", text="x" * 4000).text == "x" * 4000


def test_release_claims_puts_an_agents_conversations_back(desk: DeskService) -> None:
    mine = [in_state(desk, State.CLAIMED) for _ in range(3)]
    desk.resolve(mine[1], agent="ana")
    assert desk.release_claims("ana") == [mine[0], mine[2]]
    assert [item.conversation_id for item in desk.queue()] == [mine[0], mine[2]]
    events = [e.event for e in desk.entries(mine[0]) if isinstance(e, ChatEvent)]
    assert events[-1] == Released(agent="ana")
    assert desk.release_claims("ana") == []


# -- the bot's side -------------------------------------------------------------------------------


def test_a_question_taken_too_often_goes_to_a_person(desk: DeskService, clock: FakeClock) -> None:
    asked = desk.ask(None, Q1)
    for worker in ("w1", "w2"):  # max_attempts=2: two workers took it and died.
        assert [q.id for q in desk.lease(worker, limit=1, lease_s=30)] == [asked.message.id]
        clock.advance(31)
    assert desk.lease("w3", limit=1, lease_s=30) == []
    conversation = desk.conversation(asked.conversation.id)
    assert (conversation.state, conversation.reason, conversation.pending) == (
        State.WAITING, Reason.BOT_FAILED, 0,
    )  # fmt: skip
    [gap] = desk.content_gaps()
    assert (gap.question, gap.reason) == (Q1, Reason.BOT_FAILED)


def test_an_engine_failure_escalates_with_valen_error(desk: DeskService) -> None:
    asked = desk.ask(None, Q1)
    result = desk.fail_question(WORKER, take(desk), reason=Reason.VALEN_ERROR)
    assert result.outcome == "escalated"
    assert desk.conversation(asked.conversation.id).reason is Reason.VALEN_ERROR


def test_a_worker_that_lost_its_lease_stores_nothing(desk: DeskService, clock: FakeClock) -> None:
    asked = desk.ask(None, Q1)
    stale = take(desk, "slow")
    clock.advance(31)
    fresh = take(desk, "fast")
    assert desk.record_decision("fast", fresh, answered()).outcome == "answered"
    assert desk.record_decision("slow", stale, answered()).outcome == "lost"
    assert desk.fail_question("slow", stale, reason=Reason.VALEN_ERROR).outcome == "lost"
    assert len(desk.decisions(asked.conversation.id)) == 1
    bots = [m for m in desk.messages(asked.conversation.id) if m.author is Author.BOT]
    assert len(bots) == 1


def test_pages_and_changes(desk: DeskService) -> None:
    conversation_id = in_state(desk, State.CLAIMED)
    for number in range(10):
        desk.reply(conversation_id, agent="ana", text=f"reply {number}")
    page = desk.page(conversation_id, limit=4)
    assert [e.text for e in page.entries] == [f"reply {n}" for n in range(6, 10)]  # type: ignore[union-attr]
    # Question, decided (not counted), answer, escalated, claimed, replies 0-5.
    assert page.earlier == 10
    older = desk.page(conversation_id, before_id=page.entries[0].id, limit=4)
    assert older.earlier == 6
    changes = desk.changes(after=0)
    assert changes.conversation_ids == (conversation_id,)
    assert desk.changes(after=changes.cursor).conversation_ids == ()


def test_an_agent_reopens_a_resolved_conversation_as_its_owner(desk: DeskService) -> None:
    conversation_id = in_state(desk, State.RESOLVED)
    result = desk.reopen(conversation_id, agent="bo")
    assert result.won
    assert (result.conversation.state, result.conversation.agent) == (State.CLAIMED, "bo")
    desk.reply(conversation_id, agent="bo", text="Following up: did the refund arrive?")
    assert desk.claimed_by("bo") == [conversation_id]
    for state in (State.BOT, State.WAITING, State.CLAIMED):
        with pytest.raises(Refused, match="cannot be reopened|claimed"):
            desk.reopen(in_state(desk, state), agent="bo")


def test_notes_by_any_agent_in_any_state_never_empty_or_huge(desk: DeskService) -> None:
    for state in State:
        conversation_id = in_state(desk, state)
        note = desk.add_note(conversation_id, agent="bo", text="Called them back.")
        assert isinstance(note, ChatEvent) and desk.conversation(conversation_id).state is state
    with pytest.raises(HelpdeskError, match="a note needs some text"):
        desk.add_note(conversation_id, agent="bo", text="  \n")
    with pytest.raises(HelpdeskError, match="longer than 4000"):
        desk.add_note(conversation_id, agent="bo", text="x" * 4001)
    with pytest.raises(HelpdeskError, match="agent's name"):
        desk.add_note(conversation_id, agent=" ", text="hello")


def test_search_by_number_puts_that_conversation_first(desk: DeskService) -> None:
    first = in_state(desk, State.RESOLVED)
    second = in_state(desk, State.RESOLVED)
    desk.reopen(second, agent="ana")
    desk.reply(second, agent="ana", text=f"See also conversation {first}")
    hits = desk.search(f"#{first}")
    assert [h.conversation_id for h in hits[:2]] == [first, second]
    assert hits[0].text == Q1  # The customer's latest question stands for it.
    assert [h.conversation_id for h in desk.search(str(first), state=State.CLAIMED)] == [second]
    assert desk.search("#99999") == [] and desk.search("9" * 40) == []


def test_a_number_is_found_standing_alone_not_inside_another(desk: DeskService) -> None:
    """`#12` found "12" in "2012" and "120 km" too: now only where no digit touches it (nor a
    decimal point or comma and a digit: "1.12", "12,50"), in messages and in notes; letters may
    ("ZQ12" is an order's number)."""
    said = {}
    for text in ("Order 12 is late", "Since 2012, 120 km", "Ticket ZQ12 open", "no 1 2 here",
                 "Version 1.12 paid 12,50 and 12.5", "It was ticket 12."):  # fmt: skip
        conversation = desk.ask(None, text).conversation.id
        said[conversation] = text
    noted = in_state(desk, State.CLAIMED)
    desk.add_note(noted, agent="ana", text="Same as #12, refunded")
    inside = in_state(desk, State.CLAIMED)
    desk.add_note(inside, agent="ana", text="Refund 1234 done")
    found = {hit.conversation_id for hit in desk.search("#12")}
    wanted = {c for c, text in said.items()
              if text in ("Order 12 is late", "Ticket ZQ12 open", "It was ticket 12.")}  # fmt: skip
    assert found - {12} == wanted | {noted}
    assert {h.conversation_id for h in desk.search("20")} - {20} == set()  # Only inside others.
    # Words that are not a number are found anywhere, as before.
    assert {h.conversation_id for h in desk.search("km")} == {
        c for c, text in said.items() if "km" in text
    }


def test_a_page_counts_what_lies_before_it_up_to_a_cap(desk: DeskService) -> None:
    from chatbot.desk.service import EARLIER_COUNTED

    conversation_id = in_state(desk, State.CLAIMED)
    for n in range(EARLIER_COUNTED + 150):
        desk.reply(conversation_id, agent="ana", text=f"reply {n}")
    newest = desk.page(conversation_id, limit=100)
    assert (newest.earlier, newest.earlier_exact) == (EARLIER_COUNTED, False)
    oldest = desk.page(conversation_id, before_id=newest.entries[0].id - 1000, limit=100)
    assert oldest.earlier_exact and oldest.earlier < EARLIER_COUNTED
