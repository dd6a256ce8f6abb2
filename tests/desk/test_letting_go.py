"""An agent letting go never strands what the customer wrote: a resolve refuses while the
customer's newest message is one the agent has not read (a hand-back too), and a hand-back gives
the bot the customer's last message when nobody answered it (on every backend)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chatbot.desk.models import Author, State
from chatbot.desk.service import DeskService, WroteMeanwhile
from chatbot.desk.states import Move
from tests.backends import Backend
from tests.desk.helpers import Q1, Q2, WORKER, in_state, take
from tests.store.conftest import FakeClock, answered

MORE = "Actually, one more question about the late fee"


@pytest.fixture
def desk(backend: Backend) -> Iterator[DeskService]:
    service = backend.service(FakeClock(), max_attempts=2)
    yield service
    service.close()


def read_all(desk: DeskService, conversation_id: int, agent: str = "ana") -> None:
    """What the console does once the conversation is on the agent's screen."""
    desk.mark_read(conversation_id, agent=agent, entry_id=desk.entries(conversation_id)[-1].id)


def test_a_resolve_is_refused_while_the_customer_wrote_what_the_agent_has_not_read(
    desk: DeskService,
) -> None:
    conversation_id = in_state(desk, State.CLAIMED)
    read_all(desk, conversation_id)
    desk.ask(conversation_id, MORE)  # Stored before the agent's screen shows it.
    with pytest.raises(WroteMeanwhile, match="written again"):
        desk.resolve(conversation_id, agent="ana")
    assert desk.conversation(conversation_id).state is State.CLAIMED
    # Once the message is on the agent's screen, the same resolve goes through.
    read_all(desk, conversation_id)
    assert desk.resolve(conversation_id, agent="ana").state is State.RESOLVED


def test_what_another_agent_read_does_not_count(desk: DeskService) -> None:
    conversation_id = in_state(desk, State.CLAIMED)
    read_all(desk, conversation_id)
    desk.ask(conversation_id, MORE)
    read_all(desk, conversation_id, agent="ben")  # A colleague looking on.
    with pytest.raises(WroteMeanwhile):
        desk.resolve(conversation_id, agent="ana")


def test_a_resolve_without_a_console_is_not_checked(desk: DeskService) -> None:
    """An agent with no read marker (a script, a test) resolves as before."""
    conversation_id = in_state(desk, State.CLAIMED)
    desk.ask(conversation_id, MORE)
    assert desk.resolve(conversation_id, agent="ana").state is State.RESOLVED


def test_a_hand_back_gives_the_bot_the_customers_unanswered_message(desk: DeskService) -> None:
    conversation_id = in_state(desk, State.CLAIMED)
    asked = desk.ask(conversation_id, Q2)  # To the agent, who hands back without replying.
    assert not asked.message.pending
    assert desk.hand_back(conversation_id, agent="ana").state is State.BOT
    leased = take(desk)
    assert (leased.conversation_id, leased.id) == (conversation_id, asked.message.id)
    assert desk.record_decision(WORKER, leased, answered(Q2)).outcome == "answered"
    assert desk.messages(conversation_id)[-1].author is Author.BOT


def test_a_hand_back_is_refused_while_the_customer_wrote_what_the_agent_has_not_read(
    desk: DeskService,
) -> None:
    """The console quotes the message the bot will answer; one written after the quote went to
    the bot without the agent ever seeing it."""
    conversation_id = in_state(desk, State.CLAIMED)
    read_all(desk, conversation_id)
    desk.ask(conversation_id, MORE)
    with pytest.raises(WroteMeanwhile, match="read it, then hand back") as refused:
        desk.hand_back(conversation_id, agent="ana")
    assert refused.value.move is Move.HAND_BACK
    assert desk.conversation(conversation_id).state is State.CLAIMED
    read_all(desk, conversation_id)
    assert desk.hand_back(conversation_id, agent="ana").state is State.BOT


def test_a_hand_back_after_the_agents_reply_asks_the_bot_nothing(desk: DeskService) -> None:
    conversation_id = in_state(desk, State.CLAIMED)
    desk.ask(conversation_id, Q2)
    desk.reply(conversation_id, agent="ana", text="It takes five working days.")
    desk.hand_back(conversation_id, agent="ana")
    assert desk.lease(WORKER, limit=5, lease_s=30) == []


def test_a_hand_back_asks_the_bot_nothing_it_has_answered(desk: DeskService) -> None:
    """Claimed straight after the bot's answer: the customer's last message is answered."""
    asked = desk.ask(None, Q1)
    desk.record_decision(WORKER, take(desk), answered(Q1))
    conversation_id = asked.conversation.id
    assert desk.talk_to_person(conversation_id).escalated
    assert desk.claim(conversation_id, agent="ana").won
    desk.hand_back(conversation_id, agent="ana")
    assert desk.lease(WORKER, limit=5, lease_s=30) == []


def test_a_hand_back_gives_the_bot_a_question_it_decided_on_silently(desk: DeskService) -> None:
    """The bot was slow, the customer asked for a person, and its decision was kept silent: the
    customer never had an answer, so handed back, the question is the bot's again."""
    asked = desk.ask(None, Q2)
    leased = take(desk)
    conversation_id = asked.conversation.id
    assert desk.talk_to_person(conversation_id).escalated
    assert desk.claim(conversation_id, agent="ana").won
    assert desk.record_decision(WORKER, leased, answered(Q2)).outcome == "kept"
    desk.hand_back(conversation_id, agent="ana")
    again = take(desk)
    assert again.id == asked.message.id
    assert desk.record_decision(WORKER, again, answered(Q2)).outcome == "answered"
    assert desk.messages(conversation_id)[-1].author is Author.BOT
