"""The customer's side of issue 14 on every backend: a repeated question offers a person instead
of the same answer again, and a resolved conversation takes one 1–5 rating per resolution."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chatbot.desk.models import Author, ChatEvent, PersonOffered, Rated, State
from chatbot.desk.service import DeskService, RatingRefused, question_key
from chatbot.errors import HelpdeskError
from chatbot.notices import REPEAT_NOTICE, notice
from tests.backends import Backend
from tests.desk.helpers import Q1, Q2, WORKER, answer_next, in_state, take
from tests.store.conftest import FakeClock, answered, escalated


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def desk(backend: Backend, clock: FakeClock) -> Iterator[DeskService]:
    service = backend.service(clock, max_attempts=2)
    yield service
    service.close()


def events(desk: DeskService, conversation_id: int) -> list[ChatEvent]:
    return [e for e in desk.entries(conversation_id) if isinstance(e, ChatEvent)]


def test_question_key_ignores_case_spacing_and_punctuation() -> None:
    assert question_key("Can I get a REFUND?") == question_key("  can i   get a refund ")
    assert question_key("ＲＥＦＵＮＤ") == question_key("refund")  # Full-width letters too.
    assert question_key("Can I get a refund?") != question_key("Can I get a refund today?")


def test_the_same_question_again_offers_a_person_instead_of_the_same_answer(
    desk: DeskService,
) -> None:
    first = desk.ask(None, Q1)
    cid = first.conversation.id
    answer = answer_next(desk)
    again = desk.ask(cid, Q1.upper().replace(",", " ,  "))
    # Stored first, like any message, but not for the bot: nothing to lease, no second answer.
    assert not again.message.pending
    assert desk.lease(WORKER, limit=5, lease_s=30) == []
    last = desk.entries(cid)[-1]
    assert isinstance(last, ChatEvent) and last.event == PersonOffered(answer_entry=answer.id)
    assert last.id > again.message.id  # It follows the repeated question.
    assert notice(last.event, reader="customer") == REPEAT_NOTICE
    # The customer chooses: the bot still has the conversation, and a person is one move away.
    assert desk.conversation(cid).state is State.BOT
    assert desk.talk_to_person(cid).escalated


def test_the_same_question_asked_while_the_bot_judges_it_gets_one_answer(
    desk: DeskService,
) -> None:
    """Asked again before the first answer came (a slow Valen, an impatient customer), each was
    judged and the customer got the same answer twice."""
    first = desk.ask(None, Q1)
    cid = first.conversation.id
    again = desk.ask(cid, " " + Q1.lower())
    assert first.message.pending and not again.message.pending  # Stored, not judged again.
    [leased] = desk.lease(WORKER, limit=5, lease_s=30)
    assert leased.id == first.message.id
    assert desk.record_decision(WORKER, leased, answered(Q1)).outcome == "answered"
    customer, bot = (
        [m.id for m in desk.messages(cid) if m.author is author]
        for author in (Author.CUSTOMER, Author.BOT)
    )
    assert customer == [first.message.id, again.message.id] and len(bot) == 1
    assert desk.lease(WORKER, limit=5, lease_s=30) == []
    assert desk.ask(cid, Q2).message.pending  # Another question meanwhile is judged, as ever.


def test_a_new_question_or_one_that_escalated_is_judged_again(desk: DeskService) -> None:
    cid = desk.ask(None, Q1).conversation.id
    answer_next(desk)
    assert desk.ask(cid, Q2).message.pending  # Another question: the bot judges it.
    leased = take(desk)
    desk.record_decision(WORKER, leased, escalated(Q2))
    other = desk.ask(None, Q2).conversation.id
    # In another conversation the same words are a first question.
    assert desk.ask(other, Q1).message.pending
    assert not any(isinstance(e.event, PersonOffered) for e in events(desk, other))


def test_a_question_the_bot_escalated_is_not_an_answer_to_repeat(desk: DeskService) -> None:
    cid = desk.ask(None, Q2).conversation.id
    desk.record_decision(WORKER, take(desk), escalated(Q2))
    desk.claim(cid, agent="ana")
    desk.resolve(cid, agent="ana")
    assert desk.ask(cid, Q2).message.pending  # Reopened: the bot judges it, never answered it.


def test_a_resolved_conversation_takes_one_rating(desk: DeskService) -> None:
    cid = in_state(desk, State.RESOLVED)
    due = desk.rating_due(cid)
    assert due is not None
    rated = desk.rate(cid, rating=4)
    assert rated.event == Rated(rating=4, resolved_entry=due.id, agent="ana")
    assert desk.rating_due(cid) is None
    with pytest.raises(RatingRefused, match="rated already"):
        desk.rate(cid, rating=5)
    assert notice(rated.event, reader="agent") == "The customer rated the conversation 4 out of 5."
    # Writing again reopens it; once resolved again, the new resolution can be rated.
    desk.ask(cid, "one more thing")
    assert desk.rating_due(cid) is None
    desk.talk_to_person(cid)
    desk.claim(cid, agent="ben")
    desk.resolve(cid, agent="ben")
    assert desk.rate(cid, rating=2).event.agent == "ben"  # type: ignore[union-attr]


@pytest.mark.parametrize("state", [State.BOT, State.WAITING, State.CLAIMED])
def test_only_a_resolved_conversation_is_rated(desk: DeskService, state: State) -> None:
    cid = in_state(desk, state)
    assert desk.rating_due(cid) is None
    with pytest.raises(RatingRefused, match="only a resolved conversation"):
        desk.rate(cid, rating=5)


@pytest.mark.parametrize("rating", [0, 6, -1, True])
def test_a_rating_is_one_to_five(desk: DeskService, rating: int) -> None:
    cid = in_state(desk, State.RESOLVED)
    with pytest.raises(HelpdeskError, match="from 1 to 5"):
        desk.rate(cid, rating=rating)
    assert desk.rating_due(cid) is not None
