"""A customer who types only "talk to a person" (or "agent", "转人工", ...) while the bot has the
conversation gets what Ctrl+T gives: reason `customer-asked` and its notice, with the question
they asked before. The bot judged those words and escalated them as `no-passages`, and the
customer read "The bot could not answer this from the help center". A question that mentions a
person is still the bot's, and with a person on the conversation it is a message like any other.
On every backend (a real SQLite file, and PostgreSQL), through the desk service."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chatbot.desk.models import ChatEvent, Escalated, State
from chatbot.desk.service import DeskService, asks_for_person
from chatbot.engine.models import Reason
from chatbot.notices import ASKED_NOTICE, notice
from tests.backends import Backend
from tests.desk.helpers import Q1, WORKER, answer_next
from tests.store.conftest import FakeClock

ASKING = [
    "talk to a person",
    "Talk to a person.",
    "  TALK   TO A PERSON!! ",
    "a human please",
    "A human, please",
    "agent",
    "Agent?",
    "an agent please",
    "real person",
    "speak to someone",
    "Can I speak to someone?",
    "I'd like to talk to a human, please",
    "I want to speak with a real person",
    "hi, can I talk to a person please",
    "operator",
    "representative",
    "customer service",
    "get me a human",
    "transfer me to an agent",
    "ＡＧＥＮＴ",  # Full-width.
    "人工",
    "转人工",
    "人工客服",
    "真人",
    "找客服",
    "转 人工！",
    "请帮我转人工，谢谢",
    "我要人工客服",
]
NOT_ASKING = [
    "Can an agent refund me?",
    "talk to a person about my refund",
    "I was charged twice, can I get my money back?",
    "I want a refund",
    "How do I contact support?",
    "Is the agent fee refundable?",
    "help",
    "someone stole my bike",
    "human error on my bill",
    "hello",
    "",
    "?!",
    "人工费用是多少？",
    "客服电话是多少",
    "你是真人吗",
    "agent " * 40,
]


@pytest.mark.parametrize("text", ASKING)
def test_a_request_for_a_person(text: str) -> None:
    assert asks_for_person(text)


@pytest.mark.parametrize("text", NOT_ASKING)
def test_not_a_request_for_a_person(text: str) -> None:
    assert not asks_for_person(text)


@pytest.fixture
def desk(backend: Backend) -> Iterator[DeskService]:
    service = backend.service(FakeClock(), max_attempts=2)
    yield service
    service.close()


def escalations(desk: DeskService, conversation_id: int) -> list[Escalated]:
    return [
        e.event
        for e in desk.entries(conversation_id)
        if isinstance(e, ChatEvent) and isinstance(e.event, Escalated)
    ]


def test_typing_talk_to_a_person_does_what_ctrl_t_does(desk: DeskService) -> None:
    cid = desk.ask(None, Q1).conversation.id
    answer_next(desk)
    asked = desk.ask(cid, "Talk to a person, please!")
    assert not asked.message.pending  # Nothing for the bot: it would say "no-passages".
    assert desk.lease(WORKER, limit=5, lease_s=30) == []
    conversation = desk.conversation(cid)
    assert (conversation.state, conversation.reason) == (State.WAITING, Reason.CUSTOMER_ASKED)
    [escalated] = escalations(desk, cid)
    assert notice(escalated, reader="customer") == ASKED_NOTICE
    # As Ctrl+T: the person takes up the question asked before, with its decision's score.
    question = desk.messages(cid)[0]
    assert escalated.question_entry == question.id
    assert escalated.top_probability == pytest.approx(0.899)
    [item] = desk.queue()
    assert (item.conversation_id, item.question, item.reason) == (cid, Q1, Reason.CUSTOMER_ASKED)
    # "Talk to a person" is no content gap (nor is the question before it: the bot answered it).
    assert desk.content_gaps() == []


def test_asking_for_a_person_first_waits_for_their_question(desk: DeskService) -> None:
    asked = desk.ask(None, "转人工")
    cid = asked.conversation.id
    assert not asked.message.pending
    conversation = desk.conversation(cid)
    assert (conversation.state, conversation.reason) == (State.WAITING, Reason.CUSTOMER_ASKED)
    assert conversation.locale == "zh"
    [escalated] = escalations(desk, cid)
    assert escalated.question_entry is None  # As Ctrl+T before writing anything.
    assert desk.content_gaps() == []
    # What they write next, waiting, is the question the person takes up.
    then = desk.ask(cid, "我的车锁打不开")
    [item] = desk.queue()
    assert item.question_entry == then.message.id


def test_a_question_that_mentions_an_agent_goes_to_the_bot(desk: DeskService) -> None:
    cid = desk.ask(None, Q1).conversation.id
    answer_next(desk)
    asked = desk.ask(cid, "Can an agent refund me?")
    assert asked.message.pending
    assert desk.conversation(cid).state is State.BOT
    assert escalations(desk, cid) == []


@pytest.mark.parametrize("state", [State.WAITING, State.CLAIMED])
def test_with_a_person_on_it_it_is_a_message(desk: DeskService, state: State) -> None:
    cid = desk.ask(None, "agent").conversation.id
    if state is State.CLAIMED:
        assert desk.claim(cid, agent="ana").won
    asked = desk.ask(cid, "agent")
    assert not asked.message.pending
    assert desk.conversation(cid).state is state
    assert len(escalations(desk, cid)) == 1  # The first one only.


def test_a_resolved_conversation_goes_to_the_queue_again(desk: DeskService) -> None:
    """Writing in a resolved conversation hands it to the bot: a request for a person there is
    one, and the earlier request is not taken for a question."""
    cid = desk.ask(None, "a human please").conversation.id
    assert desk.claim(cid, agent="ana").won
    desk.resolve(cid, agent="ana")
    desk.ask(cid, "real person")
    conversation = desk.conversation(cid)
    assert (conversation.state, conversation.reason) == (State.WAITING, Reason.CUSTOMER_ASKED)
    assert [e.question_entry for e in escalations(desk, cid)] == [None, None]
    assert desk.content_gaps() == []
